/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory pattern: the 8-byte word at guest physical address gpa
 * holds mix64(gpa ^ seed), the seed being derived from the boot id. So
 * the pattern is different on every boot, every word is different from
 * every other, and a word moved, lost, zeroed or from another boot shows
 * up as wrong.
 *
 * Lifecycle: written once at first start (the vCPUs split the pattern
 * space by pages), never again; checked on each verify request. It
 * covers every RAM byte from KVMLU_PAYLOAD_AREA_END up, so all that RAM
 * must come back unchanged after pause, restore or a host kexec.
 */
#include <stdint.h>

#include "mix.h"
#include "pattern.h"

static inline uint64_t pattern_word(uint64_t seed, uint64_t gpa)
{
	return mix64(gpa ^ seed);
}

/*
 * Calls fn for each piece of RAM the pattern-space range [off, off+len)
 * covers. Runs at CPL 3; the loops below are what make fill and verify
 * run at memory speed.
 */
static void pattern_for_each(const struct pattern_ram *ram, uint64_t off, uint64_t len,
			     void (*fn)(uint64_t gpa, uint64_t bytes, uint64_t seed, void *ctx),
			     uint64_t seed, void *ctx)
{
	uint32_t i;

	for (i = 0; i < ram->nr_spans && len; i++) {
		const struct kvmlu_boot_region *s = &ram->spans[i];
		uint64_t n;

		if (off >= s->size) {
			off -= s->size;
			continue;
		}
		n = s->size - off;
		if (n > len)
			n = len;
		fn(s->gpa + off, n, seed, ctx);
		len -= n;
		off = 0;
	}
}

static void pattern_fill_piece(uint64_t gpa, uint64_t bytes, uint64_t seed, void *ctx)
{
	uint64_t *p = (uint64_t *)(uintptr_t)gpa;
	uint64_t i, n = bytes / 8;

	(void)ctx;
	for (i = 0; i < n; i++)
		p[i] = pattern_word(seed, gpa + 8 * i);
}

void pattern_fill(const struct pattern_ram *ram, uint64_t seed, uint64_t off, uint64_t len)
{
	pattern_for_each(ram, off, len, pattern_fill_piece, seed, 0);
}

static void pattern_verify_piece(uint64_t gpa, uint64_t bytes, uint64_t seed, void *ctx)
{
	const uint64_t *p = (const uint64_t *)(uintptr_t)gpa;
	uint64_t i, n = bytes / 8;

	for (i = 0; i < n; i++) {
		if (p[i] != pattern_word(seed, gpa + 8 * i))
			pattern_damage_add(ctx, gpa + 8 * i);
	}
}

void pattern_verify(const struct pattern_ram *ram, uint64_t seed, struct pattern_damage *d)
{
	pattern_for_each(ram, 0, ram->bytes, pattern_verify_piece, seed, d);
}
