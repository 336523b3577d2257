/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small encoder of ACPI Machine Language (ACPI 6.5, chapter 20): just
 * what a DSDT of static devices needs — Scope, Device, Name with integer,
 * string and buffer values, and the resource descriptors of a _CRS
 * (chapter 6.4). Nothing is evaluated; the guest's interpreter reads it.
 *
 * The encoder writes into a caller's fixed buffer. Running out of room is
 * sticky: every later call does nothing and aml_error() says -ENOSPC, so a
 * builder checks once at the end. Packages (Scope, Device) are opened with
 * aml_*_begin() and closed with aml_pkg_end(), which inserts the
 * PkgLength in front of the body once the body's size is known.
 *
 * Lifecycle: used while the DSDT is written at first boot (dsdt.c).
 */
#ifndef KVMLU_VMM_ACPI_AML_H
#define KVMLU_VMM_ACPI_AML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct aml {
	uint8_t *buf;
	size_t cap, len;
	bool full;
};

void aml_init(struct aml *a, void *buf, size_t cap);
/* 0, or -ENOSPC if anything did not fit. */
int aml_error(const struct aml *a);

void aml_byte(struct aml *a, uint8_t b);
void aml_bytes(struct aml *a, const void *p, size_t n);

/* A NameString: "\\_SB_" (root + one segment) or one 4-char segment. */
void aml_name_string(struct aml *a, const char *name);
/* The shortest integer encoding: ZeroOp, OneOp, Byte/Word/DWord/QWordConst. */
void aml_integer(struct aml *a, uint64_t v);
/* StringPrefix, the ASCII bytes, NUL. */
void aml_string(struct aml *a, const char *s);
/* Name(name, ...): NameOp and the name; the value is written next. */
void aml_name(struct aml *a, const char *name);
/* Buffer { bytes }: BufferOp, PkgLength, BufferSize, the bytes. */
void aml_buffer(struct aml *a, const void *bytes, size_t n);

/* Scope(name) { / Device(name) {: returns the mark aml_pkg_end() needs. */
size_t aml_scope_begin(struct aml *a, const char *name);
size_t aml_device_begin(struct aml *a, const char *name);
void aml_pkg_end(struct aml *a, size_t mark);

/*
 * Resource descriptors for a _CRS buffer, appended to a byte array the
 * caller owns (rt, with room for *len + the descriptor's size). Sizes:
 */
#define AML_RES_IO_SIZE		8u	/* I/O port, 16-bit decode */
#define AML_RES_IRQ_SIZE	3u	/* IRQNoFlags: ISA, edge, active high */
#define AML_RES_MEM32F_SIZE	12u	/* Memory32Fixed, read-write */
#define AML_RES_XIRQ_SIZE	9u	/* Interrupt(Consumer, Edge, ActiveHigh, Exclusive) */
#define AML_RES_END_SIZE	2u	/* End tag */
#define AML_RES_WORD_BUS_SIZE	16u	/* WordBusNumber, a bridge's (producer) range */
#define AML_RES_DWORD_MEM_SIZE	26u	/* DWordMemory, a bridge's (producer) window, read-write */
void aml_res_io(uint8_t *rt, size_t *len, uint16_t port, uint8_t count);
void aml_res_irq(uint8_t *rt, size_t *len, unsigned int irq);
void aml_res_mem32_fixed(uint8_t *rt, size_t *len, uint32_t base, uint32_t size);
void aml_res_ext_irq(uint8_t *rt, size_t *len, uint32_t gsi);
void aml_res_end(uint8_t *rt, size_t *len);
void aml_res_word_bus(uint8_t *rt, size_t *len, uint16_t min, uint16_t max);
void aml_res_dword_mem(uint8_t *rt, size_t *len, uint32_t base, uint32_t size);

#endif /* KVMLU_VMM_ACPI_AML_H */
