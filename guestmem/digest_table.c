// SPDX-License-Identifier: GPL-2.0
/*
 * The per-chunk digest table of guest RAM (digest_table.h) and the one
 * code that hashes a chunk and combines the digests, so the incremental
 * and the full checksum (checksum.c) cannot drift apart.
 *
 * Hashing: threads take stale chunks from a shared counter and hash each
 * one on its own; the digests are then hashed in region and chunk order,
 * after a version tag and each region's gpa and size. So the sum depends
 * only on the layout and the bytes, never on how many threads ran, which
 * chunk each took or how many refreshes built the table, and the same
 * bytes at another gpa give another sum.
 *
 * Holes are hashed without being touched. A read fault through a
 * MAP_SHARED mapping of a memfd allocates a page for a hole (unlike pread,
 * or a private mapping's zero page), so hashing every byte through the
 * mapping would make all of guest RAM resident: a 2 GiB guest with 28 MiB
 * in use ended up 2 GiB resident. So each chunk is walked with
 * SEEK_DATA/SEEK_HOLE on the region's file; data is read through the
 * mapping, a hole feeds the same number of zero bytes to the hash from a
 * static buffer (a whole-hole chunk takes the digest of a zero chunk,
 * computed once). The hash sees exactly the bytes it saw before, so the
 * sum does not change. A file that cannot seek holes (guest_memfd:
 * ESPIPE) or any lseek error means "data": read it all.
 *
 * Changing the chunk size or the combining order changes every sum: bump
 * the version tag if that is ever done.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/clock.h"
#include "guestmem/digest_table.h"

#define DIGEST_MAX_THREADS	64
/* With threads = 0, one thread per this much memory, up to the CPUs online. */
#define DIGEST_BYTES_PER_THREAD	(256ULL << 20)

static const char digest_tag[] = "kvmlu guestmem xxh3-128 v1";

/* Zeros a hole feeds the hash with, a piece at a time. */
static const unsigned char digest_zeros[64 << 10];
static struct guestmem_chunk_digest digest_zero_chunk;
static bool digest_zero_chunk_ok;
static pthread_once_t digest_zero_once = PTHREAD_ONCE_INIT;

static void digest_hash_zeros(XXH3_state_t *st, uint64_t len)
{
	while (len) {
		size_t n = len < sizeof(digest_zeros) ? (size_t)len : sizeof(digest_zeros);

		XXH3_128bits_update(st, digest_zeros, n);
		len -= n;
	}
}

static void digest_init_zero_chunk(void)
{
	XXH3_state_t *st = XXH3_createState();
	XXH128_hash_t h;

	/* Without it every hole chunk is hashed byte by byte: same sum. */
	if (!st)
		return;
	XXH3_128bits_reset(st);
	digest_hash_zeros(st, GUESTMEM_DIGEST_CHUNK);
	h = XXH3_128bits_digest(st);
	digest_zero_chunk = (struct guestmem_chunk_digest){ .hi = h.high64, .lo = h.low64 };
	digest_zero_chunk_ok = true;
	XXH3_freeState(st);
}

int guestmem_digest_table_init(struct guestmem_digest_table *t, const struct guestmem *gm)
{
	unsigned int ri;

	memset(t, 0, sizeof(*t));
	if (!gm || gm->nr == 0 || gm->nr > GUESTMEM_MAX_REGIONS)
		return -EINVAL;
	for (ri = 0; ri < gm->nr; ri++) {
		const struct guestmem_region *g = &gm->r[ri];

		if (!g->hva || g->size == 0)
			return -EINVAL;
		t->first_chunk[ri] = t->nr_chunks;
		t->nr_chunks += (g->size + GUESTMEM_DIGEST_CHUNK - 1) / GUESTMEM_DIGEST_CHUNK;
	}
	t->first_chunk[gm->nr] = t->nr_chunks;
	t->digest = calloc((size_t)t->nr_chunks, sizeof(*t->digest));
	t->stale = malloc((size_t)t->nr_chunks);
	if (!t->digest || !t->stale) {
		guestmem_digest_table_free(t);
		return -ENOMEM;
	}
	t->gm = gm;
	guestmem_digest_table_mark_all(t);
	return 0;
}

void guestmem_digest_table_free(struct guestmem_digest_table *t)
{
	free(t->digest);
	free(t->stale);
	memset(t, 0, sizeof(*t));
}

void guestmem_digest_table_mark_all(struct guestmem_digest_table *t)
{
	if (!t->stale)
		return;
	memset(t->stale, 1, (size_t)t->nr_chunks);
	t->nr_stale = t->nr_chunks;
}

void guestmem_digest_table_mark(struct guestmem_digest_table *t, unsigned int ri,
				uint64_t off, uint64_t len)
{
	uint64_t size, c, last;

	if (!t->gm || ri >= t->gm->nr || len == 0)
		return;
	size = t->gm->r[ri].size;
	if (off >= size)
		return;
	if (len > size - off)
		len = size - off;
	last = t->first_chunk[ri] + (off + len - 1) / GUESTMEM_DIGEST_CHUNK;
	for (c = t->first_chunk[ri] + off / GUESTMEM_DIGEST_CHUNK; c <= last; c++) {
		if (!t->stale[c])
			t->nr_stale++;
		t->stale[c] = 1;
	}
}

void guestmem_digest_table_mark_bitmap(struct guestmem_digest_table *t, unsigned int ri,
				       const uint64_t *bitmap, uint64_t nr_pages,
				       uint64_t page_size, uint64_t *dirty_pages)
{
	uint64_t w, count = 0;

	for (w = 0; w < (nr_pages + 63) / 64; w++) {
		uint64_t bits = bitmap[w];

		while (bits) {
			uint64_t page = w * 64 + (uint64_t)__builtin_ctzll(bits);

			bits &= bits - 1;
			if (page >= nr_pages)
				break;
			count++;
			guestmem_digest_table_mark(t, ri, page * page_size, page_size);
		}
	}
	if (dirty_pages)
		*dirty_pages = count;
}

/*
 * A run of one region that is all data or all hole, as region offsets.
 * Each worker keeps the last one it found: a data run or a hole usually
 * spans many chunks, and SEEK_HOLE over a fully allocated file would
 * otherwise walk to the end of the file once per chunk.
 */
struct digest_extent {
	bool valid;
	bool data;
	unsigned int ri;
	uint64_t start, end;
};

static void digest_find_extent(const struct guestmem_region *g, uint64_t off,
			       struct digest_extent *e)
{
	off_t base = (off_t)g->fd_offset, d, h;

	e->start = off;
	e->end = g->size;
	e->data = true;
	d = lseek(g->fd, base + (off_t)off, SEEK_DATA);
	if (d < 0) {
		/* ENXIO: only holes up to the end of the file. Else: cannot tell. */
		if (errno == ENXIO)
			e->data = false;
		return;
	}
	if (d > base + (off_t)off) {
		e->data = false;
		if ((uint64_t)(d - base) < e->end)
			e->end = (uint64_t)(d - base);
		return;
	}
	h = lseek(g->fd, d, SEEK_HOLE);
	if (h > d && (uint64_t)(h - base) < e->end)
		e->end = (uint64_t)(h - base);
}

struct digest_job {
	struct guestmem_digest_table *t;
	uint64_t *todo;			/* chunk indices to hash */
	uint8_t *done;			/* per todo entry: hashed */
	uint64_t nr_todo;
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC; 0: none */
	atomic_uint_fast64_t next;
	atomic_int failed;
};


static int digest_chunk(const struct guestmem_digest_table *t, uint64_t idx, XXH3_state_t *st,
			struct digest_extent *e, struct guestmem_chunk_digest *out)
{
	const struct guestmem_region *g;
	uint64_t off, end, pos, n;
	unsigned int ri = 0;
	XXH128_hash_t h;

	while (idx >= t->first_chunk[ri + 1])
		ri++;
	g = &t->gm->r[ri];
	off = (idx - t->first_chunk[ri]) * GUESTMEM_DIGEST_CHUNK;
	end = g->size - off < GUESTMEM_DIGEST_CHUNK ? g->size : off + GUESTMEM_DIGEST_CHUNK;

	if (XXH3_128bits_reset(st) != XXH_OK)
		return -ENOMEM;
	for (pos = off; pos < end; pos += n) {
		if (!e->valid || e->ri != ri || pos < e->start || pos >= e->end) {
			digest_find_extent(g, pos, e);
			e->ri = ri;
			e->valid = true;
		}
		n = (e->end < end ? e->end : end) - pos;
		if (e->data) {
			/* Only data is read through the mapping: no page is allocated. */
			if (XXH3_128bits_update(st, (const char *)g->hva + pos, (size_t)n) != XXH_OK)
				return -ENOMEM;
		} else if (n == GUESTMEM_DIGEST_CHUNK && digest_zero_chunk_ok) {
			*out = digest_zero_chunk;
			return 0;
		} else {
			digest_hash_zeros(st, n);
		}
	}
	h = XXH3_128bits_digest(st);
	*out = (struct guestmem_chunk_digest){ .hi = h.high64, .lo = h.low64 };
	return 0;
}

static void *digest_worker(void *arg)
{
	struct digest_job *job = arg;
	struct digest_extent e = { .valid = false };
	XXH3_state_t *st;
	uint64_t i;

	st = XXH3_createState();
	if (!st) {
		atomic_store(&job->failed, 1);
		return NULL;
	}
	while ((i = atomic_fetch_add(&job->next, 1)) < job->nr_todo) {
		uint64_t idx = job->todo[i];

		/* Past the deadline the chunks stay stale: hashed another time. */
		if (job->deadline_ns && kvmlu_mono_ns() > job->deadline_ns)
			break;
		if (digest_chunk(job->t, idx, st, &e, &job->t->digest[idx])) {
			atomic_store(&job->failed, 1);
			break;
		}
		job->done[i] = 1;
	}
	XXH3_freeState(st);
	return NULL;
}

static unsigned int digest_threads(uint64_t nr_chunks, unsigned int want)
{
	uint64_t n = want;

	if (n == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		n = (nr_chunks * GUESTMEM_DIGEST_CHUNK + DIGEST_BYTES_PER_THREAD - 1) /
		    DIGEST_BYTES_PER_THREAD;
		if (cpus > 0 && n > (uint64_t)cpus)
			n = (uint64_t)cpus;
	}
	if (n > DIGEST_MAX_THREADS)
		n = DIGEST_MAX_THREADS;
	if (n > nr_chunks)
		n = nr_chunks;
	return n ? (unsigned int)n : 1;
}

int guestmem_digest_table_refresh(struct guestmem_digest_table *t, unsigned int threads,
				  uint64_t *hashed, unsigned int *threads_used)
{
	return guestmem_digest_table_refresh_by(t, threads, 0, hashed, threads_used);
}

int guestmem_digest_table_refresh_by(struct guestmem_digest_table *t, unsigned int threads,
				     uint64_t deadline_ns, uint64_t *hashed,
				     unsigned int *threads_used)
{
	pthread_t tids[DIGEST_MAX_THREADS];
	struct digest_job job = { .t = t, .deadline_ns = deadline_ns };
	unsigned int n, started, i;
	uint64_t c, count = 0;

	if (hashed)
		*hashed = 0;
	if (threads_used)
		*threads_used = 0;
	if (!t->gm)
		return -EINVAL;
	if (t->nr_stale == 0)
		return 0;
	job.todo = malloc((size_t)t->nr_stale * sizeof(*job.todo));
	job.done = calloc((size_t)t->nr_stale, 1);
	if (!job.todo || !job.done) {
		free(job.todo);
		free(job.done);
		return -ENOMEM;
	}
	for (c = 0; c < t->nr_chunks; c++)
		if (t->stale[c])
			job.todo[job.nr_todo++] = c;
	atomic_init(&job.next, 0);
	atomic_init(&job.failed, 0);

	pthread_once(&digest_zero_once, digest_init_zero_chunk);
	n = digest_threads(job.nr_todo, threads);
	/*
	 * The calling thread is worker 0. If a thread cannot be started the
	 * others just take more chunks: the digests do not change.
	 */
	for (started = 0; started + 1 < n; started++)
		if (pthread_create(&tids[started], NULL, digest_worker, &job))
			break;
	digest_worker(&job);
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);

	if (atomic_load(&job.failed)) {
		free(job.todo);
		free(job.done);
		return -ENOMEM;
	}
	for (c = 0; c < job.nr_todo; c++) {
		if (!job.done[c])
			continue;
		t->stale[job.todo[c]] = 0;
		count++;
	}
	t->nr_stale -= count;
	if (hashed)
		*hashed = count;
	if (threads_used)
		*threads_used = started + 1;
	free(job.todo);
	free(job.done);
	return 0;
}

int guestmem_digest_table_hash_chunk(const struct guestmem_digest_table *t, uint64_t idx,
				     struct guestmem_chunk_digest *out)
{
	struct digest_extent e = { .valid = false };
	XXH3_state_t *st;
	int ret;

	if (!t->gm || idx >= t->nr_chunks)
		return -EINVAL;
	pthread_once(&digest_zero_once, digest_init_zero_chunk);
	st = XXH3_createState();
	if (!st)
		return -ENOMEM;
	ret = digest_chunk(t, idx, st, &e, out);
	XXH3_freeState(st);
	return ret;
}

static void digest_put_u64(XXH3_state_t *st, uint64_t v)
{
	unsigned char b[8];
	unsigned int i;

	/* Little-endian on every host, so a recorded sum means one thing. */
	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	XXH3_128bits_update(st, b, sizeof(b));
}

uint64_t guestmem_digest_chunks(const struct guestmem *layout)
{
	uint64_t n = 0;

	if (!layout || layout->nr == 0 || layout->nr > GUESTMEM_MAX_REGIONS)
		return 0;
	for (unsigned int ri = 0; ri < layout->nr; ri++) {
		if (layout->r[ri].size == 0)
			return 0;
		n += (layout->r[ri].size + GUESTMEM_DIGEST_CHUNK - 1) / GUESTMEM_DIGEST_CHUNK;
	}
	return n;
}

int guestmem_digest_sum(const struct guestmem *layout, const struct guestmem_chunk_digest *d,
			uint64_t n, uint64_t *hi, uint64_t *lo)
{
	XXH3_state_t *st;
	XXH128_hash_t h;
	uint64_t i = 0;

	if (!d || n == 0 || n != guestmem_digest_chunks(layout))
		return -EINVAL;
	st = XXH3_createState();
	if (!st)
		return -ENOMEM;
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, digest_tag, sizeof(digest_tag));
	digest_put_u64(st, GUESTMEM_DIGEST_CHUNK);
	digest_put_u64(st, layout->nr);
	for (unsigned int ri = 0; ri < layout->nr; ri++) {
		uint64_t end = i + (layout->r[ri].size + GUESTMEM_DIGEST_CHUNK - 1) /
				   GUESTMEM_DIGEST_CHUNK;

		digest_put_u64(st, layout->r[ri].gpa);
		digest_put_u64(st, layout->r[ri].size);
		for (; i < end; i++) {
			XXH128_hash_t x = { .low64 = d[i].lo, .high64 = d[i].hi };
			XXH128_canonical_t c;

			XXH128_canonicalFromHash(&c, x);
			XXH3_128bits_update(st, &c, sizeof(c));
		}
	}
	h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	*hi = h.high64;
	*lo = h.low64;
	return 0;
}

int guestmem_digest_table_sum(const struct guestmem_digest_table *t, uint64_t *hi,
			      uint64_t *lo)
{
	if (!t->gm)
		return -EINVAL;
	if (t->nr_stale)
		return -EAGAIN;
	return guestmem_digest_sum(t->gm, t->digest, t->nr_chunks, hi, lo);
}
