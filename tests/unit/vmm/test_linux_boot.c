// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the Linux boot path (vmm/boot/linux_bzimage.c,
 * linux_e820.c, linux_load.c, mptable.c) on a synthetic bzImage: header
 * validation and its refusals, the e820 map for a 256 MiB and a 4 GiB
 * guest (the PCI hole), kernel and initrd placement, the zero page, the
 * boot page tables and GDT, the MP table, the ACPI RSDP in the zero page
 * (the tables themselves: test_acpi_tables.c) and the boot vCPU's
 * registers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/vmm/test_linux_boot_support.h"
#include "vmm/boot/linux_e820.h"
#include "vmm/boot/linux_layout.h"
#include "vmm/boot/linux_load.h"
#include "vmm/boot/mptable.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)

static char errbuf[256];

static int parse(const uint8_t *img, size_t len, struct linux_bzimage *out)
{
	errbuf[0] = '\0';
	return linux_bzimage_parse(img, len, out, errbuf, sizeof(errbuf));
}

static void test_bzimage_parse_accepts_a_valid_header(void **state)
{
	uint8_t *img = tlb_make_image();
	struct linux_bzimage b;

	(void)state;
	assert_int_equal(parse(img, TLB_IMAGE_SIZE, &b), 0);
	assert_int_equal(b.version, 0x020f);
	assert_int_equal(b.setup_size, (TLB_SETUP_SECTS + 1) * 512);
	assert_ptr_equal(b.kernel, img + (TLB_SETUP_SECTS + 1) * 512);
	assert_int_equal(b.kernel_size, TLB_KERNEL_SIZE);
	assert_true(b.relocatable);
	assert_int_equal(b.pref_address, TLB_PREF_ADDRESS);
	assert_int_equal(b.alignment, 0x200000);
	assert_int_equal(b.init_size, TLB_INIT_SIZE);
	assert_int_equal(b.cmdline_max, 2047);
	assert_int_equal(b.initrd_addr_max, 0x7fffffff);
	assert_int_equal(b.hdr_copy_len, 0x26c - LINUX_SETUP_HDR_OFFSET);
	free(img);
}

static void test_bzimage_copies_only_known_header_fields(void **state)
{
	uint8_t *img = tlb_make_image();
	struct linux_bzimage b;

	(void)state;
	img[LINUX_JUMP_END_OFFSET] = 0xff;	/* a header from the future */
	assert_int_equal(parse(img, TLB_IMAGE_SIZE, &b), 0);
	assert_int_equal(b.hdr_copy_len, sizeof(struct setup_header));
	img[LINUX_JUMP_END_OFFSET] = 0x64;	/* a 2.12 header, up to init_size */
	assert_int_equal(parse(img, TLB_IMAGE_SIZE, &b), 0);
	assert_int_equal(b.hdr_copy_len, 0x266 - LINUX_SETUP_HDR_OFFSET);
	free(img);
}

static void test_bzimage_zero_setup_sects_means_four(void **state)
{
	uint8_t *img = tlb_make_image();
	struct linux_bzimage b;

	(void)state;
	img[TLB_OFF(setup_sects)] = 0;
	img[LINUX_JUMP_END_OFFSET] = 0x66;	/* header must end inside 5 sectors */
	assert_int_equal(parse(img, TLB_IMAGE_SIZE, &b), 0);
	assert_int_equal(b.setup_size, 5 * 512);
	free(img);
}

/* One corruption, the errno it must give and a word the message must hold. */
struct refusal {
	const char *what;
	size_t off;
	unsigned int width;	/* 1, 2 or 4 bytes */
	uint32_t value;
	int rc;
	const char *msg;
};

static const struct refusal refusals[] = {
	{ "boot_flag", LINUX_BOOT_FLAG_OFFSET, 2, 0x1234, -ENOEXEC, "boot_flag" },
	{ "HdrS", LINUX_HDRS_OFFSET, 4, 0x7f454c46, -ENOEXEC, "HdrS" },
	{ "old protocol", TLB_OFF(version), 2, 0x020b, -ENOTSUP, "protocol 2.11" },
	{ "zImage", TLB_OFF(loadflags), 1, 0, -ENOEXEC, "LOADED_HIGH" },
	{ "32-bit only", TLB_OFF(xloadflags), 2, 0, -ENOTSUP, "XLF_KERNEL_64" },
	{ "setup past file", TLB_OFF(setup_sects), 1, 200, -ENOEXEC, "setup_sects" },
	{ "syssize past file", TLB_OFF(syssize), 4, TLB_KERNEL_SIZE / 16 + 1, -ENOEXEC, "truncated" },
	{ "syssize 0", TLB_OFF(syssize), 4, 0, -ENOEXEC, "syssize" },
	{ "pref below alignment", TLB_OFF(kernel_alignment), 4, 0x800, -ENOEXEC, "kernel_alignment" },
	{ "init_size small", TLB_OFF(init_size), 4, 4096, -ENOEXEC, "init_size" },
	{ "alignment 3 MiB", TLB_OFF(kernel_alignment), 4, 0x300000, -ENOEXEC, "kernel_alignment" },
	{ "pref unaligned", TLB_OFF(pref_address), 4, 0x1001000, -ENOEXEC, "pref_address" },
};

static void put(uint8_t *img, const struct refusal *r)
{
	if (r->width == 1)
		img[r->off] = (uint8_t)r->value;
	else if (r->width == 2)
		le_put16(img + r->off, (uint16_t)r->value);
	else
		le_put32(img + r->off, r->value);
}

static void test_bzimage_parse_refuses_corrupt_headers(void **state)
{
	struct linux_bzimage b;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		uint8_t *img = tlb_make_image();

		put(img, r);
		printf("refusal %s\n", r->what);
		assert_int_equal(parse(img, TLB_IMAGE_SIZE, &b), r->rc);
		assert_non_null(strstr(errbuf, r->msg));
		free(img);
	}
}

static void test_bzimage_parse_refuses_truncated_files(void **state)
{
	uint8_t *img = tlb_make_image();
	struct linux_bzimage b;

	(void)state;
	assert_int_equal(parse(img, 0, &b), -ENOEXEC);
	assert_int_equal(parse(img, 0x200, &b), -ENOEXEC);
	assert_non_null(strstr(errbuf, "too short"));
	/* Header whole, kernel cut: syssize gives it away. */
	assert_int_equal(parse(img, TLB_IMAGE_SIZE - 1, &b), -ENOEXEC);
	assert_non_null(strstr(errbuf, "truncated"));
	/* Only the setup sectors. */
	assert_int_equal(parse(img, (TLB_SETUP_SECTS + 1) * 512, &b), -ENOEXEC);
	assert_int_equal(parse(NULL, 10, &b), -EINVAL);
	free(img);
}

static void test_bzimage_parse_refuses_non_kernels(void **state)
{
	uint8_t junk[4096];
	struct linux_bzimage b;

	(void)state;
	memset(junk, 0, sizeof(junk));
	memcpy(junk, "\x7f" "ELF", 4);
	assert_int_equal(parse(junk, sizeof(junk), &b), -ENOEXEC);
	memset(junk, 0xff, sizeof(junk));
	assert_int_equal(parse(junk, sizeof(junk), &b), -ENOEXEC);
}

static void expect_e820(const struct boot_e820_entry *e, uint64_t addr, uint64_t size,
			uint32_t type)
{
	assert_int_equal(e->addr, addr);
	assert_int_equal(e->size, size);
	assert_int_equal(e->type, type);
}

static void test_e820_for_256m_guest_has_low_holes_and_ram_to_the_top(void **state)
{
	struct boot_e820_entry t[E820_MAX_ENTRIES_ZEROPAGE];
	struct guestmem gm;
	unsigned int nr = 0;

	(void)state;
	assert_int_equal(guestmem_layout(256 * MIB, &gm), 0);
	assert_int_equal(linux_e820_build(&gm, t, E820_MAX_ENTRIES_ZEROPAGE, &nr, NULL, 0), 0);
	assert_int_equal(nr, 4);
	expect_e820(&t[0], 0, LINUX_EBDA_START, LINUX_E820_RAM);
	expect_e820(&t[1], LINUX_EBDA_START, 0xa0000 - LINUX_EBDA_START, LINUX_E820_RESERVED);
	expect_e820(&t[2], LINUX_BIOS_START, 0x10000, LINUX_E820_RESERVED);
	expect_e820(&t[3], MIB, 255 * MIB, LINUX_E820_RAM);
}

static void test_e820_for_4g_guest_skips_the_pci_hole(void **state)
{
	struct boot_e820_entry t[E820_MAX_ENTRIES_ZEROPAGE];
	struct guestmem gm;
	uint64_t ram = 0;
	unsigned int nr = 0, i;

	(void)state;
	assert_int_equal(guestmem_layout(4 * GIB, &gm), 0);
	assert_int_equal(linux_e820_build(&gm, t, E820_MAX_ENTRIES_ZEROPAGE, &nr, NULL, 0), 0);
	assert_int_equal(nr, 5);
	expect_e820(&t[3], MIB, 3 * GIB - MIB, LINUX_E820_RAM);
	expect_e820(&t[4], 4 * GIB, GIB, LINUX_E820_RAM);
	for (i = 0; i < nr; i++) {
		if (t[i].type == LINUX_E820_RAM)
			ram += t[i].size;
		/* Nothing in [3 GiB, 4 GiB): that is where the LAPIC and IOAPIC live. */
		assert_false(t[i].addr < 4 * GIB && t[i].addr + t[i].size > 3 * GIB);
	}
	/* All RAM but the EBDA KiB and the 384 KiB of legacy holes. */
	assert_int_equal(ram, 4 * GIB - (MIB - LINUX_EBDA_START));
}

static void test_e820_refuses_layouts_without_low_ram(void **state)
{
	struct boot_e820_entry t[8];
	struct guestmem gm;
	unsigned int nr = 0;

	(void)state;
	assert_int_equal(guestmem_layout(256 * MIB, &gm), 0);
	assert_int_equal(linux_e820_build(&gm, t, 3, &nr, errbuf, sizeof(errbuf)), -ENOSPC);
	gm.r[0].gpa = 2 * MIB;
	assert_int_equal(linux_e820_build(&gm, t, 8, &nr, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "0x200000"));
	memset(&gm, 0, sizeof(gm));
	assert_int_equal(linux_e820_build(&gm, t, 8, &nr, NULL, 0), -EINVAL);
}

struct boot_fixture {
	struct guestmem gm;
	uint8_t *img;
	struct linux_bzimage b;
	uint8_t *initrd;
	size_t initrd_size;
	struct linux_load_input in;
	struct linux_load_plan plan;
};

static int fixture(struct boot_fixture *f, uint64_t ram, size_t initrd_size)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	if (tlb_mem_create(&f->gm, ram))
		return -1;
	f->img = tlb_make_image();
	if (!f->img || linux_bzimage_parse(f->img, TLB_IMAGE_SIZE, &f->b, NULL, 0))
		return -1;
	if (initrd_size) {
		f->initrd = malloc(initrd_size);
		if (!f->initrd)
			return -1;
		for (i = 0; i < initrd_size; i++)
			f->initrd[i] = (uint8_t)(i ^ 0x5a);
		f->initrd_size = initrd_size;
	}
	f->in.image = &f->b;
	f->in.initrd = f->initrd;
	f->in.initrd_size = f->initrd_size;
	f->in.cmdline = "console=ttyS0 quiet";
	f->in.nr_cpus = 2;
	return 0;
}

static void fixture_free(struct boot_fixture *f)
{
	tlb_mem_destroy(&f->gm);
	free(f->img);
	free(f->initrd);
}

static void test_plan_puts_kernel_at_pref_address_and_initrd_at_the_top(void **state)
{
	struct boot_fixture f;

	(void)state;
	assert_int_equal(fixture(&f, 256 * MIB, 3 * MIB + 123), 0);
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), 0);
	assert_int_equal(f.plan.low_ram_end, 256 * MIB);
	assert_int_equal(f.plan.kernel_gpa, TLB_PREF_ADDRESS);
	assert_int_equal(f.plan.kernel_end, TLB_PREF_ADDRESS + TLB_INIT_SIZE);
	assert_int_equal(f.plan.entry, TLB_PREF_ADDRESS + 0x200);
	assert_int_equal(f.plan.initrd_size, 3 * MIB + 123);
	assert_int_equal(f.plan.initrd_gpa % 4096, 0);
	assert_true(f.plan.initrd_gpa + f.plan.initrd_size <= 256 * MIB);
	assert_true(256 * MIB - (f.plan.initrd_gpa + f.plan.initrd_size) < 4096);
	fixture_free(&f);
}

static void test_plan_keeps_initrd_below_initrd_addr_max_in_a_4g_guest(void **state)
{
	struct boot_fixture f;

	(void)state;
	assert_int_equal(fixture(&f, 4 * GIB, 5 * MIB), 0);
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), 0);
	assert_int_equal(f.plan.low_ram_end, 3 * GIB);
	/* initrd_addr_max 0x7fffffff: the last byte at 2 GiB - 1 at most. */
	assert_int_equal(f.plan.initrd_gpa, 2 * GIB - 5 * MIB);
	fixture_free(&f);
}

static void test_plan_falls_back_to_aligned_low_address_when_pref_does_not_fit(void **state)
{
	struct boot_fixture f;

	(void)state;
	assert_int_equal(fixture(&f, 32 * MIB, 0), 0);
	/* 16 MiB + 20 MiB does not fit in 32 MiB; 2 MiB + 20 MiB does. */
	f.b.init_size = 20 * MIB;
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), 0);
	assert_int_equal(f.plan.kernel_gpa, 2 * MIB);
	assert_int_equal(f.plan.initrd_gpa, 0);
	f.b.init_size = 31 * MIB;
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), -ENOMEM);
	assert_non_null(strstr(errbuf, "init_size"));
	fixture_free(&f);
}

static void test_plan_refuses_what_does_not_fit(void **state)
{
	struct boot_fixture f;
	char longline[3000];

	(void)state;
	assert_int_equal(fixture(&f, 64 * MIB, 40 * MIB), 0);
	/* Kernel ends at 24 MiB; 40 MiB of initrd do not fit in the 40 MiB above. */
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), 0);
	f.in.initrd_size = 40 * MIB + 1;
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), -ENOMEM);
	assert_non_null(strstr(errbuf, "initrd"));
	f.in.initrd_size = 1;

	memset(longline, 'a', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	f.in.cmdline = longline;
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), -E2BIG);
	assert_non_null(strstr(errbuf, "2047"));
	longline[2047] = '\0';
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), 0);
	f.in.cmdline = "";

	f.in.nr_cpus = 0;
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), -EINVAL);
	f.in.nr_cpus = MPTABLE_MAX_CPUS + 1;
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), -EINVAL);
	fixture_free(&f);

	assert_int_equal(fixture(&f, 16 * MIB, 0), 0);
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), -ENOMEM);
	assert_non_null(strstr(errbuf, "16 MiB"));
	fixture_free(&f);
}

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

static void test_write_fills_zero_page_tables_and_copies_images(void **state)
{
	struct boot_fixture f;
	struct boot_params *bp;
	const uint64_t *gdt, *pml4, *pdpt, *pd;
	const uint8_t *mp;
	uint32_t cfg;

	(void)state;
	assert_int_equal(fixture(&f, 256 * MIB, 2 * MIB + 7), 0);
	assert_int_equal(linux_load_plan(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), 0);
	assert_int_equal(linux_load_write(&f.gm, &f.in, &f.plan, errbuf, sizeof(errbuf)), 0);

	bp = guestmem_gpa_to_hva(&f.gm, LINUX_BOOT_PARAMS_GPA, sizeof(*bp));
	assert_int_equal(bp->hdr.header, LINUX_HDRS_MAGIC);
	assert_int_equal(bp->hdr.boot_flag, LINUX_BOOT_FLAG);
	assert_int_equal(bp->hdr.version, 0x020f);
	assert_int_equal(bp->hdr.type_of_loader, 0xff);
	assert_int_equal(bp->hdr.cmd_line_ptr, LINUX_CMDLINE_GPA);
	assert_int_equal(bp->hdr.ramdisk_image, f.plan.initrd_gpa);
	assert_int_equal(bp->hdr.ramdisk_size, 2 * MIB + 7);
	assert_int_equal(bp->hdr.code32_start, TLB_PREF_ADDRESS);
	assert_int_equal(bp->ext_ramdisk_image, 0);
	assert_int_equal(bp->e820_entries, 4);
	assert_int_equal(bp->e820_table[3].addr, MIB);
	assert_string_equal((char *)guestmem_gpa_to_hva(&f.gm, LINUX_CMDLINE_GPA, 1),
			    "console=ttyS0 quiet");
	assert_memory_equal(guestmem_gpa_to_hva(&f.gm, TLB_PREF_ADDRESS, TLB_KERNEL_SIZE),
			    f.b.kernel, TLB_KERNEL_SIZE);
	assert_memory_equal(guestmem_gpa_to_hva(&f.gm, f.plan.initrd_gpa, f.plan.initrd_size),
			    f.initrd, f.plan.initrd_size);

	gdt = guestmem_gpa_to_hva(&f.gm, LINUX_GDT_GPA, 32);
	assert_int_equal(gdt[0], 0);
	assert_int_equal(gdt[LINUX_BOOT_CS / 8] & (1ULL << 53), 1ULL << 53);	/* L bit */
	assert_int_equal(gdt[LINUX_BOOT_DS / 8] & (1ULL << 47), 1ULL << 47);	/* present */

	pml4 = guestmem_gpa_to_hva(&f.gm, LINUX_PML4_GPA, 4096);
	pdpt = guestmem_gpa_to_hva(&f.gm, LINUX_PDPT_GPA, 4096);
	pd = guestmem_gpa_to_hva(&f.gm, LINUX_PD_GPA, 4 * 4096);
	assert_int_equal(pml4[0] & ~0xfffULL, LINUX_PDPT_GPA);
	assert_int_equal(pml4[1], 0);
	assert_int_equal(pdpt[3] & ~0xfffULL, LINUX_PD_GPA + 3 * 4096);
	assert_int_equal(pdpt[4], 0);
	/* The kernel's 2 MiB page maps to itself, and so does the last one. */
	assert_int_equal(pd[TLB_PREF_ADDRESS >> 21] & ~0xfffULL, TLB_PREF_ADDRESS);
	assert_int_equal(pd[2047] & ~0xfffULL, 4 * GIB - 2 * MIB);
	assert_int_equal(pd[8] & 0x83, 0x83);

	mp = guestmem_gpa_to_hva(&f.gm, LINUX_MPTABLE_GPA, mptable_size(2));
	assert_memory_equal(mp, "_MP_", 4);
	assert_int_equal(sum(mp, 16), 0);
	memcpy(&cfg, mp + 4, 4);
	assert_int_equal(cfg, LINUX_MPTABLE_GPA + 16);
	assert_memory_equal(mp + 16, "PCMP", 4);
	assert_int_equal(sum(mp + 16, mptable_size(2) - 16), 0);

	/* The ACPI RSDP where the zero page says, in the BIOS area Linux scans. */
	assert_int_equal(bp->acpi_rsdp_addr, LINUX_ACPI_GPA);
	assert_true(LINUX_ACPI_GPA >= 0xe0000 && LINUX_ACPI_GPA % 16 == 0);
	assert_true(LINUX_ACPI_GPA >= LINUX_MPTABLE_GPA + mptable_size(MPTABLE_MAX_CPUS));
	mp = guestmem_gpa_to_hva(&f.gm, LINUX_ACPI_GPA, 36);
	assert_memory_equal(mp, "RSD PTR ", 8);
	assert_int_equal(sum(mp, 36), 0);
	fixture_free(&f);
}

static void test_bsp_regs_enter_startup_64_with_boot_params_in_rsi(void **state)
{
	struct linux_load_plan plan = { .entry = 0x1000200 };
	struct kvm_sregs sr;
	struct kvm_regs r;

	(void)state;
	memset(&sr, 0, sizeof(sr));
	sr.apic_base = 0xfee00900;
	linux_load_bsp_regs(&plan, &r, &sr);
	assert_int_equal(r.rip, 0x1000200);
	assert_int_equal(r.rsi, LINUX_BOOT_PARAMS_GPA);
	assert_int_equal(r.rflags & 0x200, 0);		/* IF clear */
	assert_int_equal(sr.cs.selector, LINUX_BOOT_CS);
	assert_int_equal(sr.cs.l, 1);
	assert_int_equal(sr.ds.selector, LINUX_BOOT_DS);
	assert_int_equal(sr.ss.selector, LINUX_BOOT_DS);
	assert_int_equal(sr.cr3, LINUX_PML4_GPA);
	assert_int_equal(sr.cr0 & 0x80000001, 0x80000001);	/* PG, PE */
	assert_int_equal(sr.efer & 0x500, 0x500);		/* LME, LMA */
	assert_int_equal(sr.apic_base, 0xfee00900);	/* untouched */
}

static void test_mptable_lists_every_cpu_once_and_checksums(void **state)
{
	uint8_t buf[8192];
	unsigned int n, i, cpus, bsp;

	(void)state;
	for (n = 1; n <= MPTABLE_MAX_CPUS; n += 51) {
		size_t len = mptable_size(n);
		uint16_t count;
		const uint8_t *p;

		assert_true(len <= sizeof(buf));
		assert_int_equal(mptable_write(buf, sizeof(buf), 0xf0000, n, NULL, 0), 0);
		assert_int_equal(sum(buf, 16), 0);
		assert_int_equal(sum(buf + 16, len - 16), 0);
		memcpy(&count, buf + 16 + 34, 2);
		assert_int_equal(count, n + 2 + MPTABLE_ISA_IRQS + 2);
		cpus = bsp = 0;
		for (p = buf + 16 + 44, i = 0; i < n; i++, p += 20) {
			assert_int_equal(p[0], 0);
			assert_int_equal(p[1], i);	/* LAPIC id = vCPU index */
			cpus++;
			bsp += (p[3] & 2) != 0;
		}
		assert_int_equal(cpus, n);
		assert_int_equal(bsp, 1);
		assert_int_equal(p[8], 2);		/* IOAPIC after the bus */
		assert_int_equal(p[9], n);		/* id after the CPUs */
	}
	assert_int_equal(mptable_write(buf, sizeof(buf), 0xf0000, 0, NULL, 0), -EINVAL);
	assert_int_equal(mptable_write(buf, sizeof(buf), 0xf0000, MPTABLE_MAX_CPUS + 1, NULL, 0),
			 -EINVAL);
	assert_int_equal(mptable_write(buf, mptable_size(4) - 1, 0xf0000, 4, NULL, 0), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bzimage_parse_accepts_a_valid_header),
		cmocka_unit_test(test_bzimage_copies_only_known_header_fields),
		cmocka_unit_test(test_bzimage_zero_setup_sects_means_four),
		cmocka_unit_test(test_bzimage_parse_refuses_corrupt_headers),
		cmocka_unit_test(test_bzimage_parse_refuses_truncated_files),
		cmocka_unit_test(test_bzimage_parse_refuses_non_kernels),
		cmocka_unit_test(test_e820_for_256m_guest_has_low_holes_and_ram_to_the_top),
		cmocka_unit_test(test_e820_for_4g_guest_skips_the_pci_hole),
		cmocka_unit_test(test_e820_refuses_layouts_without_low_ram),
		cmocka_unit_test(test_plan_puts_kernel_at_pref_address_and_initrd_at_the_top),
		cmocka_unit_test(test_plan_keeps_initrd_below_initrd_addr_max_in_a_4g_guest),
		cmocka_unit_test(test_plan_falls_back_to_aligned_low_address_when_pref_does_not_fit),
		cmocka_unit_test(test_plan_refuses_what_does_not_fit),
		cmocka_unit_test(test_write_fills_zero_page_tables_and_copies_images),
		cmocka_unit_test(test_bsp_regs_enter_startup_64_with_boot_params_in_rsi),
		cmocka_unit_test(test_mptable_lists_every_cpu_once_and_checksums),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
