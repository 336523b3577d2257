/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPUID a vCPU reports: what KVM supports on this host, with each
 * vCPU's own APIC id filled in. Set once at vCPU creation, before any
 * register: KVM checks EFER.LME/NX against the guest CPUID, so long-mode
 * sregs are refused until CPUID says the CPU has long mode.
 */
#ifndef KVMLU_VMM_CPUID_H
#define KVMLU_VMM_CPUID_H

#include <stddef.h>

/* On the vCPU fd vcpu_fd, vCPU number index (its APIC id). */
int cpuid_setup(int kvm_fd, int vcpu_fd, unsigned int index, char *err, size_t errlen);

#endif /* KVMLU_VMM_CPUID_H */
