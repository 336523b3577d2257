/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM-wide KVM device state: the in-kernel PIC pair and IOAPIC, the PIT,
 * and the KVM clock. Captured once per VM while every vCPU is paused;
 * restored into the new VM after all its vCPUs have been restored (the
 * irqchip routes to LAPICs that must exist), the clock last of all so
 * the guest's time base is set closest to the moment it runs again.
 */
#ifndef KVMLU_VM_DEVICES_STATE_H
#define KVMLU_VM_DEVICES_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "include/kvmlu/kvm_uapi.h"

#define VM_DEVICES_HAVE_IRQCHIP	(1u << 0)
#define VM_DEVICES_HAVE_PIT	(1u << 1)
#define VM_DEVICES_HAVE_CLOCK	(1u << 2)
#define VM_DEVICES_HAVE_ALL	(VM_DEVICES_HAVE_IRQCHIP | VM_DEVICES_HAVE_PIT | \
				 VM_DEVICES_HAVE_CLOCK)

struct vm_devices_state {
	uint32_t have;			/* VM_DEVICES_HAVE_* */
	struct kvm_pic_state pic_master;
	struct kvm_pic_state pic_slave;
	struct kvm_ioapic_state ioapic;
	struct kvm_pit_state2 pit;
	struct kvm_clock_data clock;
	uint64_t clock_wall_ns;		/* CLOCK_REALTIME at KVM_GET_CLOCK */
};

/* Parts the VM has no device for (no KVM_CREATE_IRQCHIP/PIT2) are left out. */
int vm_devices_state_capture(int vm_fd, struct vm_devices_state *d,
			     char *err, size_t errlen);

/* The new VM must have every device d has; call after the vCPUs. */
int vm_devices_state_restore(int vm_fd, const struct vm_devices_state *d,
			     char *err, size_t errlen);

#endif /* KVMLU_VM_DEVICES_STATE_H */
