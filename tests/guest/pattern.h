/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The witness's memory pattern over all RAM above the payload area
 * (see pattern.c).
 */
#ifndef WITNESS_PATTERN_H
#define WITNESS_PATTERN_H

#include <stdint.h>

#include <kvmlu/payload_abi.h>

#define PATTERN_PAGE_SIZE 4096ULL

/* The RAM the pattern covers: the boot info's regions, cut at KVMLU_PAYLOAD_AREA_END. */
struct pattern_ram {
	uint32_t nr_spans;
	struct kvmlu_boot_region spans[KVMLU_BOOT_MAX_REGIONS];
	uint64_t bytes;		/* sum of the spans, a multiple of a page */
};

/* What a verification found wrong; first_bad is the lowest bad GPA. */
struct pattern_damage {
	uint64_t bad_words;
	uint64_t first_bad;	/* UINT64_MAX when nothing is bad */
};

static inline void pattern_damage_init(struct pattern_damage *d)
{
	d->bad_words = 0;
	d->first_bad = UINT64_MAX;
}

static inline void pattern_damage_add(struct pattern_damage *d, uint64_t gpa)
{
	d->bad_words++;
	if (gpa < d->first_bad)
		d->first_bad = gpa;
}

/* Fills bytes [off, off + len) of the pattern space (page multiples). */
void pattern_fill(const struct pattern_ram *ram, uint64_t seed, uint64_t off, uint64_t len);
/* Checks all of it; adds each wrong 8-byte word to *d. */
void pattern_verify(const struct pattern_ram *ram, uint64_t seed, struct pattern_damage *d);

#endif /* WITNESS_PATTERN_H */
