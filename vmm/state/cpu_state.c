// SPDX-License-Identifier: GPL-2.0
/*
 * Capture and restore of one x86 vCPU (see cpu_state.h for the
 * lifecycle). One small wrapper per KVM ioctl, each naming its ioctl in
 * the error; the two top-level functions give the order and say why it
 * matters where it does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/err.h"
#include "vmm/state/cpu_state.h"

#define MSR_IA32_TSC 0x10

#define ERR_IOCTL(name, idx) \
	kvmlu_err(err, errlen, -errno, "vCPU %u: " name ": %s", idx, strerror(errno))

static int get_cpuid(int fd, struct cpu_state *s, char *err, size_t errlen)
{
	struct kvm_cpuid2 *c;
	int ret = 0;

	c = calloc(1, sizeof(*c) + CPU_STATE_MAX_CPUID * sizeof(c->entries[0]));
	if (!c)
		return -ENOMEM;
	c->nent = CPU_STATE_MAX_CPUID;
	if (ioctl(fd, KVM_GET_CPUID2, c) < 0) {
		ret = ERR_IOCTL("KVM_GET_CPUID2", s->index);
		goto out;
	}
	s->nr_cpuid = c->nent;
	memcpy(s->cpuid, c->entries, c->nent * sizeof(c->entries[0]));
out:
	free(c);
	return ret;
}

static int set_cpuid(int fd, const struct cpu_state *s, char *err, size_t errlen)
{
	struct kvm_cpuid2 *c;
	int ret = 0;

	c = calloc(1, sizeof(*c) + s->nr_cpuid * sizeof(c->entries[0]));
	if (!c)
		return -ENOMEM;
	c->nent = s->nr_cpuid;
	memcpy(c->entries, s->cpuid, s->nr_cpuid * sizeof(c->entries[0]));
	if (ioctl(fd, KVM_SET_CPUID2, c) < 0)
		ret = kvmlu_err(err, errlen, -errno, "vCPU %u: KVM_SET_CPUID2 of %u entries: %s",
				   s->index, s->nr_cpuid, strerror(errno));
	free(c);
	return ret;
}

static int get_msrs(int kvm_fd, int fd, struct cpu_state *s, char *err, size_t errlen)
{
	uint32_t idx[CPU_STATE_MAX_MSRS];
	struct kvm_msrs *m;
	uint32_t n;
	int ret;

	ret = cpu_state_msr_indices(kvm_fd, s->cpuid, s->nr_cpuid, idx,
				    CPU_STATE_MAX_MSRS, &n, err, errlen);
	if (ret)
		return ret;
	m = calloc(1, sizeof(*m) + n * sizeof(m->entries[0]));
	if (!m)
		return -ENOMEM;
	m->nmsrs = n;
	for (uint32_t i = 0; i < n; i++)
		m->entries[i].index = idx[i];
	ret = ioctl(fd, KVM_GET_MSRS, m);
	if (ret < 0) {
		ret = ERR_IOCTL("KVM_GET_MSRS", s->index);
		goto out;
	}
	/* KVM stops at the first MSR it refuses and returns how many it did. */
	if ((uint32_t)ret != n) {
		ret = kvmlu_err(err, errlen, -EIO,
				   "vCPU %u: KVM_GET_MSRS got %d of %u MSRs, first refused 0x%x",
				   s->index, ret, n, idx[ret]);
		goto out;
	}
	s->nr_msrs = n;
	for (uint32_t i = 0; i < n; i++) {
		s->msrs[i].index = m->entries[i].index;
		s->msrs[i].value = m->entries[i].data;
	}
	ret = 0;
out:
	free(m);
	return ret;
}

/* Write the MSRs for which deferred == cpu_state_msr_is_deferred(). */
static int set_msrs(int fd, const struct cpu_state *s, bool deferred,
		    char *err, size_t errlen)
{
	struct kvm_msrs *m;
	uint32_t n = 0;
	int ret;

	m = calloc(1, sizeof(*m) + s->nr_msrs * sizeof(m->entries[0]));
	if (!m)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nr_msrs; i++) {
		if (cpu_state_msr_is_deferred(s->msrs[i].index) != deferred)
			continue;
		/*
		 * With the offset attribute the guest TSC is put back from the
		 * offset (below); a host write of IA32_TSC would first go
		 * through KVM's TSC synchronisation heuristics (which, on hosts
		 * with an unstable TSC, add the time since the last write).
		 */
		if (s->msrs[i].index == MSR_IA32_TSC && (s->have & CPU_STATE_HAVE_TSC_OFFSET))
			continue;
		m->entries[n].index = s->msrs[i].index;
		m->entries[n].data = s->msrs[i].value;
		n++;
	}
	m->nmsrs = n;
	ret = n ? ioctl(fd, KVM_SET_MSRS, m) : 0;
	if (ret < 0) {
		ret = ERR_IOCTL("KVM_SET_MSRS", s->index);
		goto out;
	}
	if ((uint32_t)ret != n) {
		ret = kvmlu_err(err, errlen, -EIO,
				   "vCPU %u: KVM_SET_MSRS set %d of %u MSRs, first refused 0x%x",
				   s->index, ret, n, m->entries[ret].index);
		goto out;
	}
	ret = 0;
out:
	free(m);
	return ret;
}

static int get_xsave(int vm_fd, int fd, struct cpu_state *s, char *err, size_t errlen)
{
	int size = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);
	unsigned long req = KVM_GET_XSAVE2;

	/* 0: no XSAVE2; the legacy 4 KiB KVM_GET_XSAVE then has it all. */
	if (size <= 0) {
		size = CPU_STATE_XSAVE_MIN;
		req = KVM_GET_XSAVE;
	}
	if (size < CPU_STATE_XSAVE_MIN || size > CPU_STATE_XSAVE_MAX)
		return kvmlu_err(err, errlen, -E2BIG,
				    "vCPU %u: KVM_CAP_XSAVE2 size %d outside %d..%d",
				    s->index, size, CPU_STATE_XSAVE_MIN, CPU_STATE_XSAVE_MAX);
	memset(s->xsave, 0, sizeof(s->xsave));
	if (ioctl(fd, req, s->xsave) < 0)
		return ERR_IOCTL("KVM_GET_XSAVE2", s->index);
	s->xsave_size = (uint32_t)size;
	return 0;
}

static int set_xsave(int fd, const struct cpu_state *s, char *err, size_t errlen)
{
	/*
	 * KVM reads as many bytes as ITS KVM_CAP_XSAVE2 size says, which may
	 * exceed what was saved: hand it a zero-padded full-size buffer.
	 */
	uint8_t *buf = calloc(1, CPU_STATE_XSAVE_MAX);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, s->xsave, s->xsave_size);
	if (ioctl(fd, KVM_SET_XSAVE, buf) < 0)
		ret = ERR_IOCTL("KVM_SET_XSAVE", s->index);
	free(buf);
	return ret;
}

static int tsc_offset_attr(int fd, unsigned long req, uint64_t *val)
{
	struct kvm_device_attr a = {
		.group = KVM_VCPU_TSC_CTRL,
		.attr = KVM_VCPU_TSC_OFFSET,
		.addr = (uint64_t)(uintptr_t)val,
	};

	return ioctl(fd, req, &a);
}

/* The TSC offset attribute, or -ENXIO if this KVM does not have it. */
static int get_tsc_offset(int fd, uint64_t *out)
{
	if (tsc_offset_attr(fd, KVM_GET_DEVICE_ATTR, out) < 0)
		return errno == EINVAL || errno == ENXIO ? -ENXIO : -errno;
	return 0;
}

int cpu_state_capture(int kvm_fd, int vm_fd, int vcpu_fd, uint32_t index,
		      struct cpu_state *s, char *err, size_t errlen)
{
	int khz, ret;

	memset(s, 0, offsetof(struct cpu_state, xsave));
	s->index = index;
	s->nr_msrs = 0;
	s->nr_cpuid = 0;
	/*
	 * mp_state first: KVM_GET_MP_STATE lets KVM process pending INIT/SIPI
	 * events into the vCPU first, so what follows is read after them.
	 */
	if (ioctl(vcpu_fd, KVM_GET_MP_STATE, &s->mp_state) < 0)
		return ERR_IOCTL("KVM_GET_MP_STATE", index);
	if (ioctl(vcpu_fd, KVM_GET_REGS, &s->regs) < 0)
		return ERR_IOCTL("KVM_GET_REGS", index);
	if (ioctl(vcpu_fd, KVM_GET_SREGS2, &s->sregs2) < 0)
		return ERR_IOCTL("KVM_GET_SREGS2", index);
	ret = get_xsave(vm_fd, vcpu_fd, s, err, errlen);
	if (ret)
		return ret;
	if (ioctl(vcpu_fd, KVM_GET_XCRS, &s->xcrs) < 0)
		return ERR_IOCTL("KVM_GET_XCRS", index);
	if (ioctl(vcpu_fd, KVM_GET_DEBUGREGS, &s->debugregs) < 0)
		return ERR_IOCTL("KVM_GET_DEBUGREGS", index);
	/* No in-kernel irqchip: KVM has no LAPIC to give (EINVAL/ENXIO). */
	if (ioctl(vcpu_fd, KVM_GET_LAPIC, &s->lapic) == 0)
		s->have |= CPU_STATE_HAVE_LAPIC;
	else if (errno != EINVAL && errno != ENXIO)
		return ERR_IOCTL("KVM_GET_LAPIC", index);
	ret = get_cpuid(vcpu_fd, s, err, errlen);
	if (ret)
		return ret;
	/* The CPUID decides which MSRs exist, so it is read before them. */
	ret = get_msrs(kvm_fd, vcpu_fd, s, err, errlen);
	if (ret)
		return ret;
	khz = ioctl(vcpu_fd, KVM_GET_TSC_KHZ);
	if (khz <= 0)
		return ERR_IOCTL("KVM_GET_TSC_KHZ", index);
	s->tsc_khz = (uint32_t)khz;
	ret = get_tsc_offset(vcpu_fd, &s->tsc_offset);
	if (ret == 0)
		s->have |= CPU_STATE_HAVE_TSC_OFFSET;
	else if (ret != -ENXIO)
		return kvmlu_err(err, errlen, ret,
				 "vCPU %u: KVM_GET_DEVICE_ATTR(KVM_VCPU_TSC_OFFSET): %s",
				 index, strerror(-ret));
	/*
	 * vcpu_events last: reading the other state can still make KVM queue
	 * an event (e.g. a #GP for a bad MSR); the events saved must include
	 * everything pending at the end.
	 */
	if (ioctl(vcpu_fd, KVM_GET_VCPU_EVENTS, &s->events) < 0)
		return ERR_IOCTL("KVM_GET_VCPU_EVENTS", index);
	return 0;
}

int cpu_state_restore(int vm_fd, int vcpu_fd, const struct cpu_state *s,
		      char *err, size_t errlen)
{
	struct kvm_vcpu_events ev;
	struct kvm_debugregs dr;
	uint64_t off;
	int khz, ret;

	(void)vm_fd;
	/*
	 * TSC rate before anything that holds a TSC value: KVM converts them
	 * with the rate in force when they are written.
	 */
	khz = ioctl(vcpu_fd, KVM_GET_TSC_KHZ);
	if (khz > 0 && (uint32_t)khz != s->tsc_khz &&
	    ioctl(vcpu_fd, KVM_SET_TSC_KHZ, (unsigned long)s->tsc_khz) < 0)
		return kvmlu_err(err, errlen, -errno,
				    "vCPU %u: KVM_SET_TSC_KHZ %u (host %d): %s",
				    s->index, s->tsc_khz, khz, strerror(errno));
	/* CPUID first: KVM checks MSRs, XSAVE features and CR4 bits against it. */
	ret = set_cpuid(vcpu_fd, s, err, errlen);
	if (ret)
		return ret;
	if (ioctl(vcpu_fd, KVM_SET_MP_STATE, &s->mp_state) < 0)
		return ERR_IOCTL("KVM_SET_MP_STATE", s->index);
	/* SET_REGS drops pending exceptions; SET_VCPU_EVENTS restores them. */
	if (ioctl(vcpu_fd, KVM_SET_REGS, &s->regs) < 0)
		return ERR_IOCTL("KVM_SET_REGS", s->index);
	if (ioctl(vcpu_fd, KVM_SET_SREGS2, &s->sregs2) < 0)
		return ERR_IOCTL("KVM_SET_SREGS2", s->index);
	ret = set_xsave(vcpu_fd, s, err, errlen);
	if (ret)
		return ret;
	if (ioctl(vcpu_fd, KVM_SET_XCRS, &s->xcrs) < 0)
		return ERR_IOCTL("KVM_SET_XCRS", s->index);
	dr = s->debugregs;
	dr.flags = 0;
	if (ioctl(vcpu_fd, KVM_SET_DEBUGREGS, &dr) < 0)
		return ERR_IOCTL("KVM_SET_DEBUGREGS", s->index);
	/* LAPIC after SREGS2: the APIC base MSR in sregs2 places and enables it. */
	if ((s->have & CPU_STATE_HAVE_LAPIC) &&
	    ioctl(vcpu_fd, KVM_SET_LAPIC, &s->lapic) < 0)
		return ERR_IOCTL("KVM_SET_LAPIC", s->index);
	/* MSRs after LAPIC: x2APIC and TSC_DEADLINE writes need the LAPIC set. */
	ret = set_msrs(vcpu_fd, s, false, err, errlen);
	if (ret)
		return ret;
	/*
	 * Writing IA32_TSC above re-synchronised the TSC to the saved value,
	 * i.e. as if no time had passed. The saved offset puts the guest TSC
	 * back on the host TSC it followed before, so it continues by the
	 * wall time of the pause (same host; after kexec the caller adjusts
	 * tsc_offset for the new boot's TSC before calling here). Some KVMs
	 * (the PVM machines here) read the attribute as 0 and ignore writes:
	 * then the guest TSC is whatever IA32_TSC and the host make it, which
	 * still never goes back (tests/native/upgrade_* check guest time).
	 */
	if (s->have & CPU_STATE_HAVE_TSC_OFFSET) {
		off = s->tsc_offset;
		if (tsc_offset_attr(vcpu_fd, KVM_SET_DEVICE_ATTR, &off) < 0)
			return ERR_IOCTL("KVM_SET_DEVICE_ATTR(KVM_VCPU_TSC_OFFSET)", s->index);
	}
	/*
	 * TSC_DEADLINE after the guest TSC is final: KVM arms the LAPIC timer
	 * against the guest TSC at the moment of the write.
	 */
	ret = set_msrs(vcpu_fd, s, true, err, errlen);
	if (ret)
		return ret;
	/* Last: everything above may have cleared or queued events. */
	ev = s->events;
	ev.flags |= KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SIPI_VECTOR |
		    KVM_VCPUEVENT_VALID_SHADOW;
	if (ioctl(vcpu_fd, KVM_SET_VCPU_EVENTS, &ev) < 0)
		return ERR_IOCTL("KVM_SET_VCPU_EVENTS", s->index);
	/*
	 * Tell a guest using kvmclock it was stopped, so its watchdogs do not
	 * see the pause as a lockup. EINVAL: the guest does not use kvmclock.
	 */
	if (ioctl(vcpu_fd, KVM_KVMCLOCK_CTRL, 0) < 0 && errno != EINVAL)
		return ERR_IOCTL("KVM_KVMCLOCK_CTRL", s->index);
	return 0;
}
