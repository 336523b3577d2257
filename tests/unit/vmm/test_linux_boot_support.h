/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the test_linux_boot*.c unit tests: a guest RAM stand-in (the
 * guestmem layout of a given size, each region an anonymous lazily
 * allocated mapping, so a 4 GiB guest costs only the pages touched) and a
 * synthetic bzImage with the header fields a real kernel has.
 * Header-only: each test binary is one .c file.
 */
#ifndef KVMLU_TEST_LINUX_BOOT_SUPPORT_H
#define KVMLU_TEST_LINUX_BOOT_SUPPORT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/le_bytes.h"
#include "guestmem/guestmem.h"
#include "vmm/boot/linux_bzimage.h"

static inline int tlb_mem_create(struct guestmem *gm, uint64_t size)
{
	unsigned int i;
	int rc = guestmem_layout(size, gm);

	if (rc)
		return rc;
	for (i = 0; i < gm->nr; i++) {
		void *p = mmap(NULL, gm->r[i].size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		gm->r[i].hva = p;
	}
	return 0;
}

static inline void tlb_mem_destroy(struct guestmem *gm)
{
	unsigned int i;

	for (i = 0; i < gm->nr; i++)
		if (gm->r[i].hva)
			munmap(gm->r[i].hva, gm->r[i].size);
	memset(gm, 0, sizeof(*gm));
}

#define TLB_SETUP_SECTS		15
#define TLB_KERNEL_SIZE		(64u << 10)
#define TLB_IMAGE_SIZE		((TLB_SETUP_SECTS + 1) * 512 + TLB_KERNEL_SIZE)
#define TLB_INIT_SIZE		(8u << 20)
#define TLB_PREF_ADDRESS	0x1000000u

/* Offsets of the boot protocol (Documentation/arch/x86/boot.rst). */
#define TLB_OFF(field) (LINUX_SETUP_HDR_OFFSET + offsetof(struct setup_header, field))

/* A protocol 2.15 bzImage of TLB_IMAGE_SIZE bytes; the kernel part is a pattern. */
static inline uint8_t *tlb_make_image(void)
{
	uint8_t *img = calloc(1, TLB_IMAGE_SIZE);
	size_t i;

	if (!img)
		return NULL;
	img[TLB_OFF(setup_sects)] = TLB_SETUP_SECTS;
	le_put32(img + TLB_OFF(syssize), TLB_KERNEL_SIZE / 16);
	le_put16(img + LINUX_BOOT_FLAG_OFFSET, LINUX_BOOT_FLAG);
	img[LINUX_JUMP_END_OFFSET] = 0x6a;	/* header ends at 0x26c */
	le_put32(img + LINUX_HDRS_OFFSET, LINUX_HDRS_MAGIC);
	le_put16(img + TLB_OFF(version), 0x020f);
	img[TLB_OFF(loadflags)] = LOADED_HIGH;
	le_put32(img + TLB_OFF(code32_start), 0x100000);
	le_put32(img + TLB_OFF(initrd_addr_max), 0x7fffffff);
	le_put32(img + TLB_OFF(kernel_alignment), 0x200000);
	img[TLB_OFF(relocatable_kernel)] = 1;
	le_put16(img + TLB_OFF(xloadflags), XLF_KERNEL_64 | XLF_CAN_BE_LOADED_ABOVE_4G);
	le_put32(img + TLB_OFF(cmdline_size), 2047);
	le_put32(img + TLB_OFF(pref_address), TLB_PREF_ADDRESS);
	le_put32(img + TLB_OFF(init_size), TLB_INIT_SIZE);
	for (i = (TLB_SETUP_SECTS + 1) * 512; i < TLB_IMAGE_SIZE; i++)
		img[i] = (uint8_t)(i * 7 + 3);
	return img;
}

#endif /* KVMLU_TEST_LINUX_BOOT_SUPPORT_H */
