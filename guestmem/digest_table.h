/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-chunk digests of guest RAM: the table the memory checksum is made
 * of, kept so that only the chunks written since can be hashed again.
 *
 * Guest RAM is cut into GUESTMEM_DIGEST_CHUNK (2 MiB) chunks, region by
 * region (a region's last chunk may be shorter). Each chunk has an
 * XXH3-128 digest and a "stale" mark. guestmem_digest_table_refresh()
 * hashes every stale chunk and clears its mark; guestmem_digest_table_sum()
 * combines the digests into the whole-memory checksum, the very value
 * guestmem_checksum() computes (that function is a full table, refreshed
 * once, summed).
 *
 * Lifecycle with dirty logging (dirty_log.h), while the vCPUs run:
 *   init (all stale) -> dirty logging on -> refresh (the full pass) ->
 *   [collect the dirty log, which marks chunks stale -> refresh]* ->
 *   pause the vCPUs -> collect -> refresh -> sum.
 * A chunk's digest is only trusted if nothing wrote the chunk after the
 * dirty log that last covered it was collected; the log is collected
 * (get-and-clear) BEFORE the chunks it names are hashed, so a write that
 * lands while a chunk is being hashed shows up in the next collection.
 * Writes KVM does not see (another process writing the file) are not
 * tracked: a table would then hold a stale digest and the checksum
 * after the kexec would refuse the memory, never accept wrong memory.
 *
 * All functions return 0 or -errno and never exit().
 */
#ifndef KVMLU_GUESTMEM_DIGEST_TABLE_H
#define KVMLU_GUESTMEM_DIGEST_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "guestmem/guestmem.h"

#define GUESTMEM_DIGEST_CHUNK	(2ULL << 20)

struct guestmem_chunk_digest {
	uint64_t hi, lo;	/* XXH128 high and low 64 bits */
};

struct guestmem_digest_table {
	const struct guestmem *gm;	/* the RAM it describes; not owned */
	uint64_t first_chunk[GUESTMEM_MAX_REGIONS + 1];	/* per region, prefix sums */
	uint64_t nr_chunks;
	struct guestmem_chunk_digest *digest;	/* nr_chunks */
	uint8_t *stale;			/* nr_chunks flags: 1 = hash again */
	uint64_t nr_stale;
};

/* Every chunk of gm's regions, all stale. gm must stay mapped. */
int guestmem_digest_table_init(struct guestmem_digest_table *t, const struct guestmem *gm);
/* Safe on a zeroed table and twice. */
void guestmem_digest_table_free(struct guestmem_digest_table *t);

/* Chunks of memory region ri the byte range [off, off + len) touches: stale. */
void guestmem_digest_table_mark(struct guestmem_digest_table *t, unsigned int ri,
				uint64_t off, uint64_t len);
void guestmem_digest_table_mark_all(struct guestmem_digest_table *t);
/*
 * A dirty bitmap of region ri as KVM_GET_DIRTY_LOG fills it: bit p of
 * word p / 64 set = page p (page_size bytes) written. Marks the chunks of
 * the set bits stale; *dirty_pages (optional) gets the count of set bits.
 */
void guestmem_digest_table_mark_bitmap(struct guestmem_digest_table *t, unsigned int ri,
				       const uint64_t *bitmap, uint64_t nr_pages,
				       uint64_t page_size, uint64_t *dirty_pages);

/*
 * Hash every stale chunk with up to `threads` threads (0: pick from the
 * amount and the CPUs online) and clear its mark. *hashed (optional):
 * how many chunks were hashed. On error the marks stay.
 */
int guestmem_digest_table_refresh(struct guestmem_digest_table *t, unsigned int threads,
				  uint64_t *hashed, unsigned int *threads_used);
/*
 * The same, but no chunk is started after deadline_ns (CLOCK_MONOTONIC;
 * 0: no deadline): those stay stale, for a later refresh.
 */
int guestmem_digest_table_refresh_by(struct guestmem_digest_table *t, unsigned int threads,
				     uint64_t deadline_ns, uint64_t *hashed,
				     unsigned int *threads_used);

/*
 * Hash chunk idx now into *out, leaving the table's digest and mark
 * alone (lazy_verify.c verifies one chunk at a time this way). Safe from
 * several threads at once.
 */
int guestmem_digest_table_hash_chunk(const struct guestmem_digest_table *t, uint64_t idx,
				     struct guestmem_chunk_digest *out);

/*
 * The digests of a layout (only gpa and size of gm's regions are used: a
 * state's plan works, nothing needs to be mapped). Chunks: how many a
 * table of it has; 0 if the layout is not usable. Sum: the whole-memory
 * checksum of n digests in region and chunk order; -EINVAL unless n is
 * that count.
 */
uint64_t guestmem_digest_chunks(const struct guestmem *layout);
int guestmem_digest_sum(const struct guestmem *layout, const struct guestmem_chunk_digest *d,
			uint64_t n, uint64_t *hi, uint64_t *lo);

/* The whole-memory checksum of the table; -EAGAIN while a chunk is stale. */
int guestmem_digest_table_sum(const struct guestmem_digest_table *t, uint64_t *hi,
			      uint64_t *lo);

#endif /* KVMLU_GUESTMEM_DIGEST_TABLE_H */
