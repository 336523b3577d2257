// SPDX-License-Identifier: GPL-2.0
/*
 * Lazy verification of guest RAM (lazy_verify.h): the chunk states, the
 * fault thread and the background verifiers.
 *
 * Every chunk goes TODO -> HASHING -> VERIFIED or BAD, exactly once: the
 * thread that moves it out of TODO (a compare-and-swap) hashes it,
 * through the second mapping, and decides. VERIFIED is published before
 * the chunk is mapped, so whoever finds a page of it mapped finds it
 * verified; BAD is never mapped.
 *
 * The fault thread reads the faults. A fault on a TODO chunk: hash it
 * here and now (the guest waits on it). On a chunk being hashed by a
 * background thread: nothing, that thread maps the chunk and wakes the
 * waiters when it is done. On a VERIFIED chunk (its page was unmapped
 * again since, or the fault raced with the mapping): map the page. On a
 * BAD chunk: nothing, ever.
 *
 * Unhappy paths:
 *  1. userfaultfd missing or without shmem minor faults, a region with
 *     holes, no digests: start fails with nothing registered; the caller
 *     verifies everything before the guest runs instead.
 *  2. A chunk differs: marked BAD, on_mismatch called once; the others
 *     are still decided, so the report can count them.
 *  3. A chunk cannot be hashed or mapped (ENOMEM, an ioctl error): the
 *     same as a mismatch for the guest (never mapped), reported with the
 *     error, and everything left undecided stays unmapped.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "guestmem/lazy_verify.h"
#include "guestmem/userfault.h"

#define LV_MAX_THREADS	16

enum { LV_TODO = 0, LV_HASHING, LV_VERIFIED, LV_BAD };

struct guestmem_lazy_verify {
	const struct guestmem *gm;		/* the registered mapping */
	struct guestmem view;			/* the same files, mapped again read-only */
	struct guestmem_digest_table t;		/* on view: layout, digests found */
	struct guestmem_chunk_digest *expect;
	_Atomic uint8_t *state;
	_Atomic uint64_t *seq;			/* verdict order of verified chunks */
	atomic_uint_fast64_t seq_next, cursor, verified, bad, faults, fault_hashed;
	atomic_uint_fast64_t first_bad;
	atomic_int error;
	atomic_bool stopping, reported;
	int uffd, stop_efd, event_efd;
	pthread_t fault_tid, tids[LV_MAX_THREADS];
	unsigned int nr_threads;
	bool fault_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	uint64_t started_ns, done_ns;
	void (*on_mismatch)(void *arg, uint64_t chunk, int err);
	void *arg;
};

static void lv_signal(struct guestmem_lazy_verify *lv)
{
	uint64_t one = 1;

	/* Fails only when the counter is full: readable anyway. */
	if (write(lv->event_efd, &one, sizeof(one)) < 0)
		return;
}

/* Region and offset of chunk c in the registered mapping. */
static void lv_chunk_range(const struct guestmem_lazy_verify *lv, uint64_t c, void **addr,
			   uint64_t *len)
{
	unsigned int ri = 0;
	uint64_t off;

	while (c >= lv->t.first_chunk[ri + 1])
		ri++;
	off = (c - lv->t.first_chunk[ri]) * GUESTMEM_DIGEST_CHUNK;
	*addr = (char *)lv->gm->r[ri].hva + off;
	*len = lv->gm->r[ri].size - off < GUESTMEM_DIGEST_CHUNK ?
	       lv->gm->r[ri].size - off : GUESTMEM_DIGEST_CHUNK;
}

/* The chunk an address of the registered mapping lies in; false if none. */
static bool lv_addr_chunk(const struct guestmem_lazy_verify *lv, uint64_t addr, uint64_t *c)
{
	for (unsigned int ri = 0; ri < lv->gm->nr; ri++) {
		uint64_t base = (uint64_t)(uintptr_t)lv->gm->r[ri].hva;

		if (addr >= base && addr - base < lv->gm->r[ri].size) {
			*c = lv->t.first_chunk[ri] + (addr - base) / GUESTMEM_DIGEST_CHUNK;
			return true;
		}
	}
	return false;
}

/* One more chunk decided; the last one ends the verification. */
static void lv_decided(struct guestmem_lazy_verify *lv)
{
	uint64_t n = atomic_load(&lv->verified) + atomic_load(&lv->bad);

	if (n < lv->t.nr_chunks)
		return;
	pthread_mutex_lock(&lv->lock);
	if (!lv->done) {
		lv->done = true;
		lv->done_ns = kvmlu_mono_ns();
		pthread_cond_broadcast(&lv->cond);
		lv_signal(lv);
	}
	pthread_mutex_unlock(&lv->lock);
}

static void lv_fail(struct guestmem_lazy_verify *lv, uint64_t c, int err)
{
	uint64_t first = atomic_load(&lv->first_bad);

	if (err) {
		int none = 0;

		atomic_compare_exchange_strong(&lv->error, &none, err);
	}
	while (c < first && !atomic_compare_exchange_weak(&lv->first_bad, &first, c))
		;
	if (!atomic_exchange(&lv->reported, true)) {
		if (lv->on_mismatch)
			lv->on_mismatch(lv->arg, c, err);
		lv_signal(lv);
	}
	if (err) {
		/* Nothing more gets decided: waiters learn of the error now. */
		pthread_mutex_lock(&lv->lock);
		if (!lv->done) {
			lv->done = true;
			lv->done_ns = kvmlu_mono_ns();
			pthread_cond_broadcast(&lv->cond);
		}
		pthread_mutex_unlock(&lv->lock);
	}
}

/* Claim chunk c if nobody has, hash it, decide, map it if equal. */
static void lv_verify_chunk(struct guestmem_lazy_verify *lv, uint64_t c, bool for_fault)
{
	struct guestmem_chunk_digest d;
	uint8_t todo = LV_TODO;
	uint64_t len;
	void *addr;
	int ret;

	if (!atomic_compare_exchange_strong(&lv->state[c], &todo, LV_HASHING))
		return;
	if (for_fault)
		atomic_fetch_add(&lv->fault_hashed, 1);
	ret = guestmem_digest_table_hash_chunk(&lv->t, c, &d);
	if (ret) {
		atomic_store(&lv->state[c], LV_BAD);
		lv_fail(lv, c, ret);
		return;
	}
	lv->t.digest[c] = d;
	if (d.hi != lv->expect[c].hi || d.lo != lv->expect[c].lo) {
		atomic_store(&lv->state[c], LV_BAD);
		atomic_fetch_add(&lv->bad, 1);
		lv_fail(lv, c, 0);
		lv_decided(lv);
		return;
	}
	/* Verified before mapped: a page found mapped is a page found equal. */
	atomic_store(&lv->seq[c], atomic_fetch_add(&lv->seq_next, 1) + 1);
	atomic_store(&lv->state[c], LV_VERIFIED);
	/* Counted before the waiters wake, so that they find it counted. */
	atomic_fetch_add(&lv->verified, 1);
	lv_chunk_range(lv, c, &addr, &len);
	ret = guestmem_userfault_continue(lv->uffd, addr, len);
	if (ret) {
		lv_fail(lv, c, ret);
		return;
	}
	lv_decided(lv);
}

static void lv_on_fault(struct guestmem_lazy_verify *lv, uint64_t addr)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), c;

	atomic_fetch_add(&lv->faults, 1);
	if (!lv_addr_chunk(lv, addr, &c))
		return;
	switch (atomic_load(&lv->state[c])) {
	case LV_TODO:
		lv_verify_chunk(lv, c, true);
		/* Lost the claim to a background thread: it maps and wakes. */
		break;
	case LV_VERIFIED:
		if (guestmem_userfault_continue(lv->uffd, (void *)(uintptr_t)(addr & ~(page - 1)),
						page))
			lv_fail(lv, c, -EIO);
		break;
	default:
		/* HASHING: its thread maps and wakes; BAD: stays blocked. */
		break;
	}
}

static void *lv_fault_thread(void *arg)
{
	struct guestmem_lazy_verify *lv = arg;
	struct pollfd pfd[2] = {
		{ .fd = lv->uffd, .events = POLLIN },
		{ .fd = lv->stop_efd, .events = POLLIN },
	};
	uint64_t addrs[16];
	int n;

	while (!atomic_load(&lv->stopping)) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			lv_fail(lv, 0, -errno);
			break;
		}
		if (pfd[1].revents)
			break;
		n = guestmem_userfault_read(lv->uffd, addrs, 16);
		if (n < 0) {
			lv_fail(lv, 0, n);
			break;
		}
		for (int i = 0; i < n; i++)
			lv_on_fault(lv, addrs[i]);
	}
	return NULL;
}

/* In chunk order; chunks a fault took first are skipped by the claim. */
static void *lv_worker(void *arg)
{
	struct guestmem_lazy_verify *lv = arg;
	uint64_t c;

	while (!atomic_load(&lv->stopping) && !atomic_load(&lv->error) &&
	       (c = atomic_fetch_add(&lv->cursor, 1)) < lv->t.nr_chunks)
		lv_verify_chunk(lv, c, false);
	return NULL;
}

static unsigned int lv_threads(unsigned int want)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int n = want ? want : cpus > 0 ? (unsigned int)cpus : 1;

	return n > LV_MAX_THREADS ? LV_MAX_THREADS : n;
}

/* Every page of every region in the page cache: else a touch is no minor fault. */
static int lv_check_no_holes(const struct guestmem *gm, char *err, size_t errlen)
{
	for (unsigned int ri = 0; ri < gm->nr; ri++) {
		const struct guestmem_region *g = &gm->r[ri];
		off_t h = lseek(g->fd, (off_t)g->fd_offset, SEEK_HOLE);

		if (h < 0)
			return kvmlu_err(err, errlen, -errno, "region %u: SEEK_HOLE: %s", ri,
					 strerror(errno));
		if ((uint64_t)h < g->fd_offset + g->size)
			return kvmlu_err(err, errlen, -EOPNOTSUPP,
					 "region %u has a hole at file offset 0x%llx: a first touch there would not wait for verification",
					 ri, (unsigned long long)h);
	}
	return 0;
}

static void lv_unmap_view(struct guestmem_lazy_verify *lv)
{
	for (unsigned int ri = 0; ri < lv->view.nr; ri++)
		if (lv->view.r[ri].hva)
			munmap(lv->view.r[ri].hva, (size_t)lv->view.r[ri].size);
}

static void lv_free(struct guestmem_lazy_verify *lv)
{
	guestmem_digest_table_free(&lv->t);
	lv_unmap_view(lv);
	if (lv->uffd >= 0)
		close(lv->uffd);
	if (lv->stop_efd >= 0)
		close(lv->stop_efd);
	if (lv->event_efd >= 0)
		close(lv->event_efd);
	free(lv->expect);
	free((void *)lv->state);
	free((void *)lv->seq);
	pthread_cond_destroy(&lv->cond);
	pthread_mutex_destroy(&lv->lock);
	free(lv);
}

static int lv_setup(struct guestmem_lazy_verify *lv, const struct guestmem_lazy_verify_config *cfg,
		    char *err, size_t errlen)
{
	const struct guestmem *gm = cfg->gm;
	uint64_t n;
	int ret;

	if (gm->backend != GUESTMEM_MEMFD)
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "%s memory is not faulted in through the VMM's mapping",
				 guestmem_backend_name(gm->backend));
	n = guestmem_digest_chunks(gm);
	if (!cfg->expect || n == 0 || cfg->nr_expect != n)
		return kvmlu_err(err, errlen, -EINVAL,
				 "%llu recorded chunk digests for %llu chunks of RAM",
				 (unsigned long long)cfg->nr_expect, (unsigned long long)n);
	ret = lv_check_no_holes(gm, err, errlen);
	if (ret)
		return ret;
	/* The hashing reads this mapping: never registered, it never waits. */
	lv->view = *gm;
	for (unsigned int ri = 0; ri < gm->nr; ri++) {
		void *p = mmap(NULL, (size_t)gm->r[ri].size, PROT_READ, MAP_SHARED, gm->r[ri].fd,
			       (off_t)gm->r[ri].fd_offset);

		lv->view.r[ri].hva = p == MAP_FAILED ? NULL : p;
		if (p == MAP_FAILED)
			return kvmlu_err(err, errlen, -errno, "second mapping of region %u: %s", ri,
					 strerror(errno));
	}
	ret = guestmem_digest_table_init(&lv->t, &lv->view);
	if (ret)
		return kvmlu_err(err, errlen, ret, "digest table: %s", strerror(-ret));
	lv->expect = malloc((size_t)n * sizeof(*lv->expect));
	lv->state = calloc((size_t)n, sizeof(*lv->state));
	lv->seq = calloc((size_t)n, sizeof(*lv->seq));
	if (!lv->expect || !lv->state || !lv->seq)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory for %llu chunks",
				 (unsigned long long)n);
	memcpy(lv->expect, cfg->expect, (size_t)n * sizeof(*lv->expect));
	lv->stop_efd = eventfd(0, EFD_CLOEXEC);
	lv->event_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (lv->stop_efd < 0 || lv->event_efd < 0)
		return kvmlu_err(err, errlen, -errno, "eventfd: %s", strerror(errno));
	lv->uffd = guestmem_userfault_open(err, errlen);
	return lv->uffd < 0 ? lv->uffd : 0;
}

static int lv_register(struct guestmem_lazy_verify *lv, char *err, size_t errlen)
{
	const struct guestmem *gm = lv->gm;
	unsigned int ri;
	int ret;

	for (ri = 0; ri < gm->nr; ri++) {
		ret = guestmem_userfault_register(lv->uffd, gm->r[ri].hva, gm->r[ri].size, err,
						  errlen);
		if (ret)
			goto err_unregister;
		/*
		 * A page mapped before the registration would be read without
		 * a fault: drop every mapping of the range (the page cache
		 * keeps the data), so each first touch from now on faults.
		 */
		if (madvise(gm->r[ri].hva, (size_t)gm->r[ri].size, MADV_DONTNEED)) {
			ret = kvmlu_err(err, errlen, -errno, "MADV_DONTNEED region %u: %s", ri,
					strerror(errno));
			ri++;
			goto err_unregister;
		}
	}
	return 0;
err_unregister:
	while (ri-- > 0)
		guestmem_userfault_unregister(lv->uffd, gm->r[ri].hva, gm->r[ri].size);
	return ret;
}

int guestmem_lazy_verify_start(struct guestmem_lazy_verify **out,
			       const struct guestmem_lazy_verify_config *cfg,
			       char *err, size_t errlen)
{
	struct guestmem_lazy_verify *lv;
	unsigned int want;
	int ret;

	*out = NULL;
	if (!cfg || !cfg->gm || cfg->gm->nr == 0 || cfg->gm->nr > GUESTMEM_MAX_REGIONS)
		return kvmlu_err(err, errlen, -EINVAL, "no guest RAM to verify");
	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	lv->gm = cfg->gm;
	lv->uffd = lv->stop_efd = lv->event_efd = -1;
	pthread_mutex_init(&lv->lock, NULL);
	pthread_cond_init(&lv->cond, NULL);
	atomic_init(&lv->first_bad, UINT64_MAX);
	lv->on_mismatch = cfg->on_mismatch;
	lv->arg = cfg->arg;
	ret = lv_setup(lv, cfg, err, errlen);
	if (ret)
		goto err_free;
	ret = lv_register(lv, err, errlen);
	if (ret)
		goto err_free;
	lv->started_ns = kvmlu_mono_ns();
	if (pthread_create(&lv->fault_tid, NULL, lv_fault_thread, lv)) {
		ret = kvmlu_err(err, errlen, -EAGAIN, "cannot start the fault thread");
		goto err_unregister;
	}
	lv->fault_started = true;
	want = cfg->fault_only ? 0 : lv_threads(cfg->threads);
	/* Fewer background threads only make it slower, never wrong. */
	for (lv->nr_threads = 0; lv->nr_threads < want; lv->nr_threads++)
		if (pthread_create(&lv->tids[lv->nr_threads], NULL, lv_worker, lv))
			break;
	*out = lv;
	return 0;

err_unregister:
	for (unsigned int ri = 0; ri < lv->gm->nr; ri++)
		guestmem_userfault_unregister(lv->uffd, lv->gm->r[ri].hva, lv->gm->r[ri].size);
err_free:
	lv_free(lv);
	return ret;
}

int guestmem_lazy_verify_wait(struct guestmem_lazy_verify *lv, int timeout_ms)
{
	struct timespec until;
	int ret = 0;

	if (timeout_ms >= 0)
		kvmlu_deadline_ms(&until, CLOCK_REALTIME, (unsigned int)timeout_ms);
	pthread_mutex_lock(&lv->lock);
	while (!lv->done && !ret)
		ret = timeout_ms < 0 ? pthread_cond_wait(&lv->cond, &lv->lock) :
		      pthread_cond_timedwait(&lv->cond, &lv->lock, &until);
	pthread_mutex_unlock(&lv->lock);
	if (!lv->done)
		return -ETIMEDOUT;
	if (atomic_load(&lv->error))
		return atomic_load(&lv->error);
	return atomic_load(&lv->bad) ? -EIO : 0;
}

void guestmem_lazy_verify_stats(struct guestmem_lazy_verify *lv,
				struct guestmem_lazy_verify_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->nr_chunks = lv->t.nr_chunks;
	st->verified = atomic_load(&lv->verified);
	st->bad = atomic_load(&lv->bad);
	st->first_bad = atomic_load(&lv->first_bad);
	st->faults = atomic_load(&lv->faults);
	st->fault_hashed = atomic_load(&lv->fault_hashed);
	st->threads = lv->nr_threads;
	st->error = atomic_load(&lv->error);
	st->started_ns = lv->started_ns;
	pthread_mutex_lock(&lv->lock);
	st->done = lv->done;
	st->done_ns = lv->done_ns;
	pthread_mutex_unlock(&lv->lock);
}

void guestmem_lazy_verify_drain(struct guestmem_lazy_verify *lv)
{
	lv_worker(lv);
}

int guestmem_lazy_verify_event_fd(const struct guestmem_lazy_verify *lv)
{
	return lv->event_efd;
}

uint64_t guestmem_lazy_verify_chunk_seq(struct guestmem_lazy_verify *lv, uint64_t chunk)
{
	if (chunk >= lv->t.nr_chunks || atomic_load(&lv->state[chunk]) != LV_VERIFIED)
		return 0;
	return atomic_load(&lv->seq[chunk]);
}

uint64_t guestmem_lazy_verify_seq_now(struct guestmem_lazy_verify *lv)
{
	return atomic_load(&lv->seq_next);
}

int guestmem_lazy_verify_sum(struct guestmem_lazy_verify *lv, uint64_t *hi, uint64_t *lo)
{
	bool done;

	pthread_mutex_lock(&lv->lock);
	done = lv->done;
	pthread_mutex_unlock(&lv->lock);
	if (!done || atomic_load(&lv->error))
		return -EAGAIN;
	return guestmem_digest_sum(lv->gm, lv->t.digest, lv->t.nr_chunks, hi, lo);
}

void guestmem_lazy_verify_stop(struct guestmem_lazy_verify *lv)
{
	uint64_t one = 1;

	if (!lv)
		return;
	atomic_store(&lv->stopping, true);
	if (write(lv->stop_efd, &one, sizeof(one)) < 0) {
		/* The flag alone stops the fault thread at its next fault. */
	}
	for (unsigned int i = 0; i < lv->nr_threads; i++)
		pthread_join(lv->tids[i], NULL);
	if (lv->fault_started)
		pthread_join(lv->fault_tid, NULL);
	/* Waiters left (bad or undecided chunks) go on as ordinary faults. */
	for (unsigned int ri = 0; ri < lv->gm->nr; ri++)
		guestmem_userfault_unregister(lv->uffd, lv->gm->r[ri].hva, lv->gm->r[ri].size);
	lv_free(lv);
}
