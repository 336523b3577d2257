/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control commands of the VM itself: status, pause, resume, checksum,
 * guest-verify, save-state, shutdown (docs/control-protocol.md). They
 * drive vm.c, the devices and vmm/state/; the dispatcher knows them only
 * through the table registered here. No state of their own.
 */
#ifndef KVMLU_VMM_VM_COMMANDS_H
#define KVMLU_VMM_VM_COMMANDS_H

/* Register the table (control_register()); before any server starts. */
int vm_commands_register(void);

#endif /* KVMLU_VMM_VM_COMMANDS_H */
