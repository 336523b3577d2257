/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a Linux boot puts things in guest physical memory. Fixed numbers,
 * chosen once: the boot structures the kernel reads only while it starts
 * (GDT, page tables, zero page, command line) lie in the first 64 KiB,
 * which Linux keeps for itself (CONFIG_X86_RESERVE_LOW) and copies what it
 * needs out of before it reuses RAM; the MP table and the ACPI tables lie
 * in the BIOS area that the e820 map reports as reserved, because Linux
 * keeps reading them (and scans 0xe0000-0xfffff for the ACPI RSDP).
 *
 * Lifecycle: used by linux_boot_load() at first boot only. A restored VM
 * never rewrites them, so changing a number here does not affect running
 * guests.
 */
#ifndef KVMLU_VMM_LINUX_LAYOUT_H
#define KVMLU_VMM_LINUX_LAYOUT_H

#define LINUX_GDT_GPA		0x1000ULL
#define LINUX_BOOT_PARAMS_GPA	0x7000ULL	/* the zero page, RSI at entry */
#define LINUX_PML4_GPA		0x9000ULL
#define LINUX_PDPT_GPA		0xa000ULL
#define LINUX_PD_GPA		0xb000ULL	/* LINUX_IDMAP_GIB pages */
#define LINUX_IDMAP_GIB		4ULL		/* identity map of 0..4 GiB */
#define LINUX_CMDLINE_GPA	0xf000ULL
#define LINUX_CMDLINE_MAX	4095u		/* one page with its NUL */
#define LINUX_LOW_STRUCT_END	0x10000ULL

/* Legacy holes the e820 map never reports as RAM. */
#define LINUX_EBDA_START	0x9fc00ULL	/* top KiB of base memory */
#define LINUX_BIOS_START	0xf0000ULL	/* BIOS ROM area: MP and ACPI tables */
#define LINUX_HIGH_MEM_START	0x100000ULL	/* 1 MiB */
#define LINUX_MPTABLE_GPA	LINUX_BIOS_START	/* up to 8 KiB */
#define LINUX_ACPI_GPA		0xf2000ULL	/* RSDP first, then the tables */
#define LINUX_ACPI_END		LINUX_HIGH_MEM_START

/* Boot GDT selectors the 64-bit boot protocol asks for. */
#define LINUX_BOOT_CS		0x10
#define LINUX_BOOT_DS		0x18

/* Anything smaller cannot hold the structures, a kernel and its init_size. */
#define LINUX_MIN_RAM		(32ULL << 20)

#endif /* KVMLU_VMM_LINUX_LAYOUT_H */
