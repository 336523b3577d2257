// SPDX-License-Identifier: GPL-2.0
/*
 * Which MSRs make up a vCPU's state. KVM_GET_MSR_INDEX_LIST names every
 * MSR KVM can save on this host, whatever the guest's CPUID says; reading
 * one the vCPU's CPUID does not expose fails (KVM_GET_MSRS then stops at
 * it), and writing it into the new vCPU would be refused. So the list is
 * filtered by the vCPU's CPUID, and extended with the KVM paravirtual
 * MSRs the CPUID advertises. Computed at every capture (cheap: one
 * ioctl), because the CPUID decides it and the host may change between
 * boots.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/err.h"
#include "vmm/state/cpu_state.h"
#include "vmm/state/state_vm.h"

enum cpuid_reg { EAX, EBX, ECX, EDX };

/* An MSR that exists only if a CPUID feature bit is set. */
struct msr_feature {
	uint32_t msr;
	uint32_t leaf, subleaf;
	enum cpuid_reg reg;
	uint8_t bit;
};

#define KVM_CPUID_SIGNATURE	0x40000000
#define KVM_CPUID_FEATURES	0x40000001

static const struct msr_feature msr_features[] = {
	{ 0x0000003b, 0x7, 0, EBX, 1 },		/* IA32_TSC_ADJUST */
	{ 0x000006e0, 0x1, 0, ECX, 24 },	/* IA32_TSC_DEADLINE */
	{ 0x00000da0, 0xd, 1, EAX, 3 },		/* IA32_XSS: XSAVES */
	{ 0xc0000103, 0x80000001, 0, EDX, 27 },	/* TSC_AUX: RDTSCP */
	{ 0x00000011, KVM_CPUID_FEATURES, 0, EAX, 0 },	/* KVM wall clock */
	{ 0x00000012, KVM_CPUID_FEATURES, 0, EAX, 0 },	/* KVM system time */
	{ 0x4b564d00, KVM_CPUID_FEATURES, 0, EAX, 3 },	/* wall clock new */
	{ 0x4b564d01, KVM_CPUID_FEATURES, 0, EAX, 3 },	/* system time new */
	{ 0x4b564d02, KVM_CPUID_FEATURES, 0, EAX, 4 },	/* async PF */
	{ 0x4b564d03, KVM_CPUID_FEATURES, 0, EAX, 5 },	/* steal time */
	{ 0x4b564d04, KVM_CPUID_FEATURES, 0, EAX, 6 },	/* PV EOI */
	{ 0x4b564d05, KVM_CPUID_FEATURES, 0, EAX, 12 },	/* poll control */
	{ 0x4b564d06, KVM_CPUID_FEATURES, 0, EAX, 14 },	/* async PF int */
	{ 0x4b564d07, KVM_CPUID_FEATURES, 0, EAX, 14 },	/* async PF ack */
};

/* KVM paravirtual MSRs: added when the CPUID advertises them. */
static bool msr_is_kvm_pv(uint32_t msr)
{
	return msr == 0x11 || msr == 0x12 ||
	       (msr >= 0x4b564d00 && msr <= 0x4b564dff);
}

/* Hyper-V synthetic MSRs exist only with the Hyper-V CPUID signature. */
static bool msr_is_hyperv(uint32_t msr)
{
	return msr >= 0x40000000 && msr <= 0x400000ff;
}

static const struct kvm_cpuid_entry2 *cpuid_find(const struct kvm_cpuid_entry2 *c,
						 uint32_t n, uint32_t leaf,
						 uint32_t subleaf)
{
	for (uint32_t i = 0; i < n; i++) {
		if (c[i].function != leaf)
			continue;
		if ((c[i].flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX) &&
		    c[i].index != subleaf)
			continue;
		return &c[i];
	}
	return NULL;
}

static bool cpuid_has(const struct kvm_cpuid_entry2 *c, uint32_t n,
		      const struct msr_feature *f)
{
	const struct kvm_cpuid_entry2 *e = cpuid_find(c, n, f->leaf, f->subleaf);
	uint32_t v;

	if (!e)
		return false;
	switch (f->reg) {
	case EAX: v = e->eax; break;
	case EBX: v = e->ebx; break;
	case ECX: v = e->ecx; break;
	default: v = e->edx; break;
	}
	return v & (1u << f->bit);
}

static bool cpuid_is_hyperv(const struct kvm_cpuid_entry2 *c, uint32_t n)
{
	const struct kvm_cpuid_entry2 *e = cpuid_find(c, n, KVM_CPUID_SIGNATURE, 0);

	/* "Microsoft Hv" in EBX, ECX, EDX */
	return e && e->ebx == 0x7263694d && e->ecx == 0x666f736f && e->edx == 0x76482074;
}

static bool cpuid_is_kvm(const struct kvm_cpuid_entry2 *c, uint32_t n)
{
	const struct kvm_cpuid_entry2 *e = cpuid_find(c, n, KVM_CPUID_SIGNATURE, 0);

	/* "KVMKVMKVM\0\0\0" */
	return e && e->ebx == 0x4b4d564b && e->ecx == 0x564b4d56 && e->edx == 0x4d;
}

/* true: keep msr; false: the vCPU's CPUID does not have it. */
static bool msr_wanted(uint32_t msr, const struct kvm_cpuid_entry2 *c, uint32_t n)
{
	if (msr_is_kvm_pv(msr) && !cpuid_is_kvm(c, n))
		return false;
	if (msr_is_hyperv(msr))
		return cpuid_is_hyperv(c, n);
	for (size_t i = 0; i < sizeof(msr_features) / sizeof(msr_features[0]); i++)
		if (msr_features[i].msr == msr)
			return cpuid_has(c, n, &msr_features[i]);
	return true;
}

static bool list_has(const uint32_t *l, uint32_t n, uint32_t msr)
{
	for (uint32_t i = 0; i < n; i++)
		if (l[i] == msr)
			return true;
	return false;
}

/* Add msr to out[*n] unless it is there already; -E2BIG past max. */
static int msr_list_add(uint32_t *out, uint32_t *n, uint32_t max, uint32_t msr,
			char *err, size_t errlen)
{
	if (list_has(out, *n, msr))
		return 0;
	if (*n == max)
		return kvmlu_err(err, errlen, -E2BIG, "more than %u MSRs to save (at 0x%x)",
				 max, msr);
	out[(*n)++] = msr;
	return 0;
}

int cpu_state_msr_indices(int kvm_fd, const struct kvm_cpuid_entry2 *cpuid,
			  uint32_t nr_cpuid, uint32_t *out, uint32_t max,
			  uint32_t *nr, char *err, size_t errlen)
{
	struct kvm_msr_list probe = { .nmsrs = 0 };
	struct kvm_msr_list *list;
	uint32_t n = 0;
	int ret;

	/* nmsrs 0 makes KVM answer E2BIG with the real count filled in. */
	if (ioctl(kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe) == 0 || errno != E2BIG)
		return kvmlu_err(err, errlen, -EIO,
				    "KVM_GET_MSR_INDEX_LIST: cannot size the list (count %u)",
				    probe.nmsrs);
	list = calloc(1, sizeof(*list) + probe.nmsrs * sizeof(uint32_t));
	if (!list)
		return -ENOMEM;
	list->nmsrs = probe.nmsrs;
	if (ioctl(kvm_fd, KVM_GET_MSR_INDEX_LIST, list) < 0) {
		ret = -errno;
		kvmlu_err(err, errlen, ret, "KVM_GET_MSR_INDEX_LIST of %u: %s",
			     probe.nmsrs, strerror(-ret));
		goto err_free;
	}
	for (uint32_t i = 0; i < list->nmsrs; i++) {
		uint32_t msr = list->indices[i];

		if (!msr_wanted(msr, cpuid, nr_cpuid))
			continue;
		ret = msr_list_add(out, &n, max, msr, err, errlen);
		if (ret)
			goto err_free;
	}
	/* PV MSRs the CPUID promises but this host's list left out. */
	for (size_t i = 0; i < sizeof(msr_features) / sizeof(msr_features[0]); i++) {
		uint32_t msr = msr_features[i].msr;

		if (!msr_is_kvm_pv(msr) || !msr_wanted(msr, cpuid, nr_cpuid))
			continue;
		ret = msr_list_add(out, &n, max, msr, err, errlen);
		if (ret)
			goto err_free;
	}
	*nr = n;
	free(list);
	return 0;
err_free:
	free(list);
	return ret;
}

bool cpu_state_msr_is_deferred(uint32_t index)
{
	/*
	 * IA32_TSC_DEADLINE is an absolute guest TSC value: written before
	 * IA32_TSC it would be compared against the fresh vCPU's TSC and fire
	 * at a random time (Firecracker's DEFERRED_MSRS give the same reason).
	 */
	return index == 0x6e0;
}
