// SPDX-License-Identifier: GPL-2.0
/*
 * Linux image placement and the zero page: see linux_load.h.
 *
 * Planning and writing are separate so that every refusal (kernel or
 * initrd too big for the RAM, command line too long for the kernel)
 * happens before the first byte of guest RAM is written.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/err.h"
#include "vmm/acpi/acpi_tables.h"
#include "vmm/boot/linux_e820.h"
#include "vmm/boot/linux_layout.h"
#include "vmm/boot/linux_load.h"
#include "vmm/boot/long_mode.h"
#include "vmm/boot/mptable.h"

#define GDT_ENTRIES	4			/* null, unused, CS 0x10, DS 0x18 */

/* "Undefined" loader id: no registered id fits a VMM without firmware. */
#define LINUX_TYPE_OF_LOADER	0xff
#define LINUX_LOAD_MIN_ADDR	LINUX_HIGH_MEM_START

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* RAM that is contiguous from GPA 0, as far as the identity map reaches. */
static uint64_t low_ram_end(const struct guestmem *gm)
{
	uint64_t end = 0;
	unsigned int i;

	for (i = 0; i < gm->nr; i++) {
		if (gm->r[i].gpa != end)
			break;
		end += gm->r[i].size;
	}
	if (end > GUESTMEM_LOW_RAM_END)
		end = GUESTMEM_LOW_RAM_END;
	return end;
}

static bool fits(uint64_t start, uint64_t size, uint64_t end)
{
	return start <= end && size <= end - start;
}

/* The boot-time structures must not overlap and must stay in Linux's low 64 KiB. */
_Static_assert(LINUX_GDT_GPA + GDT_ENTRIES * 8 <= LINUX_BOOT_PARAMS_GPA, "GDT below zero page");
_Static_assert(LINUX_BOOT_PARAMS_GPA + 4096 <= LINUX_PML4_GPA, "zero page below page tables");
_Static_assert(LINUX_PD_GPA + LINUX_IDMAP_GIB * 4096 <= LINUX_CMDLINE_GPA, "PDs below cmdline");
_Static_assert(LINUX_CMDLINE_GPA + LINUX_CMDLINE_MAX + 1 <= LINUX_LOW_STRUCT_END, "low 64 KiB");

static void linux_acpi_machine(const struct linux_load_input *in, struct acpi_machine *m)
{
	m->ncpus = in->nr_cpus;
	m->mmio = in->mmio;
	m->n_mmio = in->n_mmio;
	m->pci_window_base = in->pci_window_base;
	m->pci_window_size = in->pci_window_size;
}

int linux_load_plan(const struct guestmem *gm, const struct linux_load_input *in,
		    struct linux_load_plan *plan, char *err, size_t errlen)
{
	struct boot_e820_entry e820[E820_MAX_ENTRIES_ZEROPAGE];
	struct acpi_machine acpi;
	const struct linux_bzimage *img;
	uint64_t top, cmax;
	unsigned int nr;
	int rc;

	if (!gm || !in || !in->image || !in->cmdline || !plan)
		return kvmlu_err(err, errlen, -EINVAL, "Linux boot: missing input");
	img = in->image;
	memset(plan, 0, sizeof(*plan));
	plan->low_ram_end = low_ram_end(gm);
	if (plan->low_ram_end < LINUX_MIN_RAM)
		return kvmlu_err(err, errlen, -ENOMEM,
				 "Linux boot: %llu MiB of RAM from address 0, need at least %llu MiB",
				 (unsigned long long)(plan->low_ram_end >> 20),
				 (unsigned long long)(LINUX_MIN_RAM >> 20));
	/* Built again when written; here so that a bad layout changes nothing. */
	rc = linux_e820_build(gm, e820, E820_MAX_ENTRIES_ZEROPAGE, &nr, err, errlen);
	if (rc)
		return rc;
	if (in->nr_cpus == 0 || in->nr_cpus > MPTABLE_MAX_CPUS)
		return kvmlu_err(err, errlen, -EINVAL, "Linux boot: %u vCPUs, must be 1..%u",
				 in->nr_cpus, MPTABLE_MAX_CPUS);
	if (mptable_size(in->nr_cpus) > LINUX_ACPI_GPA - LINUX_MPTABLE_GPA)
		return kvmlu_err(err, errlen, -E2BIG, "Linux boot: MP table for %u vCPUs too big",
				 in->nr_cpus);
	linux_acpi_machine(in, &acpi);
	rc = acpi_machine_check(&acpi, err, errlen);
	if (rc)
		return rc;
	if (acpi_tables_size(&acpi) > LINUX_ACPI_END - LINUX_ACPI_GPA)
		return kvmlu_err(err, errlen, -E2BIG,
				 "Linux boot: ACPI tables for %u vCPUs and %zu devices need %zu bytes, %llu reserved",
				 in->nr_cpus, in->n_mmio, acpi_tables_size(&acpi),
				 LINUX_ACPI_END - LINUX_ACPI_GPA);

	cmax = img->cmdline_max < LINUX_CMDLINE_MAX ? img->cmdline_max : LINUX_CMDLINE_MAX;
	plan->cmdline_len = strlen(in->cmdline);
	if (plan->cmdline_len > cmax)
		return kvmlu_err(err, errlen, -E2BIG,
				 "Linux boot: command line is %zu bytes, the kernel takes at most %llu",
				 plan->cmdline_len, (unsigned long long)cmax);

	/*
	 * A relocatable kernel runs where it is put, so use its preferred
	 * address when RAM holds it there; else the first aligned address
	 * from 1 MiB. A fixed kernel is loaded at 1 MiB and moves itself to
	 * pref_address, so both ranges must be RAM.
	 */
	if (img->relocatable) {
		plan->kernel_gpa = img->pref_address;
		if (plan->kernel_gpa < LINUX_LOAD_MIN_ADDR ||
		    !fits(plan->kernel_gpa, img->init_size, plan->low_ram_end))
			plan->kernel_gpa = align_up(LINUX_LOAD_MIN_ADDR, img->alignment);
	} else {
		plan->kernel_gpa = LINUX_LOAD_MIN_ADDR;
		if (img->pref_address > LINUX_LOAD_MIN_ADDR &&
		    !fits(img->pref_address, img->init_size, plan->low_ram_end))
			return kvmlu_err(err, errlen, -ENOMEM,
					 "Linux boot: fixed kernel runs at %#llx with init_size %#x, past RAM end %#llx",
					 (unsigned long long)img->pref_address, img->init_size,
					 (unsigned long long)plan->low_ram_end);
	}
	if (!fits(plan->kernel_gpa, img->init_size, plan->low_ram_end))
		return kvmlu_err(err, errlen, -ENOMEM,
				 "Linux boot: kernel needs %#x bytes (init_size) at %#llx, RAM below 3 GiB ends at %#llx",
				 img->init_size, (unsigned long long)plan->kernel_gpa,
				 (unsigned long long)plan->low_ram_end);
	plan->kernel_end = plan->kernel_gpa + img->init_size;
	plan->entry = plan->kernel_gpa + LINUX_ENTRY64_OFFSET;

	if (in->initrd && in->initrd_size) {
		/* initrd_addr_max is the highest byte, inclusive. */
		top = (uint64_t)img->initrd_addr_max + 1;
		if (top > plan->low_ram_end)
			top = plan->low_ram_end;
		if (in->initrd_size > top || top - in->initrd_size < plan->kernel_end)
			return kvmlu_err(err, errlen, -ENOMEM,
					 "Linux boot: initrd of %zu bytes does not fit between the kernel's end %#llx and %#llx",
					 in->initrd_size, (unsigned long long)plan->kernel_end,
					 (unsigned long long)top);
		plan->initrd_gpa = (top - in->initrd_size) & ~0xfffULL;
		if (plan->initrd_gpa < plan->kernel_end)
			return kvmlu_err(err, errlen, -ENOMEM,
					 "Linux boot: initrd of %zu bytes does not fit above the kernel's end %#llx",
					 in->initrd_size, (unsigned long long)plan->kernel_end);
		plan->initrd_size = in->initrd_size;
	}
	return 0;
}

static void linux_write_gdt(uint64_t *gdt)
{
	long_mode_write_gdt(gdt, GDT_ENTRIES, LINUX_BOOT_CS, LINUX_BOOT_DS);
}

static void linux_write_page_tables(uint64_t *pml4, uint64_t *pdpt, uint64_t *pd)
{
	long_mode_identity_map(pml4, pdpt, pd, LINUX_PDPT_GPA, LINUX_PD_GPA,
			       LINUX_IDMAP_GIB, 0);
}

static int linux_write_zero_page(const struct guestmem *gm, const struct linux_load_input *in,
				 const struct linux_load_plan *plan, struct boot_params *bp,
				 char *err, size_t errlen)
{
	struct setup_header *h = &bp->hdr;
	unsigned int nr = 0;
	int rc;

	memset(bp, 0, sizeof(*bp));
	/* Fields past what this kernel's header has stay zero, as it expects. */
	memcpy(h, &in->image->hdr, in->image->hdr_copy_len);
	h->type_of_loader = LINUX_TYPE_OF_LOADER;
	h->vid_mode = 0xffff;		/* "normal": no video mode change */
	h->loadflags = (uint8_t)(h->loadflags & ~(QUIET_FLAG | KEEP_SEGMENTS | CAN_USE_HEAP));
	h->code32_start = (uint32_t)plan->kernel_gpa;
	h->cmd_line_ptr = (uint32_t)LINUX_CMDLINE_GPA;
	h->ramdisk_image = (uint32_t)plan->initrd_gpa;
	h->ramdisk_size = (uint32_t)plan->initrd_size;
	h->setup_data = 0;
	/* Kernels from 5.0 take the RSDP from here; older ones scan the BIOS area. */
	bp->acpi_rsdp_addr = LINUX_ACPI_GPA;

	rc = linux_e820_build(gm, bp->e820_table, E820_MAX_ENTRIES_ZEROPAGE, &nr, err, errlen);
	if (rc)
		return rc;
	bp->e820_entries = (uint8_t)nr;
	return 0;
}

int linux_load_write(const struct guestmem *gm, const struct linux_load_input *in,
		     const struct linux_load_plan *plan, char *err, size_t errlen)
{
	struct boot_params *bp;
	uint64_t *gdt, *pml4, *pdpt, *pd;
	void *kernel, *initrd = NULL, *mp, *acpi_buf;
	struct acpi_machine acpi;
	char *cmdline;
	size_t mp_len;
	int rc;

	if (!gm || !in || !in->image || !plan)
		return kvmlu_err(err, errlen, -EINVAL, "Linux boot: missing input");
	mp_len = mptable_size(in->nr_cpus);
	gdt = guestmem_gpa_to_hva(gm, LINUX_GDT_GPA, GDT_ENTRIES * 8);
	bp = guestmem_gpa_to_hva(gm, LINUX_BOOT_PARAMS_GPA, sizeof(*bp));
	pml4 = guestmem_gpa_to_hva(gm, LINUX_PML4_GPA, 4096);
	pdpt = guestmem_gpa_to_hva(gm, LINUX_PDPT_GPA, 4096);
	pd = guestmem_gpa_to_hva(gm, LINUX_PD_GPA, LINUX_IDMAP_GIB * 4096);
	cmdline = guestmem_gpa_to_hva(gm, LINUX_CMDLINE_GPA, plan->cmdline_len + 1);
	mp = guestmem_gpa_to_hva(gm, LINUX_MPTABLE_GPA, mp_len);
	acpi_buf = guestmem_gpa_to_hva(gm, LINUX_ACPI_GPA, LINUX_ACPI_END - LINUX_ACPI_GPA);
	kernel = guestmem_gpa_to_hva(gm, plan->kernel_gpa, in->image->kernel_size);
	if (plan->initrd_size)
		initrd = guestmem_gpa_to_hva(gm, plan->initrd_gpa, plan->initrd_size);
	if (!gdt || !bp || !pml4 || !pdpt || !pd || !cmdline || !mp || !acpi_buf || !kernel ||
	    (plan->initrd_size && !initrd))
		return kvmlu_err(err, errlen, -EFAULT,
				 "Linux boot: guest RAM lacks room planned for the boot structures (kernel at %#llx)",
				 (unsigned long long)plan->kernel_gpa);

	rc = linux_write_zero_page(gm, in, plan, bp, err, errlen);
	if (rc)
		return rc;
	rc = mptable_write(mp, mp_len, (uint32_t)LINUX_MPTABLE_GPA, in->nr_cpus, err, errlen);
	if (rc)
		return rc;
	linux_acpi_machine(in, &acpi);
	rc = acpi_tables_write(acpi_buf, LINUX_ACPI_END - LINUX_ACPI_GPA, LINUX_ACPI_GPA, &acpi,
			       err, errlen);
	if (rc)
		return rc;
	linux_write_gdt(gdt);
	linux_write_page_tables(pml4, pdpt, pd);
	memcpy(cmdline, in->cmdline, plan->cmdline_len + 1);
	memcpy(kernel, in->image->kernel, in->image->kernel_size);
	if (initrd)
		memcpy(initrd, in->initrd, plan->initrd_size);
	return 0;
}

void linux_load_bsp_regs(const struct linux_load_plan *plan, struct kvm_regs *regs,
			 struct kvm_sregs *sregs)
{
	long_mode_sregs(sregs, LINUX_BOOT_CS, LINUX_BOOT_DS, LINUX_GDT_GPA, GDT_ENTRIES,
			LINUX_PML4_GPA);

	memset(regs, 0, sizeof(*regs));
	regs->rip = plan->entry;
	regs->rsi = LINUX_BOOT_PARAMS_GPA;
	regs->rflags = 0x2;
}
