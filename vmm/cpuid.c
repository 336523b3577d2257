// SPDX-License-Identifier: GPL-2.0
/* CPUID of a vCPU (see cpuid.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/err.h"
#include "kvmlu/kvm_uapi.h"
#include "vmm/cpuid.h"

#define CPUID_MAX_ENTRIES 512
#define CPUID_1_ECX_HYPERVISOR (1u << 31)

int cpuid_setup(int kvm_fd, int vcpu_fd, unsigned int index, char *err, size_t errlen)
{
	struct kvm_cpuid2 *c;
	unsigned int n = 64, i;
	int rc;

	/* The kernel says E2BIG until the buffer is big enough. */
	for (;;) {
		c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));
		if (!c)
			return kvmlu_err(err, errlen, -ENOMEM, "vCPU %u: CPUID buffer of %u entries",
				       index, n);
		c->nent = n;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
			break;
		rc = -errno;
		free(c);
		if (rc != -E2BIG || n >= CPUID_MAX_ENTRIES)
			return kvmlu_err(err, errlen, rc, "KVM_GET_SUPPORTED_CPUID (%u entries): %s",
				       n, strerror(-rc));
		n *= 2;
	}
	for (i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		switch (e->function) {
		case 1:
			e->ebx = (e->ebx & 0x00ffffffu) | (index << 24);
			e->ecx |= CPUID_1_ECX_HYPERVISOR;
			break;
		case 0xb:
		case 0x1f:
			e->edx = index;	/* x2APIC id */
			break;
		}
	}
	rc = 0;
	if (ioctl(vcpu_fd, KVM_SET_CPUID2, c) < 0)
		rc = kvmlu_err(err, errlen, -errno, "vCPU %u: KVM_SET_CPUID2 (%u entries): %s",
			     index, c->nent, strerror(errno));
	free(c);
	return rc;
}
