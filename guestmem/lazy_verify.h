/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lazy verification of guest RAM after a kexec: the guest runs first, and
 * its first access to each 2 MiB chunk waits until that chunk is hashed
 * and found equal to the digest recorded at pause.
 *
 * How: the guest RAM mapping (gm->r[i].hva, the one KVM's memslots and
 * the VMM use) is registered with userfaultfd in minor-fault mode. A
 * retrieved memfd has every page in its page cache but none mapped, so
 * the first touch of a page, by a vCPU (KVM faults guest pages in through
 * this very mapping, kvmclock and steal time included) or by a VMM
 * thread, is a minor fault that blocks in the kernel until the chunk is
 * verified and UFFDIO_CONTINUE maps it. The hashing reads a second,
 * unregistered, read-only mapping of the same files, so it never faults
 * on itself. Background threads verify all chunks in order, skipping
 * those a fault verified first; each verified chunk is mapped whole.
 *
 * A chunk that differs is never mapped: whoever touches it stays blocked
 * (a vCPU in KVM_RUN can still be kicked out by its signal, the fault
 * being interruptible, and parks), and on_mismatch reports it once.
 *
 * Lifecycle: start (register, background threads) -> wait / progress ->
 * stop (unregister, close). Stop lets blocked threads through to the
 * pages as they are, so after a mismatch call it only once nothing that
 * could touch guest RAM runs any more (the vCPU threads joined).
 *
 * Preconditions, checked by start: memfd backend (guest_memfd memory is
 * not faulted in through this mapping), every page of each region in the
 * page cache (no holes: a hole would take an ordinary fault, not a minor
 * one), a recorded digest per chunk.
 *
 * All functions return 0 or -errno and never exit().
 */
#ifndef KVMLU_GUESTMEM_LAZY_VERIFY_H
#define KVMLU_GUESTMEM_LAZY_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guestmem/digest_table.h"
#include "guestmem/guestmem.h"

struct guestmem_lazy_verify;

struct guestmem_lazy_verify_config {
	const struct guestmem *gm;	/* mapped, not yet touched; must outlive stop */
	const struct guestmem_chunk_digest *expect;	/* digests at pause, copied */
	uint64_t nr_expect;		/* must equal guestmem_digest_chunks(gm) */
	unsigned int threads;		/* background verifiers; 0: from the CPUs online */
	bool fault_only;		/* tests: no background pass, faults only */
	/*
	 * Called once, on the thread that found it, with the first chunk
	 * found different (or unreadable: err != 0). Must not block long.
	 */
	void (*on_mismatch)(void *arg, uint64_t chunk, int err);
	void *arg;
};

struct guestmem_lazy_verify_stats {
	uint64_t nr_chunks;
	uint64_t verified;		/* found equal and mapped */
	uint64_t bad;			/* found different: never mapped */
	uint64_t first_bad;		/* lowest bad chunk index, when bad */
	uint64_t faults;		/* minor faults taken */
	uint64_t fault_hashed;		/* chunks hashed because a fault waited on them */
	uint64_t started_ns;		/* CLOCK_MONOTONIC at start */
	uint64_t done_ns;		/* when every chunk was decided; 0: not yet */
	unsigned int threads;		/* background verifiers */
	int error;			/* -errno of a failure that is not a mismatch */
	bool done;			/* every chunk verified or bad, or an error */
};

/*
 * Register gm's mapping and start verifying. -ENOSYS / -EOPNOTSUPP /
 * -EPERM when userfaultfd or its shmem minor faults cannot be had here
 * (err says which); nothing is left registered on any error.
 */
int guestmem_lazy_verify_start(struct guestmem_lazy_verify **out,
			       const struct guestmem_lazy_verify_config *cfg,
			       char *err, size_t errlen);

/*
 * Wait until every chunk is decided, at most timeout_ms (< 0: no limit).
 * 0: all equal; -EIO: some chunk differs; -ETIMEDOUT; or the error.
 */
int guestmem_lazy_verify_wait(struct guestmem_lazy_verify *lv, int timeout_ms);

/*
 * Verify the chunks not taken yet on the calling thread, in order (after
 * a mismatch with no background pass, to count the rest).
 */
void guestmem_lazy_verify_drain(struct guestmem_lazy_verify *lv);

void guestmem_lazy_verify_stats(struct guestmem_lazy_verify *lv,
				struct guestmem_lazy_verify_stats *st);

/*
 * Readable (eventfd) when the first chunk is found bad, on an error, and
 * when every chunk is decided: for a poll loop. Owned by lv.
 */
int guestmem_lazy_verify_event_fd(const struct guestmem_lazy_verify *lv);

/*
 * The sequence number at which chunk was found equal (1, 2, ... in the
 * order of the verdicts; 0: not verified): what a test compares with
 * what its touching threads saw.
 */
uint64_t guestmem_lazy_verify_chunk_seq(struct guestmem_lazy_verify *lv, uint64_t chunk);
uint64_t guestmem_lazy_verify_seq_now(struct guestmem_lazy_verify *lv);

/* Once done: the whole-memory checksum of the RAM as it is now (hashed digests). */
int guestmem_lazy_verify_sum(struct guestmem_lazy_verify *lv, uint64_t *hi, uint64_t *lo);

/* Stop the threads, unregister, close; safe with NULL. See the note above. */
void guestmem_lazy_verify_stop(struct guestmem_lazy_verify *lv);

#endif /* KVMLU_GUESTMEM_LAZY_VERIFY_H */
