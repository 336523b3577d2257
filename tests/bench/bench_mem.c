// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-bench-mem: guest RAM checksum throughput next to plain memory-read
 * throughput over the same memfd-backed mapping, in the same run and with
 * the same thread count, so the ratio means something on a noisy machine.
 *
 * Lifecycle: create the RAM (guestmem_create, memfd), fill it, then
 * alternate read-sum and checksum passes --repeat times and report the best
 * pass of each, one line: size, threads, GB/s of each, ratio. Run by
 * tests/bench/bench_checksum.sh from `make bench`; never by `make check`.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guestmem/guestmem.h"

#define BENCH_CHUNK (2ULL << 20)	/* same grain as the checksum's chunks */
#define BENCH_MAX_THREADS 64

struct bench_read {
	const struct guestmem *gm;
	atomic_uint_fast64_t next;
	uint64_t nr_chunks;
	atomic_uint_fast64_t sum;
};

static uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Chunk idx of the whole RAM, regions in order. */
static const uint64_t *bench_chunk(const struct guestmem *gm, uint64_t idx, size_t *words)
{
	unsigned int i;

	for (i = 0; i < gm->nr; i++) {
		uint64_t n = (gm->r[i].size + BENCH_CHUNK - 1) / BENCH_CHUNK;

		if (idx < n) {
			uint64_t off = idx * BENCH_CHUNK;
			uint64_t len = gm->r[i].size - off < BENCH_CHUNK ? gm->r[i].size - off : BENCH_CHUNK;

			*words = (size_t)(len / 8);
			return (const uint64_t *)((const char *)gm->r[i].hva + off);
		}
		idx -= n;
	}
	return NULL;
}

static void *bench_read_worker(void *arg)
{
	struct bench_read *b = arg;
	uint64_t idx, sum = 0;

	while ((idx = atomic_fetch_add(&b->next, 1)) < b->nr_chunks) {
		size_t words = 0, i;
		const uint64_t *p = bench_chunk(b->gm, idx, &words);

		for (i = 0; p && i < words; i++)
			sum += p[i];
	}
	atomic_fetch_add(&b->sum, sum);
	return NULL;
}

/* A plain sum of every 64-bit word, threads sharing chunks like the checksum. */
static int bench_read_sum(const struct guestmem *gm, unsigned int threads,
			  uint64_t *nsec, uint64_t *sum)
{
	pthread_t tids[BENCH_MAX_THREADS];
	struct bench_read b;
	unsigned int i, started;
	uint64_t t0 = bench_now_ns();

	memset(&b, 0, sizeof(b));
	b.gm = gm;
	for (i = 0; i < gm->nr; i++)
		b.nr_chunks += (gm->r[i].size + BENCH_CHUNK - 1) / BENCH_CHUNK;
	atomic_init(&b.next, 0);
	atomic_init(&b.sum, 0);
	for (started = 0; started + 1 < threads; started++)
		if (pthread_create(&tids[started], NULL, bench_read_worker, &b))
			return -EAGAIN;
	bench_read_worker(&b);
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	*nsec = bench_now_ns() - t0;
	*sum = atomic_load(&b.sum);
	return 0;
}

static void bench_fill(const struct guestmem *gm)
{
	unsigned int i;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (i = 0; i < gm->nr; i++) {
		uint64_t *w = gm->r[i].hva;
		uint64_t j;

		for (j = 0; j < gm->r[i].size / 8; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			w[j] = x;
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: kvmlu-bench-mem --size SIZE [--threads N] [--repeat R]\n"
		   "  SIZE as for --memory (256M, 2G); N = 0 lets the checksum pick\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t size = 0, best_read = UINT64_MAX, best_sum = UINT64_MAX, rsum = 0;
	unsigned int threads = 0, repeat = 3, i;
	struct guestmem_checksum c;
	struct guestmem gm;
	char err[256], hex[33];
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "s:t:r:h", opts, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (opt) {
		case 's':
			if (guestmem_parse_size(optarg, &size)) {
				fprintf(stderr, "kvmlu-bench-mem: bad --size %s (e.g. 256M, 2G)\n", optarg);
				return 2;
			}
			break;
		case 't':
		case 'r':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || v > BENCH_MAX_THREADS ||
			    (opt == 'r' && v == 0)) {
				fprintf(stderr, "kvmlu-bench-mem: bad --%s %s\n",
					opt == 't' ? "threads" : "repeat", optarg);
				return 2;
			}
			if (opt == 't')
				threads = (unsigned int)v;
			else
				repeat = (unsigned int)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!size || optind != argc) {
		usage(stderr);
		return 2;
	}

	ret = guestmem_create(&gm, GUESTMEM_MEMFD, size, -1, "bench", err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kvmlu-bench-mem: %s\n", err);
		return 1;
	}
	bench_fill(&gm);

	/* The checksum settles the thread count; the read pass uses the same. */
	ret = guestmem_checksum(&gm, threads, &c);
	if (ret)
		goto err_destroy;
	threads = c.threads;
	for (i = 0; i < repeat; i++) {
		uint64_t ns;

		ret = bench_read_sum(&gm, threads, &ns, &rsum);
		if (ret)
			goto err_destroy;
		if (ns < best_read)
			best_read = ns;
		ret = guestmem_checksum(&gm, threads, &c);
		if (ret)
			goto err_destroy;
		if (c.threads != threads) {
			ret = -EAGAIN;
			goto err_destroy;
		}
		if (c.nsec < best_sum)
			best_sum = c.nsec;
	}
	guestmem_checksum_format(&c, hex);
	printf("size %6llu MiB  threads %u  checksum %6.2f GB/s  read %6.2f GB/s  ratio %.2f  (best of %u; xxh3-128 %s, readsum %016llx)\n",
	       (unsigned long long)(size >> 20), threads,
	       (double)size / (double)best_sum, (double)size / (double)best_read,
	       (double)best_read / (double)best_sum, repeat, hex,
	       (unsigned long long)rsum);
	guestmem_destroy(&gm);
	return 0;

err_destroy:
	fprintf(stderr, "kvmlu-bench-mem: %s of %llu bytes with %u threads: %s\n",
		"measurement", (unsigned long long)size, threads, strerror(-ret));
	guestmem_destroy(&gm);
	return 1;
}
