/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A Linux x86 bzImage as the VMM sees it before loading it: the setup
 * header (Documentation/arch/x86/boot.rst) checked field by field, and
 * where the protected-mode kernel lies in the file. The file is untrusted
 * input: linux_bzimage_parse() bounds-checks everything and refuses, with
 * a message naming the field and its value, an image that is not a
 * bzImage, speaks a protocol older than the 64-bit entry (2.12), or whose
 * sizes contradict the file.
 *
 * Lifecycle: parsed once at `kvmlu-vmm run --kernel`, consumed by
 * linux_boot_load() which copies it into guest RAM; nothing of it is kept
 * after boot (a restored VM never looks at the image again).
 */
#ifndef KVMLU_VMM_LINUX_BZIMAGE_H
#define KVMLU_VMM_LINUX_BZIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <asm/bootparam.h>

/* Offsets in the image (and in boot_params) fixed by the boot protocol. */
#define LINUX_SETUP_HDR_OFFSET	0x1f1
#define LINUX_BOOT_FLAG_OFFSET	0x1fe
#define LINUX_JUMP_END_OFFSET	0x201	/* header ends at 0x202 + this byte */
#define LINUX_HDRS_OFFSET	0x202
#define LINUX_BOOT_FLAG		0xAA55
#define LINUX_HDRS_MAGIC	0x53726448	/* "HdrS" */
/* 2.12 added xloadflags, which says whether the 64-bit entry exists. */
#define LINUX_MIN_PROTOCOL	0x020c
/* startup_64 sits this far into the protected-mode kernel. */
#define LINUX_ENTRY64_OFFSET	0x200
/* Kernels refuse images larger than this anyway; bounds a file read. */
#define LINUX_BZIMAGE_MAX_SIZE	(256u << 20)

struct linux_bzimage {
	struct setup_header hdr;	/* as in the file (host endian = LE) */
	uint16_t version;		/* boot protocol, e.g. 0x020f */
	size_t setup_size;		/* real-mode part: (setup_sects + 1) * 512 */
	const uint8_t *kernel;		/* protected-mode part, inside the buffer */
	size_t kernel_size;
	/* bytes of header to copy into boot_params from LINUX_SETUP_HDR_OFFSET */
	size_t hdr_copy_len;
	bool relocatable;
	uint64_t pref_address;		/* where the kernel wants to run */
	uint32_t alignment;		/* for a relocatable load */
	uint32_t init_size;		/* memory it needs from its load address */
	uint32_t cmdline_max;		/* longest command line, without the NUL */
	uint32_t initrd_addr_max;	/* highest byte an initrd may occupy */
};

/*
 * Check buf[0..len) is a bzImage this VMM can boot and describe it.
 * out->kernel points into buf, which must outlive out. Returns 0,
 * -ENOEXEC (not a bzImage / truncated / inconsistent) or -ENOTSUP (too
 * old a protocol, no 64-bit entry); err says which field and value.
 */
int linux_bzimage_parse(const uint8_t *buf, size_t len, struct linux_bzimage *out,
			char *err, size_t errlen);

#endif /* KVMLU_VMM_LINUX_BZIMAGE_H */
