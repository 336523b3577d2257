/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory checksum of a VM about to pause, taken mostly while it
 * still runs, so that the pause window hashes only what the guest wrote
 * in the last moments (guestmem/digest_table.h, guestmem/dirty_log.h).
 *
 * Lifecycle:
 *   memory_digest_start()    VM running: dirty logging on, every chunk
 *                            hashed (the guest keeps running meanwhile);
 *   memory_digest_converge() VM running: a few rounds of "collect the
 *                            log, hash what it names", until few chunks
 *                            are dirty per round; both within a time
 *                            budget, what is left waits for finish();
 *   vm_pause() by the caller;
 *   memory_digest_finish()   vCPUs paused: the last collection, its
 *                            chunks hashed, the sum (equal to
 *                            guestmem_checksum() of the paused memory);
 *                            logging off;
 *   memory_digest_release()  on every path, finished or not.
 * A VM whose memory cannot be logged (guest_memfd) or a logging error
 * leaves every chunk to finish(): the full checksum in the pause, as
 * before. The VMM writes no guest RAM while a VM runs, so KVM's log sees
 * every write that matters (guestmem/dirty_log.h).
 */
#ifndef KVMLU_VMM_MEMORY_DIGEST_H
#define KVMLU_VMM_MEMORY_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "guestmem/digest_table.h"
#include "guestmem/dirty_log.h"
#include "guestmem/guestmem.h"

struct vm;

struct memory_digest {
	struct guestmem_digest_table table;
	struct guestmem_dirty_log log;
	bool logging;
	char why_full[300];		/* why no logging ("" if it logged) */
	unsigned int rounds;		/* converge rounds done */
	uint64_t deadline_ns;		/* hashing while running stops here */
	uint64_t running_ns;		/* hashing while the vCPUs ran */
	uint64_t running_chunks;
	uint64_t paused_ns;		/* finish(): the part inside the pause */
	uint64_t paused_chunks;
	uint64_t paused_dirty_pages;
	unsigned int threads;
};

int memory_digest_start(struct vm *vm, struct memory_digest *md, char *err, size_t errlen);
void memory_digest_converge(struct vm *vm, struct memory_digest *md);
int memory_digest_finish(struct vm *vm, struct memory_digest *md, struct guestmem_checksum *out,
			 char *err, size_t errlen);
void memory_digest_release(struct memory_digest *md);

/*
 * Its figures into a command's reply: checksum_paused_ms (the part in the
 * pause), checksum_paused_chunks, checksum_dirty_pages (logged since the
 * last round), checksum_running_ms, checksum_running_chunks,
 * checksum_rounds, checksum_incremental (false: all hashed in the pause,
 * checksum_full_reason says why).
 */
void memory_digest_report(const struct memory_digest *md, json_object *o);

#endif /* KVMLU_VMM_MEMORY_DIGEST_H */
