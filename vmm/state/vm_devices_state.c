// SPDX-License-Identifier: GPL-2.0
/*
 * Capture and restore of the VM-wide KVM devices (see vm_devices_state.h).
 * A VM created without an in-kernel irqchip or PIT answers ENXIO for
 * them; that part is then simply absent from the state, and a restore of
 * a state that has it into a VM that lacks it is refused by KVM's ENXIO.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <time.h>

#include "common/clock.h"
#include "common/err.h"
#include "vmm/state/vm_devices_state.h"

static int get_chip(int vm_fd, uint32_t id, void *out, size_t len)
{
	struct kvm_irqchip c = { .chip_id = id };

	if (ioctl(vm_fd, KVM_GET_IRQCHIP, &c) < 0)
		return -errno;
	memcpy(out, &c.chip, len);
	return 0;
}

static int set_chip(int vm_fd, uint32_t id, const void *in, size_t len)
{
	struct kvm_irqchip c = { .chip_id = id };

	memcpy(&c.chip, in, len);
	return ioctl(vm_fd, KVM_SET_IRQCHIP, &c) < 0 ? -errno : 0;
}

int vm_devices_state_capture(int vm_fd, struct vm_devices_state *d,
			     char *err, size_t errlen)
{
	int ret;

	memset(d, 0, sizeof(*d));
	ret = get_chip(vm_fd, KVM_IRQCHIP_PIC_MASTER, &d->pic_master, sizeof(d->pic_master));
	if (ret == 0) {
		ret = get_chip(vm_fd, KVM_IRQCHIP_PIC_SLAVE, &d->pic_slave, sizeof(d->pic_slave));
		if (ret == 0)
			ret = get_chip(vm_fd, KVM_IRQCHIP_IOAPIC, &d->ioapic, sizeof(d->ioapic));
		if (ret)
			return kvmlu_err(err, errlen, ret, "KVM_GET_IRQCHIP: %s",
					    strerror(-ret));
		d->have |= VM_DEVICES_HAVE_IRQCHIP;
	} else if (ret != -ENXIO) {
		return kvmlu_err(err, errlen, ret, "KVM_GET_IRQCHIP(PIC master): %s",
				    strerror(-ret));
	}
	if (ioctl(vm_fd, KVM_GET_PIT2, &d->pit) == 0)
		d->have |= VM_DEVICES_HAVE_PIT;
	else if (errno != ENXIO)
		return kvmlu_err(err, errlen, -errno, "KVM_GET_PIT2: %s", strerror(errno));
	/* Last: the clock is what the guest sees move, read closest to the pause end. */
	if (ioctl(vm_fd, KVM_GET_CLOCK, &d->clock) < 0)
		return kvmlu_err(err, errlen, -errno, "KVM_GET_CLOCK: %s", strerror(errno));
	d->clock_wall_ns = kvmlu_wall_ns();
	d->have |= VM_DEVICES_HAVE_CLOCK;
	return 0;
}

int vm_devices_state_restore(int vm_fd, const struct vm_devices_state *d,
			     char *err, size_t errlen)
{
	struct kvm_clock_data clk;
	int ret;

	if (d->have & VM_DEVICES_HAVE_IRQCHIP) {
		ret = set_chip(vm_fd, KVM_IRQCHIP_PIC_MASTER, &d->pic_master, sizeof(d->pic_master));
		if (ret == 0)
			ret = set_chip(vm_fd, KVM_IRQCHIP_PIC_SLAVE, &d->pic_slave,
				       sizeof(d->pic_slave));
		/* IOAPIC after the PICs: both drive the same GSIs 0-15. */
		if (ret == 0)
			ret = set_chip(vm_fd, KVM_IRQCHIP_IOAPIC, &d->ioapic, sizeof(d->ioapic));
		if (ret)
			return kvmlu_err(err, errlen, ret, "KVM_SET_IRQCHIP: %s",
					    strerror(-ret));
	}
	if ((d->have & VM_DEVICES_HAVE_PIT) && ioctl(vm_fd, KVM_SET_PIT2, &d->pit) < 0)
		return kvmlu_err(err, errlen, -errno, "KVM_SET_PIT2: %s", strerror(errno));
	if (!(d->have & VM_DEVICES_HAVE_CLOCK))
		return 0;
	/*
	 * With KVM_CLOCK_REALTIME KVM advances kvmclock by the wall time
	 * since the capture, exactly. Without it kvmclock resumes where it
	 * stopped: the guest falls behind by the pause (as with QEMU's
	 * stop/cont), never ahead. Adding the wall time ourselves (wall-ns)
	 * was tried and measured to run the witness's clock ahead of real
	 * time on the PVM hosts here, so wall-ns is only recorded, for the
	 * restore after a kexec to use with the new boot's clocks.
	 */
	memset(&clk, 0, sizeof(clk));
	clk.clock = d->clock.clock;
	clk.realtime = d->clock.realtime;
	clk.flags = d->clock.flags & KVM_CLOCK_REALTIME;
	if (ioctl(vm_fd, KVM_SET_CLOCK, &clk) < 0)
		return kvmlu_err(err, errlen, -errno, "KVM_SET_CLOCK %llu (flags 0x%x): %s",
				    (unsigned long long)clk.clock, clk.flags, strerror(errno));
	return 0;
}
