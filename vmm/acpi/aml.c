// SPDX-License-Identifier: GPL-2.0
/*
 * AML encoder (see aml.h). Opcodes and encodings are those of ACPI 6.5
 * 20.2 (AML grammar) and 6.4 (resource data types).
 */
#include <errno.h>
#include <string.h>

#include "vmm/acpi/acpi_sdt.h"
#include "vmm/acpi/aml.h"

#define AML_ZERO_OP		0x00
#define AML_ONE_OP		0x01
#define AML_NAME_OP		0x08
#define AML_BYTE_PREFIX		0x0a
#define AML_WORD_PREFIX		0x0b
#define AML_DWORD_PREFIX	0x0c
#define AML_STRING_PREFIX	0x0d
#define AML_QWORD_PREFIX	0x0e
#define AML_SCOPE_OP		0x10
#define AML_BUFFER_OP		0x11
#define AML_EXT_OP_PREFIX	0x5b
#define AML_DEVICE_OP		0x82	/* after AML_EXT_OP_PREFIX */
#define AML_ROOT_CHAR		'\\'

/* A PkgLength counts its own bytes; 1 to 4 of them, 28 bits at most. */
#define AML_PKG_MAX		0x0fffffffu

void aml_init(struct aml *a, void *buf, size_t cap)
{
	a->buf = buf;
	a->cap = cap;
	a->len = 0;
	a->full = false;
}

int aml_error(const struct aml *a)
{
	return a->full ? -ENOSPC : 0;
}

void aml_bytes(struct aml *a, const void *p, size_t n)
{
	if (a->full || n > a->cap - a->len) {
		a->full = true;
		return;
	}
	memcpy(a->buf + a->len, p, n);
	a->len += n;
}

void aml_byte(struct aml *a, uint8_t b)
{
	aml_bytes(a, &b, 1);
}

/* A NameSeg is 4 characters: a lead [A-Z_] and [A-Z0-9_]; shorter ones are
 * padded with '_' as iasl does. Anything else is a bug in this file's
 * callers, so it is replaced rather than reported. */
static void aml_name_seg(struct aml *a, const char *s)
{
	uint8_t seg[4] = { '_', '_', '_', '_' };
	size_t i;

	for (i = 0; i < 4 && s[i]; i++) {
		char c = s[i];
		bool ok = (c >= 'A' && c <= 'Z') || c == '_' || (i && c >= '0' && c <= '9');

		seg[i] = (uint8_t)(ok ? c : '_');
	}
	aml_bytes(a, seg, 4);
}

void aml_name_string(struct aml *a, const char *name)
{
	if (name[0] == AML_ROOT_CHAR) {
		aml_byte(a, AML_ROOT_CHAR);
		name++;
	}
	aml_name_seg(a, name);
}

void aml_integer(struct aml *a, uint64_t v)
{
	uint8_t b[9];

	if (v == 0 || v == 1) {
		aml_byte(a, v ? AML_ONE_OP : AML_ZERO_OP);
		return;
	}
	if (v <= 0xff) {
		b[0] = AML_BYTE_PREFIX;
		b[1] = (uint8_t)v;
		aml_bytes(a, b, 2);
	} else if (v <= 0xffff) {
		b[0] = AML_WORD_PREFIX;
		le_put16(b + 1, (uint16_t)v);
		aml_bytes(a, b, 3);
	} else if (v <= 0xffffffffu) {
		b[0] = AML_DWORD_PREFIX;
		le_put32(b + 1, (uint32_t)v);
		aml_bytes(a, b, 5);
	} else {
		b[0] = AML_QWORD_PREFIX;
		le_put64(b + 1, v);
		aml_bytes(a, b, 9);
	}
}

void aml_string(struct aml *a, const char *s)
{
	aml_byte(a, AML_STRING_PREFIX);
	aml_bytes(a, s, strlen(s) + 1);
}

void aml_name(struct aml *a, const char *name)
{
	aml_byte(a, AML_NAME_OP);
	aml_name_string(a, name);
}

/* Bytes of the PkgLength for a body of n bytes: the length includes itself. */
static size_t aml_pkg_len_size(size_t n)
{
	if (n + 1 <= 0x3f)
		return 1;
	if (n + 2 <= 0xfff)
		return 2;
	if (n + 3 <= 0xfffff)
		return 3;
	return 4;
}

static void aml_pkg_len_encode(uint8_t *p, size_t body, size_t size)
{
	uint32_t total = (uint32_t)(body + size);
	size_t i;

	if (size == 1) {
		p[0] = (uint8_t)total;
		return;
	}
	/* Lead byte: count of following bytes in bits 7-6, low nibble in 3-0. */
	p[0] = (uint8_t)(((size - 1) << 6) | (total & 0x0f));
	for (i = 1; i < size; i++)
		p[i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
}

void aml_pkg_end(struct aml *a, size_t mark)
{
	size_t body, size;

	if (a->full)
		return;
	body = a->len - mark;
	size = aml_pkg_len_size(body);
	if (body + size > AML_PKG_MAX || size > a->cap - a->len) {
		a->full = true;
		return;
	}
	memmove(a->buf + mark + size, a->buf + mark, body);
	aml_pkg_len_encode(a->buf + mark, body, size);
	a->len += size;
}

size_t aml_scope_begin(struct aml *a, const char *name)
{
	size_t mark;

	aml_byte(a, AML_SCOPE_OP);
	mark = a->len;
	aml_name_string(a, name);
	return mark;
}

size_t aml_device_begin(struct aml *a, const char *name)
{
	size_t mark;

	aml_byte(a, AML_EXT_OP_PREFIX);
	aml_byte(a, AML_DEVICE_OP);
	mark = a->len;
	aml_name_string(a, name);
	return mark;
}

void aml_buffer(struct aml *a, const void *bytes, size_t n)
{
	size_t mark;

	aml_byte(a, AML_BUFFER_OP);
	mark = a->len;
	aml_integer(a, n);
	aml_bytes(a, bytes, n);
	aml_pkg_end(a, mark);
}

void aml_res_io(uint8_t *rt, size_t *len, uint16_t port, uint8_t count)
{
	uint8_t *p = rt + *len;

	p[0] = 0x47;		/* small item: I/O port, 7 bytes */
	p[1] = 0x01;		/* decodes 16 address bits */
	le_put16(p + 2, port);	/* minimum base */
	le_put16(p + 4, port);	/* maximum base: fixed */
	p[6] = 1;		/* alignment */
	p[7] = count;		/* ports */
	*len += AML_RES_IO_SIZE;
}

void aml_res_irq(uint8_t *rt, size_t *len, unsigned int irq)
{
	uint8_t *p = rt + *len;

	p[0] = 0x22;		/* small item: IRQ, 2 bytes: ISA defaults, edge high */
	le_put16(p + 1, (uint16_t)(1u << (irq & 15)));
	*len += AML_RES_IRQ_SIZE;
}

void aml_res_mem32_fixed(uint8_t *rt, size_t *len, uint32_t base, uint32_t size)
{
	uint8_t *p = rt + *len;

	p[0] = 0x86;		/* large item: 32-bit fixed memory range */
	le_put16(p + 1, 9);
	p[3] = 0x01;		/* read-write */
	le_put32(p + 4, base);
	le_put32(p + 8, size);
	*len += AML_RES_MEM32F_SIZE;
}

void aml_res_ext_irq(uint8_t *rt, size_t *len, uint32_t gsi)
{
	uint8_t *p = rt + *len;

	p[0] = 0x89;		/* large item: extended interrupt */
	le_put16(p + 1, 6);
	/* bit 0 consumer, bit 1 edge; active high (bit 2 clear), exclusive (bit 3 clear) */
	p[3] = 0x03;
	p[4] = 1;		/* one interrupt number follows */
	le_put32(p + 5, gsi);
	*len += AML_RES_XIRQ_SIZE;
}

void aml_res_end(uint8_t *rt, size_t *len)
{
	uint8_t *p = rt + *len;

	p[0] = 0x79;		/* end tag */
	p[1] = 0;		/* checksum 0: "the template sums to zero", accepted as is */
	*len += AML_RES_END_SIZE;
}

/* Address space descriptors (ACPI 6.5, 6.4.3.5): general flags of a bridge's window. */
#define AML_ADDR_PRODUCER_FIXED	0x0c	/* producer, positive decode, min and max fixed */

void aml_res_word_bus(uint8_t *rt, size_t *len, uint16_t min, uint16_t max)
{
	uint8_t *p = rt + *len;

	p[0] = 0x88;		/* large item: word address space */
	le_put16(p + 1, AML_RES_WORD_BUS_SIZE - 3);
	p[3] = 2;		/* bus number range */
	p[4] = AML_ADDR_PRODUCER_FIXED;
	p[5] = 0;
	le_put16(p + 6, 0);	/* granularity */
	le_put16(p + 8, min);
	le_put16(p + 10, max);
	le_put16(p + 12, 0);	/* translation */
	le_put16(p + 14, (uint16_t)(max - min + 1));
	*len += AML_RES_WORD_BUS_SIZE;
}

void aml_res_dword_mem(uint8_t *rt, size_t *len, uint32_t base, uint32_t size)
{
	uint8_t *p = rt + *len;

	p[0] = 0x87;		/* large item: dword address space */
	le_put16(p + 1, AML_RES_DWORD_MEM_SIZE - 3);
	p[3] = 0;		/* memory */
	p[4] = AML_ADDR_PRODUCER_FIXED;
	p[5] = 0x01;		/* read-write, non-cacheable */
	le_put32(p + 6, 0);	/* granularity */
	le_put32(p + 10, base);
	le_put32(p + 14, base + size - 1);
	le_put32(p + 18, 0);	/* translation */
	le_put32(p + 22, size);
	*len += AML_RES_DWORD_MEM_SIZE;
}
