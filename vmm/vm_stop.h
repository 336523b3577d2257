/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Why a VM stopped (vm_request_stop(), vm.h): main() turns it into the
 * exit status. Apart from vm.h so that a vCPU thread (vcpu.h), below the
 * VM that runs it, can name the guest-caused ends it sees.
 */
#ifndef KVMLU_VMM_VM_STOP_H
#define KVMLU_VMM_VM_STOP_H

/* Bytes of a stop's message, with its NUL (vm->stop_msg). */
#define VM_STOP_MSG_MAX	256

enum vm_stop_reason {
	VM_STOP_NONE = 0,
	VM_STOP_REQUESTED,	/* `shutdown` control command */
	VM_STOP_SIGNAL,		/* SIGTERM / SIGINT */
	VM_STOP_GUEST_TRIPLE_FAULT,	/* KVM_EXIT_SHUTDOWN */
	VM_STOP_GUEST_RESET,	/* port 0xcf9, KVM_SYSTEM_EVENT_RESET */
	VM_STOP_GUEST_POWEROFF,	/* KVM_SYSTEM_EVENT_SHUTDOWN */
	VM_STOP_GUEST_CRASH,	/* KVM_SYSTEM_EVENT_CRASH */
	VM_STOP_INTERNAL_ERROR,	/* KVM_EXIT_INTERNAL_ERROR */
	VM_STOP_FAIL_ENTRY,	/* KVM_EXIT_FAIL_ENTRY */
	VM_STOP_VMM_ERROR,	/* the VMM itself failed (an ioctl, an odd exit) */
};

#endif /* KVMLU_VMM_VM_STOP_H */
