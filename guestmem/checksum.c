// SPDX-License-Identifier: GPL-2.0
/*
 * Checksum of guest RAM (XXH3-128), to prove memory came through an
 * upgrade or a kexec unchanged.
 *
 * The memory is cut into fixed chunks of GUESTMEM_CHECKSUM_CHUNK bytes
 * (a region's last chunk may be shorter). Threads take chunks from a shared
 * counter and hash each one on its own; the per-chunk digests are then
 * hashed in region and chunk order, after a version tag and each region's
 * gpa and size. So the sum depends only on the layout and the bytes, never
 * on how many threads ran or which chunk each took, and the same bytes at
 * another gpa give another sum.
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
 * ESPIPE) or any lseek error means "data": read it all, as before.
 *
 * Lifecycle: computed while the vCPUs are paused - before a kexec it goes
 * into the state FDT; after restore the new process computes it again and
 * compares before resuming. Changing the chunk size or the combining order
 * changes every sum: bump the version tag if that is ever done.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "guestmem/guestmem.h"

#define GUESTMEM_CHECKSUM_CHUNK		(2ULL << 20)
#define GUESTMEM_CHECKSUM_MAX_THREADS	64
/* With threads = 0, one thread per this much memory, up to the CPUs online. */
#define GUESTMEM_CHECKSUM_BYTES_PER_THREAD (256ULL << 20)

static const char guestmem_checksum_tag[] = "kvmlu guestmem xxh3-128 v1";

struct guestmem_checksum_job {
	const struct guestmem *gm;
	uint64_t first_chunk[GUESTMEM_MAX_REGIONS + 1];	/* per region, prefix sums */
	uint64_t nr_chunks;
	atomic_uint_fast64_t next;
	XXH128_hash_t *digests;
	atomic_int failed;
};

/* Zeros a hole feeds the hash with, a piece at a time. */
static const unsigned char guestmem_checksum_zeros[64 << 10];
static XXH128_hash_t guestmem_checksum_zero_chunk;
static bool guestmem_checksum_zero_chunk_ok;
static pthread_once_t guestmem_checksum_zero_once = PTHREAD_ONCE_INIT;

static void guestmem_checksum_hash_zeros(XXH3_state_t *st, uint64_t len)
{
	while (len) {
		size_t n = len < sizeof(guestmem_checksum_zeros) ?
			   (size_t)len : sizeof(guestmem_checksum_zeros);

		XXH3_128bits_update(st, guestmem_checksum_zeros, n);
		len -= n;
	}
}

static void guestmem_checksum_init_zero_chunk(void)
{
	XXH3_state_t *st = XXH3_createState();

	/* Without it every hole chunk is hashed byte by byte: same sum. */
	if (!st)
		return;
	XXH3_128bits_reset(st);
	guestmem_checksum_hash_zeros(st, GUESTMEM_CHECKSUM_CHUNK);
	guestmem_checksum_zero_chunk = XXH3_128bits_digest(st);
	guestmem_checksum_zero_chunk_ok = true;
	XXH3_freeState(st);
}

/*
 * A run of one region that is all data or all hole, as region offsets.
 * Each worker keeps the last one it found: a data run or a hole usually
 * spans many chunks, and SEEK_HOLE over a fully allocated file would
 * otherwise walk to the end of the file once per chunk.
 */
struct guestmem_checksum_extent {
	bool valid;
	bool data;
	unsigned int ri;
	uint64_t start, end;
};

static void guestmem_checksum_find_extent(const struct guestmem_region *g, uint64_t off,
					  struct guestmem_checksum_extent *e)
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

static void guestmem_checksum_chunk(struct guestmem_checksum_job *job, uint64_t idx,
				    XXH3_state_t *st, struct guestmem_checksum_extent *e)
{
	const struct guestmem *gm = job->gm;
	unsigned int ri = 0;
	uint64_t off, len, pos, end, n;
	const struct guestmem_region *g;

	while (idx >= job->first_chunk[ri + 1])
		ri++;
	g = &gm->r[ri];
	off = (idx - job->first_chunk[ri]) * GUESTMEM_CHECKSUM_CHUNK;
	len = g->size - off < GUESTMEM_CHECKSUM_CHUNK ? g->size - off : GUESTMEM_CHECKSUM_CHUNK;
	end = off + len;

	if (XXH3_128bits_reset(st) != XXH_OK) {
		atomic_store(&job->failed, 1);
		return;
	}
	for (pos = off; pos < end; pos += n) {
		if (!e->valid || e->ri != ri || pos < e->start || pos >= e->end) {
			guestmem_checksum_find_extent(g, pos, e);
			e->ri = ri;
			e->valid = true;
		}
		n = (e->end < end ? e->end : end) - pos;
		if (e->data) {
			/* Only data is read through the mapping: no page is allocated. */
			if (XXH3_128bits_update(st, (const char *)g->hva + pos, (size_t)n) != XXH_OK) {
				atomic_store(&job->failed, 1);
				return;
			}
		} else if (n == GUESTMEM_CHECKSUM_CHUNK && guestmem_checksum_zero_chunk_ok) {
			job->digests[idx] = guestmem_checksum_zero_chunk;
			return;
		} else {
			guestmem_checksum_hash_zeros(st, n);
		}
	}
	job->digests[idx] = XXH3_128bits_digest(st);
}

static void *guestmem_checksum_worker(void *arg)
{
	struct guestmem_checksum_job *job = arg;
	struct guestmem_checksum_extent e = { .valid = false };
	XXH3_state_t *st;
	uint64_t idx;

	st = XXH3_createState();
	if (!st) {
		atomic_store(&job->failed, 1);
		return NULL;
	}
	while ((idx = atomic_fetch_add(&job->next, 1)) < job->nr_chunks)
		guestmem_checksum_chunk(job, idx, st, &e);
	XXH3_freeState(st);
	return NULL;
}

static unsigned int guestmem_checksum_threads(uint64_t total, uint64_t nr_chunks,
					      unsigned int want)
{
	uint64_t n = want;

	if (n == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		n = (total + GUESTMEM_CHECKSUM_BYTES_PER_THREAD - 1) /
		    GUESTMEM_CHECKSUM_BYTES_PER_THREAD;
		if (cpus > 0 && n > (uint64_t)cpus)
			n = (uint64_t)cpus;
	}
	if (n > GUESTMEM_CHECKSUM_MAX_THREADS)
		n = GUESTMEM_CHECKSUM_MAX_THREADS;
	if (n > nr_chunks)
		n = nr_chunks;
	return n ? (unsigned int)n : 1;
}

static void guestmem_checksum_put_u64(XXH3_state_t *st, uint64_t v)
{
	unsigned char b[8];
	unsigned int i;

	/* Little-endian on every host, so a recorded sum means one thing. */
	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	XXH3_128bits_update(st, b, sizeof(b));
}

static int guestmem_checksum_combine(const struct guestmem_checksum_job *job,
				     struct guestmem_checksum *out)
{
	const struct guestmem *gm = job->gm;
	XXH3_state_t *st;
	XXH128_hash_t h;
	unsigned int ri;
	uint64_t i;

	st = XXH3_createState();
	if (!st)
		return -ENOMEM;
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, guestmem_checksum_tag, sizeof(guestmem_checksum_tag));
	guestmem_checksum_put_u64(st, GUESTMEM_CHECKSUM_CHUNK);
	guestmem_checksum_put_u64(st, gm->nr);
	for (ri = 0; ri < gm->nr; ri++) {
		guestmem_checksum_put_u64(st, gm->r[ri].gpa);
		guestmem_checksum_put_u64(st, gm->r[ri].size);
		for (i = job->first_chunk[ri]; i < job->first_chunk[ri + 1]; i++) {
			XXH128_canonical_t c;

			XXH128_canonicalFromHash(&c, job->digests[i]);
			XXH3_128bits_update(st, &c, sizeof(c));
		}
	}
	h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	out->hi = h.high64;
	out->lo = h.low64;
	return 0;
}

static uint64_t guestmem_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int guestmem_checksum(const struct guestmem *gm, unsigned int threads,
		      struct guestmem_checksum *out)
{
	pthread_t tids[GUESTMEM_CHECKSUM_MAX_THREADS];
	struct guestmem_checksum_job *job;
	unsigned int ri, n, started;
	uint64_t t0, total = 0;
	int ret;

	if (!gm || !out || gm->nr == 0 || gm->nr > GUESTMEM_MAX_REGIONS)
		return -EINVAL;
	t0 = guestmem_now_ns();

	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->gm = gm;
	for (ri = 0; ri < gm->nr; ri++) {
		const struct guestmem_region *g = &gm->r[ri];

		if (!g->hva || g->size == 0) {
			ret = -EINVAL;
			goto err_free_job;
		}
		job->first_chunk[ri] = job->nr_chunks;
		job->nr_chunks += (g->size + GUESTMEM_CHECKSUM_CHUNK - 1) / GUESTMEM_CHECKSUM_CHUNK;
		total += g->size;
	}
	job->first_chunk[gm->nr] = job->nr_chunks;
	atomic_init(&job->next, 0);
	atomic_init(&job->failed, 0);
	job->digests = calloc((size_t)job->nr_chunks, sizeof(*job->digests));
	if (!job->digests) {
		ret = -ENOMEM;
		goto err_free_job;
	}

	pthread_once(&guestmem_checksum_zero_once, guestmem_checksum_init_zero_chunk);
	n = guestmem_checksum_threads(total, job->nr_chunks, threads);
	/*
	 * The calling thread is worker 0. If a thread cannot be started the
	 * others just take more chunks: the sum does not change, only the
	 * thread count reported.
	 */
	for (started = 0; started + 1 < n; started++)
		if (pthread_create(&tids[started], NULL, guestmem_checksum_worker, job))
			break;
	guestmem_checksum_worker(job);
	for (ri = 0; ri < started; ri++)
		pthread_join(tids[ri], NULL);

	if (atomic_load(&job->failed)) {
		ret = -ENOMEM;
		goto err_free_digests;
	}
	ret = guestmem_checksum_combine(job, out);
	if (ret)
		goto err_free_digests;
	out->bytes = total;
	out->threads = started + 1;
	out->nsec = guestmem_now_ns() - t0;

err_free_digests:
	free(job->digests);
err_free_job:
	free(job);
	return ret;
}

void guestmem_checksum_format(const struct guestmem_checksum *c, char buf[33])
{
	snprintf(buf, 33, "%016" PRIx64 "%016" PRIx64, c->hi, c->lo);
}

static int guestmem_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int guestmem_checksum_parse(const char *s, uint64_t *hi, uint64_t *lo)
{
	uint64_t v[2] = { 0, 0 };
	unsigned int i;

	if (!s || !hi || !lo)
		return -EINVAL;
	/* Exactly the form guestmem_checksum_format() writes, nothing else. */
	for (i = 0; i < 32; i++) {
		int d = guestmem_hex_digit(s[i]);

		if (d < 0)
			return -EINVAL;
		v[i / 16] = v[i / 16] << 4 | (uint64_t)d;
	}
	if (s[32] != '\0')
		return -EINVAL;
	*hi = v[0];
	*lo = v[1];
	return 0;
}
