// SPDX-License-Identifier: GPL-2.0
/*
 * Guest TSC across a host kexec. The saved TSC offset of each vCPU was
 * relative to the old boot's host TSC; after the kexec the host TSC may
 * read anything (a reset, another calibration), so the offset is moved
 * such that the guest TSC continues from where it was by the wall time
 * that passed, the way Documentation/virt/kvm/devices/vcpu.rst
 * (KVM_VCPU_TSC_OFFSET) migrates a guest:
 *
 *   ofs_dst = ofs_src + (guest_dest - guest_src) * freq + (tsc_src - tsc_dest)
 *
 * guest_* are kvmclock ns (the restored clock already advanced by the wall
 * time through KVM_CLOCK_REALTIME or the state library's fallback), tsc_*
 * the host TSC read with each, freq the guest TSC rate. Runs once per
 * restore after a kexec (resume_apply(), the plan's new_boot), after
 * state_vm_restore() and before any vCPU runs.
 *
 * The rate itself (resume_tsc_rate_fit, before the state is
 * restored, after a kexec and at a live upgrade alike): the new kernel
 * calibrates the host TSC again and may find it a few hundred ppm off the
 * old figure, and a VMM before vm_set_tsc_rate() (vmm/vm.c) saved KVM's
 * early-calibration default, a rate its vCPU never ran at. KVM runs a
 * vCPU at another rate only with TSC scaling; without it (nested SVM under
 * TCG here) KVM_SET_TSC_KHZ of such a rate is EINVAL. Refusing the restore
 * for that would lose the VM over a calibration difference, so the vCPU
 * keeps this host's rate and the restore reports both figures. A refused
 * KVM_SET_TSC_KHZ is not harmless: KVM has already set the requested
 * rate as the vCPU's (what KVM_GET_TSC_KHZ reports) but not the TSC
 * multiplier that goes with it, which stays 0 in a vCPU whose creation
 * was refused its rate too; KVM's reckoning of the guest TSC then stands
 * still and kvmclock breaks (vm.c says how). So after a refusal the vCPU
 * is given a rate KVM accepts: its first one (the VM's default, the
 * host's own rate since vm_set_tsc_rate()), else the host's own
 * (KVM_SET_TSC_KHZ 0). Whatever KVM_GET_TSC_KHZ reports afterwards is
 * what the state and the next live upgrade carry.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/err.h"
#include "include/kvmlu/kvm_uapi.h"
#include "vmm/resume/resume.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

static int tsc_offset_set(int vcpu_fd, uint64_t off)
{
	struct kvm_device_attr a = {
		.group = KVM_VCPU_TSC_CTRL,
		.attr = KVM_VCPU_TSC_OFFSET,
		.addr = (uint64_t)(uintptr_t)&off,
	};

	return ioctl(vcpu_fd, KVM_SET_DEVICE_ATTR, &a);
}

int resume_tsc_rate_fit(struct vm *vm, struct state_vm *s, uint32_t *saved_khz,
			     uint32_t *now_khz, char *err, size_t errlen)
{
	*saved_khz = *now_khz = 0;
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		struct cpu_state *c = &s->cpus[i];
		int khz = ioctl(vm->vcpus[i].fd, KVM_GET_TSC_KHZ);

		if (khz <= 0)
			return kvmlu_err(err, errlen, khz < 0 ? -errno : -EINVAL,
				       "restore %s: vCPU %u: KVM_GET_TSC_KHZ returned %d", vm->name, i, khz);
		*saved_khz = c->tsc_khz;
		*now_khz = (uint32_t)khz;
		if (!c->tsc_khz || (uint32_t)khz == c->tsc_khz)
			continue;
		int first = khz;

		if (ioctl(vm->vcpus[i].fd, KVM_SET_TSC_KHZ, (unsigned long)c->tsc_khz) < 0) {
			if (errno != EINVAL)
				return kvmlu_err(err, errlen, -errno,
					       "restore %s: vCPU %u: KVM_SET_TSC_KHZ %u: %s",
					       vm->name, i, c->tsc_khz, strerror(errno));
			/* Refused: a rate KVM accepts, so that its multiplier is set. */
			if (ioctl(vm->vcpus[i].fd, KVM_SET_TSC_KHZ, (unsigned long)first) < 0) {
				if (errno != EINVAL)
					return kvmlu_err(err, errlen, -errno,
						       "restore %s: vCPU %u: KVM_SET_TSC_KHZ back to %d: %s",
						       vm->name, i, first, strerror(errno));
				if (ioctl(vm->vcpus[i].fd, KVM_SET_TSC_KHZ, 0UL) < 0)
					return kvmlu_err(err, errlen, -errno,
						       "restore %s: vCPU %u: KVM refused TSC rates %u and %d kHz, and the host's own (KVM_SET_TSC_KHZ 0): %s",
						       vm->name, i, c->tsc_khz, first, strerror(errno));
			}
		}
		/*
		 * Whatever KVM made of the request (scaled, refused, or kept the
		 * host rate within its tolerance), the state follows the rate the
		 * vCPU has now, so cpu_state_restore() does not ask again.
		 */
		khz = ioctl(vm->vcpus[i].fd, KVM_GET_TSC_KHZ);
		if (khz <= 0)
			return kvmlu_err(err, errlen, khz < 0 ? -errno : -EINVAL,
				       "restore %s: vCPU %u: KVM_GET_TSC_KHZ returned %d", vm->name, i, khz);
		c->tsc_khz = (uint32_t)khz;
		*now_khz = (uint32_t)khz;
	}
	return 0;
}

int resume_tsc_adjust(struct vm *vm, const struct state_vm *s, int64_t *shift,
			   bool *adjusted, char *err, size_t errlen)
{
	const struct kvm_clock_data *src = &s->devices.clock;
	struct kvm_clock_data dst;
	__int128 ticks;
	int64_t delta;

	*adjusted = false;
	*shift = 0;
	if (!(s->devices.have & VM_DEVICES_HAVE_CLOCK) || !(src->flags & KVM_CLOCK_HOST_TSC))
		return 0;
	memset(&dst, 0, sizeof(dst));
	if (ioctl(vm->vm_fd, KVM_GET_CLOCK, &dst) < 0)
		return kvmlu_err(err, errlen, -errno, "restore %s: KVM_GET_CLOCK: %s", vm->name,
			       strerror(errno));
	/* Without the host TSC next to the clock there is nothing to anchor on. */
	if (!(dst.flags & KVM_CLOCK_HOST_TSC))
		return 0;
	for (unsigned int i = 0; i < s->nr_vcpus; i++)
		if (!(s->cpus[i].have & CPU_STATE_HAVE_TSC_OFFSET) || !s->cpus[i].tsc_khz)
			return 0;

	/*
	 * The same shift for every vCPU keeps their TSCs as far apart as they
	 * were; the rate is vCPU 0's (all vCPUs of a kvmlu VM share it).
	 */
	ticks = (__int128)((int64_t)(dst.clock - src->clock)) * s->cpus[0].tsc_khz / 1000000;
	delta = (int64_t)ticks + (int64_t)(src->host_tsc - dst.host_tsc);
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		uint64_t off = s->cpus[i].tsc_offset + (uint64_t)delta;

		if (tsc_offset_set(vm->vcpus[i].fd, off) < 0)
			return kvmlu_err(err, errlen, -errno,
				       "restore %s: vCPU %u: KVM_SET_DEVICE_ATTR(KVM_VCPU_TSC_OFFSET) 0x%llx: %s",
				       vm->name, i, (unsigned long long)off, strerror(errno));
	}
	*shift = delta;
	*adjusted = true;
	return 0;
}
