// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of guestmem/lazy_verify.c on this machine's own kernel, no
 * KVM: a memfd filled with a pattern, its chunk digests taken, then its
 * mapping registered for lazy verification. Threads touch random chunks
 * (reads and same-value writes) while background verification runs or
 * not; every access must complete only after its chunk was marked
 * verified, and read what was written. A chunk changed before the
 * registration is reported with its index and its access never
 * completes while the verification stands. Two regions of one file,
 * with short last chunks, map touches to the right chunks. Without userfaultfd shmem
 * minor faults here, the tests say SKIP and why.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guestmem/digest_table.h"
#include "guestmem/guestmem.h"
#include "guestmem/lazy_verify.h"

#define MiB (1ULL << 20)
#define RAM (48 * MiB)		/* 24 chunks */
#define PAGE 4096ULL
#define TOUCHERS 4
#define TOUCHES 64

static char err[512];

struct ram {
	struct guestmem gm;
	struct guestmem_chunk_digest *digest;
	uint64_t nr_chunks;
	uint64_t sum_hi, sum_lo;
};

static uint64_t pattern(uint64_t off)
{
	return off * 0x9e3779b97f4a7c15ULL ^ 0x6b766d6cULL;
}

/* Filled through the mapping, so start must unmap those pages again. */
static void ram_build(struct ram *r)
{
	struct guestmem_digest_table t;

	memset(r, 0, sizeof(*r));
	assert_int_equal(guestmem_create(&r->gm, GUESTMEM_MEMFD, RAM, -1, "lazy", err,
					 sizeof(err)), 0);
	for (uint64_t off = 0; off < RAM; off += 8)
		*(uint64_t *)((char *)r->gm.r[0].hva + off) = pattern(off);
	assert_int_equal(guestmem_digest_table_init(&t, &r->gm), 0);
	assert_int_equal(guestmem_digest_table_refresh(&t, 2, NULL, NULL), 0);
	assert_int_equal(guestmem_digest_table_sum(&t, &r->sum_hi, &r->sum_lo), 0);
	r->nr_chunks = t.nr_chunks;
	r->digest = malloc((size_t)t.nr_chunks * sizeof(*r->digest));
	assert_non_null(r->digest);
	memcpy(r->digest, t.digest, (size_t)t.nr_chunks * sizeof(*r->digest));
	guestmem_digest_table_free(&t);
}

static void ram_free(struct ram *r)
{
	guestmem_destroy(&r->gm);
	free(r->digest);
}

struct mismatch_seen {
	atomic_int calls;
	atomic_uint_fast64_t chunk;
	atomic_int err;
};

static void on_mismatch(void *arg, uint64_t chunk, int e)
{
	struct mismatch_seen *m = arg;

	atomic_store(&m->chunk, chunk);
	atomic_store(&m->err, e);
	atomic_fetch_add(&m->calls, 1);
}

/* Start, or SKIP when this kernel cannot do it (and say why). */
static struct guestmem_lazy_verify *lv_start(struct ram *r, bool fault_only,
					     struct mismatch_seen *m)
{
	struct guestmem_lazy_verify_config cfg = {
		.gm = &r->gm, .expect = r->digest, .nr_expect = r->nr_chunks,
		.threads = 2, .fault_only = fault_only, .on_mismatch = on_mismatch, .arg = m,
	};
	struct guestmem_lazy_verify *lv = NULL;
	int ret;

	err[0] = '\0';
	ret = guestmem_lazy_verify_start(&lv, &cfg, err, sizeof(err));
	if (ret == -ENOSYS || ret == -EPERM || ret == -EOPNOTSUPP || ret == -EACCES) {
		print_message("SKIP: userfaultfd with shmem minor faults not usable here: %s\n",
			      err);
		ram_free(r);
		skip();
	}
	assert_int_equal(ret, 0);
	assert_non_null(lv);
	return lv;
}

struct toucher {
	struct guestmem_lazy_verify *lv;
	struct ram *r;
	unsigned int seed;
	int64_t only_chunk;		/* >= 0: touch this chunk once */
	atomic_bool *stopped;		/* set by main before stop */
	/* Results. */
	unsigned int touches, waited, early, wrong;
	bool saw_stopped;
	atomic_bool finished;
};

static void *toucher_run(void *arg)
{
	struct toucher *t = arg;
	unsigned int n = t->only_chunk >= 0 ? 1 : TOUCHES;

	for (unsigned int i = 0; i < n; i++) {
		uint64_t c = t->only_chunk >= 0 ? (uint64_t)t->only_chunk :
			     (uint64_t)rand_r(&t->seed) % t->r->nr_chunks;
		uint64_t off = c * (2 * MiB) + ((uint64_t)rand_r(&t->seed) % (2 * MiB)) / 8 * 8;
		volatile uint64_t *p = (volatile uint64_t *)((char *)t->r->gm.r[0].hva + off);
		uint64_t before = guestmem_lazy_verify_chunk_seq(t->lv, c), v;

		/* The access under test: a read, or a write of the same value. */
		v = *p;
		if (rand_r(&t->seed) & 1)
			*p = v;
		/* Let through by stop: lv is gone, and so is the guarantee. */
		if (t->stopped && atomic_load(t->stopped)) {
			t->saw_stopped = true;
			break;
		}
		if (!guestmem_lazy_verify_chunk_seq(t->lv, c))
			t->early++;
		if (!before)
			t->waited++;
		if (v != pattern(off))
			t->wrong++;
		t->touches++;
	}
	atomic_store(&t->finished, true);
	return NULL;
}

static void run_touchers(struct guestmem_lazy_verify *lv, struct ram *r, struct toucher *t,
			 unsigned int seed0)
{
	pthread_t tids[TOUCHERS];

	for (unsigned int i = 0; i < TOUCHERS; i++) {
		t[i] = (struct toucher){ .lv = lv, .r = r, .seed = seed0 + i, .only_chunk = -1 };
		assert_int_equal(pthread_create(&tids[i], NULL, toucher_run, &t[i]), 0);
	}
	for (unsigned int i = 0; i < TOUCHERS; i++)
		pthread_join(tids[i], NULL);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Faults only: nothing is verified unless touched, so each first touch
 * must wait for the hash, and no access completes before the verdict.
 */
static void test_lazy_verify_touch_waits_for_its_chunk(void **state)
{
	struct mismatch_seen m = { 0 };
	struct guestmem_lazy_verify_stats st;
	struct toucher t[TOUCHERS];
	struct guestmem_lazy_verify *lv;
	unsigned int early = 0, wrong = 0, waited = 0, touches = 0;
	uint64_t touched_chunks = 0;
	struct ram r;

	(void)state;
	ram_build(&r);
	lv = lv_start(&r, true, &m);
	run_touchers(lv, &r, t, 1);
	for (unsigned int i = 0; i < TOUCHERS; i++) {
		early += t[i].early;
		wrong += t[i].wrong;
		waited += t[i].waited;
		touches += t[i].touches;
	}
	for (uint64_t c = 0; c < r.nr_chunks; c++)
		touched_chunks += guestmem_lazy_verify_chunk_seq(lv, c) != 0;
	guestmem_lazy_verify_stats(lv, &st);
	assert_int_equal(touches, TOUCHERS * TOUCHES);
	assert_int_equal(early, 0);
	assert_int_equal(wrong, 0);
	/* Every chunk some thread touched first was verified for that touch. */
	assert_true(waited >= touched_chunks);
	assert_true(touched_chunks > 0);
	assert_int_equal(st.verified, touched_chunks);
	assert_int_equal(st.fault_hashed, touched_chunks);
	assert_true(st.faults >= touched_chunks);
	assert_int_equal(st.bad, 0);
	assert_int_equal(atomic_load(&m.calls), 0);
	/* Untouched chunks stay undecided without a background pass. */
	if (touched_chunks < r.nr_chunks) {
		assert_false(st.done);
		assert_int_equal(guestmem_lazy_verify_wait(lv, 50), -ETIMEDOUT);
	}
	guestmem_lazy_verify_stop(lv);
	ram_free(&r);
}

/* Background threads and touching threads together: all verified, same sum. */
static void test_lazy_verify_background_and_touchers_agree(void **state)
{
	struct mismatch_seen m = { 0 };
	struct guestmem_lazy_verify_stats st;
	struct toucher t[TOUCHERS];
	struct guestmem_lazy_verify *lv;
	unsigned int early = 0, wrong = 0;
	uint64_t hi, lo, last = 0;
	struct ram r;

	(void)state;
	ram_build(&r);
	lv = lv_start(&r, false, &m);
	run_touchers(lv, &r, t, 100);
	for (unsigned int i = 0; i < TOUCHERS; i++) {
		early += t[i].early;
		wrong += t[i].wrong;
	}
	assert_int_equal(early, 0);
	assert_int_equal(wrong, 0);
	assert_int_equal(guestmem_lazy_verify_wait(lv, 10000), 0);
	guestmem_lazy_verify_stats(lv, &st);
	assert_true(st.done);
	assert_int_equal(st.verified, r.nr_chunks);
	assert_int_equal(st.bad, 0);
	assert_int_equal(st.threads, 2);
	assert_true(st.done_ns >= st.started_ns);
	/* Each chunk got one verdict, numbered 1..n. */
	for (uint64_t c = 0; c < r.nr_chunks; c++) {
		uint64_t s = guestmem_lazy_verify_chunk_seq(lv, c);

		assert_true(s >= 1 && s <= r.nr_chunks);
		last = s > last ? s : last;
	}
	assert_int_equal(last, r.nr_chunks);
	assert_int_equal(guestmem_lazy_verify_seq_now(lv), r.nr_chunks);
	assert_int_equal(guestmem_lazy_verify_sum(lv, &hi, &lo), 0);
	assert_int_equal(hi, r.sum_hi);
	assert_int_equal(lo, r.sum_lo);
	assert_int_equal(atomic_load(&m.calls), 0);
	guestmem_lazy_verify_stop(lv);
	/* Unregistered: the mapping works as any other. */
	assert_int_equal(*(uint64_t *)((char *)r.gm.r[0].hva + 8 * MiB), pattern(8 * MiB));
	ram_free(&r);
}

/*
 * A chunk changed before the registration: reported once with its index,
 * the access to it does not complete while verification stands, and the
 * other chunks are verified all the same.
 */
static void test_lazy_verify_changed_chunk_blocks_and_is_reported(void **state)
{
	struct mismatch_seen m = { 0 };
	struct guestmem_lazy_verify_stats st;
	struct guestmem_lazy_verify *lv;
	atomic_bool stopped = false;
	const uint64_t bad = 13;
	struct toucher t;
	uint64_t hi, lo;
	pthread_t tid;
	struct ram r;

	(void)state;
	ram_build(&r);
	/* One byte of chunk 13 changed through the file, as another writer would. */
	assert_int_equal(pwrite(r.gm.r[0].fd, "!", 1, (off_t)(bad * 2 * MiB + 12345)), 1);
	lv = lv_start(&r, false, &m);
	t = (struct toucher){ .lv = lv, .r = &r, .seed = 7, .only_chunk = (int64_t)bad,
			      .stopped = &stopped };
	assert_int_equal(pthread_create(&tid, NULL, toucher_run, &t), 0);
	assert_int_equal(guestmem_lazy_verify_wait(lv, 10000), -EIO);
	/* Given time, the access still has not completed. */
	sleep_ms(300);
	assert_false(atomic_load(&t.finished));
	assert_int_equal(atomic_load(&m.calls), 1);
	assert_int_equal(atomic_load(&m.chunk), bad);
	assert_int_equal(atomic_load(&m.err), 0);
	guestmem_lazy_verify_stats(lv, &st);
	assert_true(st.done);
	assert_int_equal(st.bad, 1);
	assert_int_equal(st.first_bad, bad);
	assert_int_equal(st.verified, r.nr_chunks - 1);
	assert_int_equal(guestmem_lazy_verify_chunk_seq(lv, bad), 0);
	/* The sum of the memory as it is differs from the one recorded. */
	assert_int_equal(guestmem_lazy_verify_sum(lv, &hi, &lo), 0);
	assert_false(hi == r.sum_hi && lo == r.sum_lo);
	/* Only stopping lets it through: to the changed memory, unverified. */
	atomic_store(&stopped, true);
	guestmem_lazy_verify_stop(lv);
	pthread_join(tid, NULL);
	assert_true(t.saw_stopped);
	assert_int_equal(t.touches, 0);
	ram_free(&r);
}

/*
 * Two regions of one file (9 MiB at gpa 0, its last chunk short, and
 * 7 MiB at 4 GiB): a touch anywhere finds its chunk in the right region,
 * short chunks are verified and mapped whole, the sum is the checksum's.
 */
static void test_lazy_verify_two_regions_and_short_chunks(void **state)
{
	struct guestmem_lazy_verify_config cfg = { 0 };
	struct guestmem_digest_table t;
	struct guestmem_lazy_verify_stats st;
	struct guestmem_lazy_verify *lv = NULL;
	struct guestmem file, gm;
	uint64_t hi, lo, want_hi, want_lo;
	int ret;

	(void)state;
	assert_int_equal(guestmem_create(&file, GUESTMEM_MEMFD, 16 * MiB, -1, "two", err,
					 sizeof(err)), 0);
	for (uint64_t off = 0; off < 16 * MiB; off += 8)
		*(uint64_t *)((char *)file.r[0].hva + off) = pattern(off);
	gm = file;
	gm.nr = 2;
	gm.r[0].size = 9 * MiB;
	gm.r[1] = file.r[0];
	gm.r[1].gpa = GUESTMEM_HIGH_RAM_START;
	gm.r[1].size = 7 * MiB;
	gm.r[1].fd_offset = 9 * MiB;
	gm.r[1].hva = (char *)file.r[0].hva + 9 * MiB;
	gm.r[1].slot = 1;
	gm.total = 16 * MiB;
	assert_int_equal(guestmem_digest_table_init(&t, &gm), 0);
	assert_int_equal(t.nr_chunks, 9);	/* 5 + 4 */
	assert_int_equal(guestmem_digest_table_refresh(&t, 1, NULL, NULL), 0);
	assert_int_equal(guestmem_digest_table_sum(&t, &want_hi, &want_lo), 0);
	cfg.gm = &gm;
	cfg.expect = t.digest;
	cfg.nr_expect = t.nr_chunks;
	cfg.fault_only = true;
	ret = guestmem_lazy_verify_start(&lv, &cfg, err, sizeof(err));
	if (ret == -ENOSYS || ret == -EPERM || ret == -EOPNOTSUPP || ret == -EACCES) {
		print_message("SKIP: userfaultfd with shmem minor faults not usable here: %s\n", err);
		guestmem_digest_table_free(&t);
		guestmem_destroy(&file);
		skip();
	}
	assert_int_equal(ret, 0);
	/* The last word of region 0 (its short chunk 4), then of region 1 (chunk 8). */
	assert_int_equal(*(volatile uint64_t *)((char *)gm.r[0].hva + 9 * MiB - 8),
			 pattern(9 * MiB - 8));
	assert_true(guestmem_lazy_verify_chunk_seq(lv, 4) == 1);
	assert_int_equal(*(volatile uint64_t *)((char *)gm.r[1].hva + 7 * MiB - 8),
			 pattern(16 * MiB - 8));
	assert_true(guestmem_lazy_verify_chunk_seq(lv, 8) == 2);
	/* Region 1's first chunk starts at file offset 9 MiB: chunk 5. */
	assert_int_equal(*(volatile uint64_t *)((char *)gm.r[1].hva + 4096), pattern(9 * MiB + 4096));
	assert_true(guestmem_lazy_verify_chunk_seq(lv, 5) == 3);
	guestmem_lazy_verify_stats(lv, &st);
	assert_int_equal(st.verified, 3);
	assert_false(st.done);
	/* Everything else on this thread: then the verdict and the sum. */
	guestmem_lazy_verify_drain(lv);
	assert_int_equal(guestmem_lazy_verify_wait(lv, 5000), 0);
	assert_int_equal(guestmem_lazy_verify_sum(lv, &hi, &lo), 0);
	assert_int_equal(hi, want_hi);
	assert_int_equal(lo, want_lo);
	guestmem_lazy_verify_stop(lv);
	guestmem_digest_table_free(&t);
	guestmem_destroy(&file);
}

/* A hole would take an ordinary fault, not a minor one: refused. */
static void test_lazy_verify_refuses_memory_with_holes(void **state)
{
	struct guestmem_lazy_verify_config cfg = { 0 };
	struct guestmem_lazy_verify *lv = (void *)1;
	struct guestmem_chunk_digest d[4] = { 0 };
	struct guestmem gm;

	(void)state;
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 8 * MiB, -1, "holes", err,
					 sizeof(err)), 0);
	cfg.gm = &gm;
	cfg.expect = d;
	cfg.nr_expect = 4;
	assert_int_equal(guestmem_lazy_verify_start(&lv, &cfg, err, sizeof(err)), -EOPNOTSUPP);
	assert_null(lv);
	assert_non_null(strstr(err, "hole"));
	/* And a digest count that does not fit the layout. */
	cfg.nr_expect = 3;
	assert_int_equal(guestmem_lazy_verify_start(&lv, &cfg, err, sizeof(err)), -EINVAL);
	guestmem_destroy(&gm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lazy_verify_refuses_memory_with_holes),
		cmocka_unit_test(test_lazy_verify_touch_waits_for_its_chunk),
		cmocka_unit_test(test_lazy_verify_background_and_touchers_agree),
		cmocka_unit_test(test_lazy_verify_changed_chunk_blocks_and_is_reported),
		cmocka_unit_test(test_lazy_verify_two_regions_and_short_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
