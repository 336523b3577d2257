// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of guestmem/digest_table.c: a table kept up to date from a
 * dirty bitmap (simulated here the way KVM_GET_DIRTY_LOG fills it) sums
 * to the full checksum of the same memory, after random writes, with
 * writes landing while chunks are hashed, across holes and a short last
 * chunk; only the chunks the bitmap names are hashed again; chunks past
 * a refresh's deadline stay stale for the next one; a write the
 * bitmap does not name is missed (why every writer must be logged).
 * Memory is real memfd-backed guest RAM (guestmem_create), no KVM.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "guestmem/digest_table.h"
#include "guestmem/guestmem.h"

#define MiB (1ULL << 20)
#define PAGE 4096ULL

static char err[512];

/*
 * 16 MiB of memfd RAM seen as two regions: 9 MiB at gpa 0 (four chunks
 * and a short fifth) and 7 MiB at 4 GiB. Mostly holes, some data.
 */
struct ram {
	struct guestmem file, gm;
	/* One simulated dirty bitmap per region, as KVM keeps per memslot. */
	_Atomic uint64_t *bits[2];
	uint64_t nr_pages[2];
};

static void ram_build(struct ram *r)
{
	memset(r, 0, sizeof(*r));
	assert_int_equal(guestmem_create(&r->file, GUESTMEM_MEMFD, 16 * MiB, -1, "digest",
					 err, sizeof(err)), 0);
	r->gm = r->file;
	r->gm.nr = 2;
	r->gm.r[0].size = 9 * MiB;
	r->gm.r[1] = r->file.r[0];
	r->gm.r[1].gpa = GUESTMEM_HIGH_RAM_START;
	r->gm.r[1].size = 7 * MiB;
	r->gm.r[1].fd_offset = 9 * MiB;
	r->gm.r[1].hva = (char *)r->file.r[0].hva + 9 * MiB;
	r->gm.r[1].slot = 1;
	r->gm.total = 16 * MiB;
	for (unsigned int i = 0; i < 2; i++) {
		r->nr_pages[i] = r->gm.r[i].size / PAGE;
		r->bits[i] = calloc((r->nr_pages[i] + 63) / 64, sizeof(uint64_t));
		assert_non_null(r->bits[i]);
	}
	/* Some data so that not everything is a hole. */
	memset(r->gm.r[0].hva, 0x11, 3 * MiB);
	memset((char *)r->gm.r[1].hva + 5 * MiB, 0x22, 1 * MiB);
}

static void ram_free(struct ram *r)
{
	free(r->bits[0]);
	free(r->bits[1]);
	guestmem_destroy(&r->file);
}

/*
 * A logged guest write: the data, then its page's dirty bit (release).
 * KVM gives the same guarantee through write protection: a store either
 * completed before KVM_GET_DIRTY_LOG returned or sets the bit again.
 */
static void guest_write(struct ram *r, unsigned int ri, uint64_t off, uint64_t value)
{
	uint64_t *p = (uint64_t *)((char *)r->gm.r[ri].hva + (off & ~7ULL));
	uint64_t page = (off & ~7ULL) / PAGE;

	__atomic_store_n(p, value, __ATOMIC_RELAXED);
	atomic_fetch_or_explicit(&r->bits[ri][page / 64], 1ULL << (page % 64),
				 memory_order_release);
}

/* KVM_GET_DIRTY_LOG: get and clear, then mark what it named. */
static uint64_t collect(struct ram *r, struct guestmem_digest_table *t)
{
	uint64_t total = 0;

	for (unsigned int ri = 0; ri < 2; ri++) {
		uint64_t n = (r->nr_pages[ri] + 63) / 64, dirty;
		uint64_t *snap = calloc(n, sizeof(uint64_t));

		assert_non_null(snap);
		for (uint64_t w = 0; w < n; w++)
			snap[w] = atomic_exchange_explicit(&r->bits[ri][w], 0, memory_order_acquire);
		guestmem_digest_table_mark_bitmap(t, ri, snap, r->nr_pages[ri], PAGE, &dirty);
		total += dirty;
		free(snap);
	}
	return total;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void random_writes(struct ram *r, uint64_t *seed, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		unsigned int ri = rnd(seed) % 2;

		guest_write(r, ri, rnd(seed) % r->gm.r[ri].size, rnd(seed));
	}
}

static void assert_table_equals_full(struct guestmem_digest_table *t, const struct guestmem *gm)
{
	struct guestmem_checksum full;
	uint64_t hi, lo;

	assert_int_equal(guestmem_digest_table_sum(t, &hi, &lo), 0);
	assert_int_equal(guestmem_checksum(gm, 2, &full), 0);
	assert_true(hi == full.hi && lo == full.lo);
}

static void test_incremental_digest_equals_full_checksum_after_random_writes(void **state)
{
	struct guestmem_digest_table t;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	struct ram r;

	(void)state;
	ram_build(&r);
	assert_int_equal(guestmem_digest_table_init(&t, &r.gm), 0);
	assert_int_equal(t.nr_chunks, 5 + 4);
	assert_int_equal(guestmem_digest_table_refresh(&t, 2, NULL, NULL), 0);
	assert_table_equals_full(&t, &r.gm);

	for (unsigned int round = 0; round < 8; round++) {
		random_writes(&r, &seed, 1 + round * 5);
		collect(&r, &t);
		/* Writes after the collection, before the hash: next round's. */
		random_writes(&r, &seed, 3);
		assert_int_equal(guestmem_digest_table_refresh(&t, 1 + round % 3, NULL, NULL), 0);
	}
	/* The pause: nothing writes any more; one last collection. */
	collect(&r, &t);
	assert_int_equal(guestmem_digest_table_refresh(&t, 2, NULL, NULL), 0);
	assert_table_equals_full(&t, &r.gm);
	guestmem_digest_table_free(&t);
	ram_free(&r);
}

static void test_only_the_chunks_the_bitmap_names_are_hashed_again(void **state)
{
	struct guestmem_digest_table t;
	uint64_t hashed = 99, pages;
	struct ram r;

	(void)state;
	ram_build(&r);
	assert_int_equal(guestmem_digest_table_init(&t, &r.gm), 0);
	assert_int_equal(guestmem_digest_table_refresh(&t, 0, &hashed, NULL), 0);
	assert_int_equal(hashed, t.nr_chunks);
	assert_int_equal(guestmem_digest_table_refresh(&t, 0, &hashed, NULL), 0);
	assert_int_equal(hashed, 0);

	/* Two pages of chunk 0, one of the short last chunk of region 0, one in region 1. */
	guest_write(&r, 0, 0, 1);
	guest_write(&r, 0, PAGE + 8, 2);
	guest_write(&r, 0, 9 * MiB - 8, 3);
	guest_write(&r, 1, 6 * MiB + 100, 4);
	pages = collect(&r, &t);
	assert_int_equal(pages, 4);
	assert_int_equal(t.nr_stale, 3);
	assert_true(t.stale[0] && t.stale[4] && t.stale[t.first_chunk[1] + 3]);
	assert_int_equal(guestmem_digest_table_refresh(&t, 3, &hashed, NULL), 0);
	assert_int_equal(hashed, 3);
	assert_table_equals_full(&t, &r.gm);
	guestmem_digest_table_free(&t);
	ram_free(&r);
}

static void test_a_write_the_bitmap_misses_leaves_a_stale_digest(void **state)
{
	struct guestmem_digest_table t;
	struct guestmem_checksum full;
	uint64_t hi, lo;
	struct ram r;

	(void)state;
	ram_build(&r);
	assert_int_equal(guestmem_digest_table_init(&t, &r.gm), 0);
	assert_int_equal(guestmem_digest_table_refresh(&t, 1, NULL, NULL), 0);
	/* A writer KVM does not see (another process on the file). */
	((char *)r.gm.r[1].hva)[123] ^= 1;
	collect(&r, &t);
	assert_int_equal(guestmem_digest_table_refresh(&t, 1, NULL, NULL), 0);
	assert_int_equal(guestmem_digest_table_sum(&t, &hi, &lo), 0);
	assert_int_equal(guestmem_checksum(&r.gm, 1, &full), 0);
	assert_false(hi == full.hi && lo == full.lo);
	guestmem_digest_table_free(&t);
	ram_free(&r);
}

struct writer {
	struct ram *r;
	atomic_bool stop;
	atomic_uint_fast64_t writes;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t seed = 0x1234567ULL;

	while (!atomic_load(&w->stop)) {
		random_writes(w->r, &seed, 16);
		atomic_fetch_add(&w->writes, 16);
	}
	return NULL;
}

static void test_writes_during_hashing_are_caught_by_the_next_collection(void **state)
{
	struct guestmem_digest_table t;
	struct writer w;
	pthread_t tid;
	struct ram r;

	(void)state;
	ram_build(&r);
	w.r = &r;
	atomic_init(&w.stop, false);
	atomic_init(&w.writes, 0);
	assert_int_equal(guestmem_digest_table_init(&t, &r.gm), 0);
	/* The "guest" writes all the time the table is built and refreshed. */
	assert_int_equal(pthread_create(&tid, NULL, writer_main, &w), 0);
	assert_int_equal(guestmem_digest_table_refresh(&t, 2, NULL, NULL), 0);
	for (unsigned int round = 0; round < 20; round++) {
		collect(&r, &t);
		assert_int_equal(guestmem_digest_table_refresh(&t, 2, NULL, NULL), 0);
	}
	/* However the threads were scheduled, some writes land before the pause. */
	while (atomic_load(&w.writes) < 256)
		sched_yield();
	atomic_store(&w.stop, true);
	pthread_join(tid, NULL);
	/* Paused: the final collection and hash make the table exact. */
	collect(&r, &t);
	assert_int_equal(guestmem_digest_table_refresh(&t, 2, NULL, NULL), 0);
	assert_table_equals_full(&t, &r.gm);
	guestmem_digest_table_free(&t);
	ram_free(&r);
}

static void test_a_chunk_after_the_deadline_stays_stale(void **state)
{
	struct guestmem_digest_table t;
	uint64_t hashed = 99;
	struct ram r;

	(void)state;
	ram_build(&r);
	assert_int_equal(guestmem_digest_table_init(&t, &r.gm), 0);
	/* A deadline long past: nothing is started, everything stays stale. */
	assert_int_equal(guestmem_digest_table_refresh_by(&t, 2, 1, &hashed, NULL), 0);
	assert_int_equal(hashed, 0);
	assert_int_equal(t.nr_stale, t.nr_chunks);
	/* A later refresh without one does it all, and the sum is the full one. */
	assert_int_equal(guestmem_digest_table_refresh_by(&t, 2, 0, &hashed, NULL), 0);
	assert_int_equal(hashed, t.nr_chunks);
	assert_int_equal(t.nr_stale, 0);
	assert_table_equals_full(&t, &r.gm);
	guestmem_digest_table_free(&t);
	ram_free(&r);
}

static void test_sum_refuses_a_table_with_stale_chunks(void **state)
{
	struct guestmem_digest_table t;
	uint64_t hi, lo;
	struct ram r;

	(void)state;
	ram_build(&r);
	assert_int_equal(guestmem_digest_table_init(&t, &r.gm), 0);
	assert_int_equal(guestmem_digest_table_sum(&t, &hi, &lo), -EAGAIN);
	assert_int_equal(guestmem_digest_table_refresh(&t, 1, NULL, NULL), 0);
	guestmem_digest_table_mark(&t, 1, 7 * MiB - 1, 1);
	assert_int_equal(t.nr_stale, 1);
	assert_int_equal(guestmem_digest_table_sum(&t, &hi, &lo), -EAGAIN);
	/* Outside any region: nothing marked. */
	guestmem_digest_table_mark(&t, 1, 7 * MiB, 1);
	guestmem_digest_table_mark(&t, 2, 0, 1);
	assert_int_equal(t.nr_stale, 1);
	guestmem_digest_table_free(&t);
	guestmem_digest_table_free(&t);
	ram_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incremental_digest_equals_full_checksum_after_random_writes),
		cmocka_unit_test(test_only_the_chunks_the_bitmap_names_are_hashed_again),
		cmocka_unit_test(test_a_write_the_bitmap_misses_leaves_a_stale_digest),
		cmocka_unit_test(test_writes_during_hashing_are_caught_by_the_next_collection),
		cmocka_unit_test(test_a_chunk_after_the_deadline_stays_stale),
		cmocka_unit_test(test_sum_refuses_a_table_with_stale_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
