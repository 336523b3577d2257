/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 64-bit long mode without firmware: what both boot paths (the witness
 * payload, vmm/boot/payload_boot.c, and Linux, vmm/boot/linux_load.c) need to
 * start a vCPU directly in long mode: a flat GDT, identity-mapped page
 * tables with 2 MiB pages, and the matching special registers. Each path
 * places the tables at its own addresses and adds its own bits.
 */
#ifndef KVMLU_LONG_MODE_H
#define KVMLU_LONG_MODE_H

#include <stddef.h>
#include <stdint.h>

#include "kvmlu/kvm_uapi.h"

struct vcpu;

#define GDT_CODE64	0x00af9a000000ffffULL	/* P, DPL0, code r/x, L, G */
#define GDT_DATA	0x00cf92000000ffffULL	/* P, DPL0, data r/w, D/B, G */

#define PTE_P		0x1ULL
#define PTE_RW		0x2ULL
#define PTE_US		0x4ULL
#define PTE_PS		0x80ULL
#define PAGE_2M		0x200000ULL
#define GIB		0x40000000ULL

#define CR0_PE		(1ULL << 0)
#define CR0_MP		(1ULL << 1)
#define CR0_ET		(1ULL << 4)
#define CR0_NE		(1ULL << 5)
#define CR0_WP		(1ULL << 16)
#define CR0_AM		(1ULL << 18)
#define CR0_PG		(1ULL << 31)
#define CR4_PAE		(1ULL << 5)
#define CR4_OSFXSR	(1ULL << 9)
#define CR4_OSXMMEXCPT	(1ULL << 10)
#define EFER_SCE	(1ULL << 0)
#define EFER_LME	(1ULL << 8)
#define EFER_LMA	(1ULL << 10)
#define EFER_NXE	(1ULL << 11)

/* entries descriptors, all zero but a 64-bit code at cs and data at ds. */
void long_mode_write_gdt(uint64_t *gdt, unsigned int entries, uint16_t cs, uint16_t ds);

/*
 * Identity-map [0, gib GiB) with 2 MiB pages: pml4 and pdpt are one page
 * each, pd is gib consecutive pages; pdpt_gpa and pd_gpa are where the
 * guest sees them. flags go on every entry (PTE_US for CPL 3 access).
 */
void long_mode_identity_map(uint64_t *pml4, uint64_t *pdpt, uint64_t *pd,
			    uint64_t pdpt_gpa, uint64_t pd_gpa, uint64_t gib,
			    uint64_t flags);

/*
 * Flat 64-bit segments (cs, and ds for all data segments), a usable busy
 * TSS and no LDT as VM entry requires, the GDT at gdt_gpa with
 * gdt_entries, no IDT, paging on with cr3. CR0, CR4 and EFER get the
 * minimum for long mode; the caller ORs in what its guest expects.
 */
void long_mode_sregs(struct kvm_sregs *sr, uint16_t cs, uint16_t ds,
		     uint64_t gdt_gpa, unsigned int gdt_entries, uint64_t cr3);

/*
 * A boot path's registers for the vCPU numbered vcpu_index: sr holds the
 * special registers as KVM has them (the parts long mode does not set,
 * such as the APIC base, must stay), r is all zero.
 */
typedef void long_mode_regs_fn(const void *ctx, unsigned int vcpu_index,
			       struct kvm_regs *r, struct kvm_sregs *sr);

/*
 * Start v where fill(ctx) puts it: read its special registers, let fill()
 * set both register sets, write the special registers (long mode) first,
 * then the general ones.
 */
int long_mode_start_vcpu(struct vcpu *v, long_mode_regs_fn *fill, const void *ctx,
			 char *err, size_t errlen);

#endif /* KVMLU_LONG_MODE_H */
