/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A 64-bit bijective mix and its inverse: the witness's memory pattern
 * and its self-checking slots are built from it. Bijective matters: two
 * different inputs never give the same word, and a slot word can be
 * decoded back to the tick that wrote it (slots.c).
 *
 * Each step is invertible: x ^= x >> 32 undoes itself, and multiplying
 * by an odd constant is undone by multiplying by its inverse mod 2^64.
 */
#ifndef WITNESS_MIX_H
#define WITNESS_MIX_H

#include <stdint.h>

#define MIX_M1 0x9e3779b97f4a7c15ULL
#define MIX_M2 0xbf58476d1ce4e5b9ULL

/* Newton steps for an odd m's inverse: each doubles the correct low bits (3, 6, ... 96). */
#define MIX_INV_STEP(m, x) ((x) * (2ULL - (m) * (x)))
#define MIX_INV(m) \
	MIX_INV_STEP(m, MIX_INV_STEP(m, MIX_INV_STEP(m, MIX_INV_STEP(m, MIX_INV_STEP(m, (m))))))

_Static_assert(MIX_M1 * MIX_INV(MIX_M1) == 1, "MIX_M1 inverse");
_Static_assert(MIX_M2 * MIX_INV(MIX_M2) == 1, "MIX_M2 inverse");

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 32;
	x *= MIX_M1;
	x ^= x >> 32;
	x *= MIX_M2;
	x ^= x >> 32;
	return x;
}

static inline uint64_t mix64_inverse(uint64_t x)
{
	x ^= x >> 32;
	x *= MIX_INV(MIX_M2);
	x ^= x >> 32;
	x *= MIX_INV(MIX_M1);
	x ^= x >> 32;
	return x;
}

#endif /* WITNESS_MIX_H */
