/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory checksum of a VM about to pause, taken mostly while it
 * still runs, so that the pause window hashes only what the guest wrote
 * in the last moments (guestmem/digest_table.h, guestmem/dirty_log.h).
 *
 * Lifecycle:
 *   memory_digest_start()    VM running: dirty logging on, every chunk
 *                            hashed (the guest keeps running meanwhile),
 *                            for at most running_ms (0: none of it);
 *   memory_digest_converge() VM running: a few rounds of "collect the
 *                            log, hash what it names", until few chunks
 *                            are dirty per round; both within a time
 *                            budget, what is left waits for finish();
 *   vm_pause() by the caller;
 *   memory_digest_finish()   vCPUs paused: the last collection, its
 *                            chunks hashed, the sum (equal to
 *                            guestmem_checksum() of the paused memory);
 *                            logging stays on;
 *   memory_digest_take_log() optional: the caller keeps the (still on)
 *                            log past release, to turn it off later
 *                            (guestmem_dirty_log_stop) before the vCPUs
 *                            run again: prepare-update keeps it until
 *                            abort-update, and the kexec ends it;
 *   memory_digest_release()  on every path, finished or not; logging off.
 * Turning logging off is O(RAM) for RAM in 2 MiB folios (KVM maps the
 * slot with huge pages again: 56 ms for 4 GiB in the QEMU host), and a
 * paused VM writes nothing, so it is not done inside a pause that only
 * ends after a kexec.
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

#include "kvmlu/control_wire.h"
#include "guestmem/digest_table.h"
#include "guestmem/dirty_log.h"
#include "guestmem/guestmem.h"

struct vm;
struct json_line_error;

/*
 * How long hashing while running may take (start and converge together).
 * What is left is hashed in the pause. The agent asks for half of its
 * prepare timeout; the default bounds a prepare-update by the same 10 s
 * it always had (some 100 GiB on hardware, ~1 GiB under TCG).
 */
#define MEMORY_DIGEST_RUNNING_MS_DEFAULT	10000u
#define MEMORY_DIGEST_RUNNING_MS_MAX		3600000u
#define MEMORY_DIGEST_RUNNING_MS_ARG		KVMLU_ARG_RUNNING_HASH_MS

struct memory_digest {
	struct guestmem_digest_table table;
	struct guestmem_dirty_log log;
	bool logging;
	char why_full[300];		/* why no logging ("" if it logged) */
	unsigned int rounds;		/* converge rounds done */
	unsigned int running_budget_ms;	/* what start() was given */
	uint64_t deadline_ns;		/* hashing while running stops here */
	uint64_t running_ns;		/* hashing while the vCPUs ran */
	uint64_t running_chunks;
	uint64_t paused_ns;		/* finish(): the part inside the pause */
	uint64_t paused_chunks;
	uint64_t paused_dirty_pages;
	unsigned int threads;
};

/*
 * args.running_hash_ms of a command (prepare-update, checksum): absent,
 * the default; else an integer 0..MEMORY_DIGEST_RUNNING_MS_MAX. 0 on
 * success; an InvalidRequest error in e otherwise (cmd names the command).
 */
int memory_digest_running_ms_arg(json_object *args, const char *cmd, unsigned int *ms,
				 struct json_line_error *e);
int memory_digest_start(struct vm *vm, struct memory_digest *md, unsigned int running_ms,
			char *err, size_t errlen);
void memory_digest_converge(struct vm *vm, struct memory_digest *md);
int memory_digest_finish(struct vm *vm, struct memory_digest *md, struct guestmem_checksum *out,
			 char *err, size_t errlen);
void memory_digest_take_log(struct memory_digest *md, struct guestmem_dirty_log *out);
void memory_digest_release(struct memory_digest *md);

/*
 * Its figures into a command's reply: checksum_paused_ms (the part in the
 * pause), checksum_paused_chunks, checksum_dirty_pages (logged since the
 * last round), checksum_running_ms, checksum_running_chunks,
 * checksum_rounds, checksum_running_budget_ms, checksum_incremental
 * (false: all hashed in the pause, checksum_full_reason says why).
 */
void memory_digest_report(const struct memory_digest *md, json_object *o);

#endif /* KVMLU_VMM_MEMORY_DIGEST_H */
