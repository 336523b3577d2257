/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything one x86 vCPU is, as KVM lets userspace read and write it.
 *
 * Lifecycle: while the VM is paused (no thread in KVM_RUN on that vCPU),
 * cpu_state_capture() reads the vCPU into a struct cpu_state; the state
 * travels in the state FDT (state_fdt_write.c); a new process, after an
 * upgrade or a kexec, creates a fresh vCPU and calls cpu_state_restore()
 * on it, after state_validate() accepted the whole VM state. A failed
 * restore leaves the fresh vCPU half-set: the caller throws that VM away
 * and the old one (if it still exists) resumes.
 */
#ifndef KVMLU_CPU_STATE_H
#define KVMLU_CPU_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "include/kvmlu/kvm_uapi.h"

#define CPU_STATE_MAX_MSRS	512
#define CPU_STATE_MAX_CPUID	256	/* KVM_MAX_CPUID_ENTRIES */
#define CPU_STATE_XSAVE_MIN	4096	/* struct kvm_xsave without extra[] */
#define CPU_STATE_XSAVE_MAX	16384	/* AMX needs ~11 KiB */

/* Feature bits of cpu_state.have: parts a host may lack. */
#define CPU_STATE_HAVE_LAPIC		(1u << 0)	/* in-kernel LAPIC */
#define CPU_STATE_HAVE_TSC_OFFSET	(1u << 1)	/* KVM_VCPU_TSC_OFFSET */
#define CPU_STATE_HAVE_ALL		(CPU_STATE_HAVE_LAPIC | CPU_STATE_HAVE_TSC_OFFSET)

struct cpu_state_msr {
	uint32_t index;
	uint64_t value;
};

struct cpu_state {
	uint32_t index;			/* vCPU id */
	uint32_t have;			/* CPU_STATE_HAVE_* */
	struct kvm_regs regs;
	struct kvm_sregs2 sregs2;
	struct kvm_xcrs xcrs;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events events;
	struct kvm_mp_state mp_state;
	struct kvm_debugregs debugregs;
	uint32_t tsc_khz;
	uint64_t tsc_offset;
	uint32_t xsave_size;		/* bytes used in xsave[] */
	uint8_t xsave[CPU_STATE_XSAVE_MAX];
	uint32_t nr_msrs;
	struct cpu_state_msr msrs[CPU_STATE_MAX_MSRS];
	uint32_t nr_cpuid;
	struct kvm_cpuid_entry2 cpuid[CPU_STATE_MAX_CPUID];
};

/*
 * Read vCPU vcpu_fd of VM vm_fd (kvm_fd is /dev/kvm, for the MSR index
 * list) into s. The vCPU must not be running.
 */
int cpu_state_capture(int kvm_fd, int vm_fd, int vcpu_fd, uint32_t index,
		      struct cpu_state *s, char *err, size_t errlen);

/* Write s into a vCPU that has never run. s must have been validated. */
int cpu_state_restore(int vm_fd, int vcpu_fd, const struct cpu_state *s,
		      char *err, size_t errlen);

/*
 * The MSRs worth saving for a vCPU with this CPUID: KVM's index list,
 * filtered and extended by the CPUID features (cpu_state_msrs.c).
 */
int cpu_state_msr_indices(int kvm_fd, const struct kvm_cpuid_entry2 *cpuid,
			  uint32_t nr_cpuid, uint32_t *out, uint32_t max,
			  uint32_t *nr, char *err, size_t errlen);

/* MSRs that must be written after all others (cpu_state_msrs.c). */
bool cpu_state_msr_is_deferred(uint32_t index);

#endif /* KVMLU_CPU_STATE_H */
