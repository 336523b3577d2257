// SPDX-License-Identifier: GPL-2.0
/*
 * bzImage setup header parsing and validation: see linux_bzimage.h.
 *
 * Every number read from the file is checked against the file's length
 * before it is used as a size or offset, so a corrupt or truncated image
 * ends here with an error instead of as an out-of-bounds read or a guest
 * that dies without a word on its console.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "common/err.h"
#include "common/le_bytes.h"
#include "vmm/boot/linux_bzimage.h"

/* The file must hold the whole header struct we read, up to 2.15's fields. */
#define LINUX_HDR_END	(LINUX_SETUP_HDR_OFFSET + sizeof(struct setup_header))

int linux_bzimage_parse(const uint8_t *buf, size_t len, struct linux_bzimage *out,
			char *err, size_t errlen)
{
	const struct setup_header *h;
	size_t setup_sects, hdr_end;

	if (!buf || !out)
		return kvmlu_err(err, errlen, -EINVAL, "bzImage: no buffer");
	memset(out, 0, sizeof(*out));
	if (len < LINUX_HDR_END)
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: file is %zu bytes, too short for a setup header (%zu)",
				 len, (size_t)LINUX_HDR_END);
	if (len > LINUX_BZIMAGE_MAX_SIZE)
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: file is %zu bytes, more than the %u MiB limit",
				 len, LINUX_BZIMAGE_MAX_SIZE >> 20);
	if (le_get16(buf + LINUX_BOOT_FLAG_OFFSET) != LINUX_BOOT_FLAG)
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: boot_flag is 0x%04x, not 0xaa55: not a Linux kernel image",
				 le_get16(buf + LINUX_BOOT_FLAG_OFFSET));
	if (le_get32(buf + LINUX_HDRS_OFFSET) != LINUX_HDRS_MAGIC)
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: header magic is 0x%08x, not \"HdrS\": not a bzImage",
				 le_get32(buf + LINUX_HDRS_OFFSET));

	/* The struct is packed and the file little-endian, as is the host. */
	memcpy(&out->hdr, buf + LINUX_SETUP_HDR_OFFSET, sizeof(out->hdr));
	h = &out->hdr;
	out->version = h->version;
	if (h->version < LINUX_MIN_PROTOCOL)
		return kvmlu_err(err, errlen, -ENOTSUP,
				 "bzImage: boot protocol %u.%02u, need at least %u.%02u (64-bit entry)",
				 h->version >> 8, h->version & 0xff,
				 LINUX_MIN_PROTOCOL >> 8, LINUX_MIN_PROTOCOL & 0xff);
	if (!(h->loadflags & LOADED_HIGH))
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: loadflags 0x%02x lack LOADED_HIGH: a zImage, not a bzImage",
				 h->loadflags);
	if (!(h->xloadflags & XLF_KERNEL_64))
		return kvmlu_err(err, errlen, -ENOTSUP,
				 "bzImage: xloadflags 0x%04x lack XLF_KERNEL_64: no 64-bit entry point",
				 h->xloadflags);

	/* Protocol: a setup_sects of 0 means 4. */
	setup_sects = h->setup_sects ? h->setup_sects : 4;
	out->setup_size = (setup_sects + 1) * 512;
	if (out->setup_size >= len)
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: setup_sects %zu (%zu bytes) leave no kernel in a %zu-byte file",
				 setup_sects, out->setup_size, len);
	out->kernel = buf + out->setup_size;
	out->kernel_size = len - out->setup_size;
	/* syssize counts 16-byte paragraphs; a truncated file has fewer. */
	if ((uint64_t)h->syssize * 16 > out->kernel_size)
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: syssize says %llu kernel bytes, the file has %zu: truncated",
				 (unsigned long long)h->syssize * 16, out->kernel_size);
	if (h->syssize == 0)
		return kvmlu_err(err, errlen, -ENOEXEC, "bzImage: syssize is 0");

	/*
	 * At most 0x301, always inside the setup code (>= 0x400 bytes).
	 * Newer fields than we know stay zero in boot_params.
	 */
	hdr_end = LINUX_HDRS_OFFSET + buf[LINUX_JUMP_END_OFFSET];
	if (hdr_end > LINUX_HDR_END)
		hdr_end = LINUX_HDR_END;
	out->hdr_copy_len = hdr_end - LINUX_SETUP_HDR_OFFSET;

	out->init_size = h->init_size;
	if (out->init_size < out->kernel_size)
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: init_size 0x%x is smaller than the kernel (0x%zx bytes)",
				 out->init_size, out->kernel_size);
	out->relocatable = h->relocatable_kernel != 0;
	out->alignment = h->kernel_alignment;
	if (out->relocatable &&
	    (out->alignment < 4096 || (out->alignment & (out->alignment - 1))))
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: kernel_alignment 0x%x is not a power of two >= 4 KiB",
				 out->alignment);
	out->pref_address = h->pref_address;
	if (out->relocatable && out->pref_address % out->alignment)
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: pref_address 0x%llx is not aligned to 0x%x",
				 (unsigned long long)out->pref_address, out->alignment);
	if (!out->relocatable && h->code32_start < 0x100000)
		return kvmlu_err(err, errlen, -ENOEXEC,
				 "bzImage: code32_start 0x%x is below 1 MiB", h->code32_start);
	out->cmdline_max = h->cmdline_size;
	out->initrd_addr_max = h->initrd_addr_max;
	return 0;
}
