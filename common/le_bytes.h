/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Little-endian integers in byte buffers that may be unaligned: the boot
 * protocol's header, ACPI tables. Byte by byte, so neither alignment nor
 * the host's byte order matters.
 */
#ifndef KVMLU_COMMON_LE_BYTES_H
#define KVMLU_COMMON_LE_BYTES_H

#include <stdint.h>

static inline void le_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void le_put32(uint8_t *p, uint32_t v)
{
	le_put16(p, (uint16_t)v);
	le_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void le_put64(uint8_t *p, uint64_t v)
{
	le_put32(p, (uint32_t)v);
	le_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t le_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le_get32(const uint8_t *p)
{
	return (uint32_t)le_get16(p) | (uint32_t)le_get16(p + 2) << 16;
}

#endif /* KVMLU_COMMON_LE_BYTES_H */
