// SPDX-License-Identifier: GPL-2.0
/* Long mode without firmware for both boot paths (see long_mode.h). */
#include <string.h>

#include "vmm/boot/long_mode.h"
#include "vmm/vcpu.h"

void long_mode_write_gdt(uint64_t *gdt, unsigned int entries, uint16_t cs, uint16_t ds)
{
	memset(gdt, 0, entries * sizeof(*gdt));
	gdt[cs / 8] = GDT_CODE64;
	gdt[ds / 8] = GDT_DATA;
}

void long_mode_identity_map(uint64_t *pml4, uint64_t *pdpt, uint64_t *pd,
			    uint64_t pdpt_gpa, uint64_t pd_gpa, uint64_t gib,
			    uint64_t flags)
{
	uint64_t g, i;

	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = pdpt_gpa | PTE_P | PTE_RW | flags;
	for (g = 0; g < gib; g++) {
		pdpt[g] = (pd_gpa + g * 4096) | PTE_P | PTE_RW | flags;
		for (i = 0; i < 512; i++)
			pd[g * 512 + i] = (g * GIB + i * PAGE_2M) | PTE_P | PTE_RW | PTE_PS | flags;
	}
}

static void long_mode_segment(struct kvm_segment *s, uint16_t sel, uint8_t type, int code)
{
	memset(s, 0, sizeof(*s));
	s->selector = sel;
	s->limit = 0xffffffff;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->g = 1;
	s->l = code;
	s->db = !code;
}

void long_mode_sregs(struct kvm_sregs *sr, uint16_t cs, uint16_t ds,
		     uint64_t gdt_gpa, unsigned int gdt_entries, uint64_t cr3)
{
	long_mode_segment(&sr->cs, cs, 0xb, 1);
	long_mode_segment(&sr->ds, ds, 0x3, 0);
	sr->es = sr->fs = sr->gs = sr->ss = sr->ds;
	/* VM entry wants a usable busy TSS even though the guest loads its own. */
	memset(&sr->tr, 0, sizeof(sr->tr));
	sr->tr.limit = 0x67;
	sr->tr.type = 0xb;
	sr->tr.present = 1;
	memset(&sr->ldt, 0, sizeof(sr->ldt));
	sr->ldt.type = 0x2;
	sr->ldt.unusable = 1;
	sr->gdt.base = gdt_gpa;
	sr->gdt.limit = (uint16_t)(gdt_entries * 8 - 1);
	sr->idt.base = 0;
	sr->idt.limit = 0;
	sr->cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_PG;
	sr->cr3 = cr3;
	sr->cr4 = CR4_PAE;
	sr->efer = EFER_LME | EFER_LMA;
}

int long_mode_start_vcpu(struct vcpu *v, long_mode_regs_fn *fill, const void *ctx,
			 char *err, size_t errlen)
{
	struct kvm_sregs sr;
	struct kvm_regs r;
	int rc;

	rc = vcpu_get_sregs(v, &sr, err, errlen);
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	fill(ctx, v->index, &r, &sr);
	rc = vcpu_set_sregs(v, &sr, err, errlen);
	if (rc)
		return rc;
	return vcpu_set_regs(v, &r, err, errlen);
}
