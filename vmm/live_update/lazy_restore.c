// SPDX-License-Identifier: GPL-2.0
/*
 * A restored VM that runs while its RAM is verified (guestmem/lazy_verify.h):
 * the VMM side.
 *
 * Happy path: live_update_lazy_start() registers the RAM before the
 * state is restored (restore.c); the vCPUs start; the main thread sits in
 * live_update_lazy_watch() until every chunk is found equal, then stops
 * the verifier (the mapping becomes an ordinary one), records when, and
 * returns so that the session is FINISHed and the VM served.
 *
 * Unhappy paths:
 *  1. lazy verification cannot start (no userfaultfd, no shmem minor
 *     faults, holes, no chunk digests, guest_memfd): restore.c verifies
 *     everything before the guest runs, as before, and says why once.
 *  2. A chunk differs: the VM is held as checksum-mismatch before the
 *     pause (so no resume can slip in), then paused; a vCPU waiting on the
 *     bad chunk is kicked out of its fault and parks. The remaining chunks
 *     are still decided, for the count. The session is not FINISHed, and
 *     the verifier stays until the vCPU threads are gone: it is what keeps
 *     them off the bad chunk.
 *  3. A vCPU that does not park in time: the VM is stopped instead.
 *  4. Commands that read or hand over all of guest RAM (checksum,
 *     save-state, upgrade, prepare-update) wait, on the control thread,
 *     until verification ends, at most LIVE_UPDATE_LAZY_WAIT_MS; then Busy.
 *     A mismatch answers them ChecksumMismatch. pause, resume and the
 *     status commands do not wait: they read no guest memory.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "common/test_hooks.h"
#include "guestmem/folio.h"
#include "guestmem/lazy_verify.h"
#include "vmm/live_update/hold.h"
#include "vmm/live_update/live_update.h"
#include "vmm/vm.h"

/* What the control thread may wait on; the main thread moves it on. */
static pthread_mutex_t lazy_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lazy_cond = PTHREAD_COND_INITIALIZER;
static enum { LAZY_NONE, LAZY_RUNNING, LAZY_VERIFIED, LAZY_MISMATCH } lazy_state;
static struct guestmem_lazy_verify *lazy_lv;	/* for progress, under lazy_lock */

static void lazy_set_state(int st)
{
	pthread_mutex_lock(&lazy_lock);
	lazy_state = st;
	pthread_cond_broadcast(&lazy_cond);
	pthread_mutex_unlock(&lazy_lock);
}

bool live_update_verify_lazy_wanted(const char *opt, char *why, size_t whylen)
{
	const char *v = opt ? opt : getenv("KVMLU_RESTORE_VERIFY");

	why[0] = '\0';
	if (v && !strcmp(v, "sync")) {
		snprintf(why, whylen, "%s", opt ? "--verify sync" : "KVMLU_RESTORE_VERIFY=sync");
		return false;
	}
	return true;
}

int live_update_lazy_start(struct vm *vm, const struct state_vm *s, struct live_update_restore *lu,
			   char *err, size_t errlen)
{
	struct guestmem_lazy_verify_config cfg = { 0 };
	struct guestmem_chunk_digest *d;
	uint64_t n = guestmem_digest_chunks(&vm->mem);
	int ret;

	if (!s->has_checksum || !s->chunk_digests || s->nr_chunk_digests != n)
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "the state carries no chunk digests (format 1.0, or no checksum)");
	d = malloc((size_t)n * sizeof(*d));
	if (!d)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		d[i] = (struct guestmem_chunk_digest){ .hi = s->chunk_digests[i].hi,
						       .lo = s->chunk_digests[i].lo };
	cfg.gm = &vm->mem;
	/*
	 * A test can ask for no background pass, so that only the guest's
	 * touches verify (harness: the guest, not a background thread, meets
	 * the changed chunk). Never in the release build.
	 */
	cfg.fault_only = test_hook_lazy_fault_only();
	cfg.expect = d;
	cfg.nr_expect = n;
	ret = guestmem_lazy_verify_start(&lu->lv, &cfg, err, errlen);
	free(d);
	if (ret)
		return ret;
	lu->lazy = true;
	lu->nr_chunks = n;
	snprintf(lu->verification, sizeof(lu->verification), "running");
	pthread_mutex_lock(&lazy_lock);
	lazy_lv = lu->lv;
	lazy_state = LAZY_RUNNING;
	pthread_mutex_unlock(&lazy_lock);
	return 0;
}

/* Chunks decided and what the faults cost, into lu for update-status. */
static void lazy_note(struct live_update_restore *lu)
{
	struct guestmem_lazy_verify_stats st;

	guestmem_lazy_verify_stats(lu->lv, &st);
	lu->verify_chunks_done = st.verified + st.bad;
	lu->verify_faults = st.faults;
	lu->verify_fault_chunks = st.fault_hashed;
	lu->verify_threads = st.threads;
	lu->chunks_differ = st.bad;
	if (st.bad)
		lu->first_differ_chunk = st.first_bad;
	if (st.done)
		lu->checksum_ns = st.done_ns - st.started_ns;
}

bool live_update_lazy_failed(struct live_update_restore *lu)
{
	struct guestmem_lazy_verify_stats st;

	if (!lu->lv)
		return false;
	guestmem_lazy_verify_stats(lu->lv, &st);
	return st.bad || st.error;
}

void live_update_lazy_stop(struct live_update_restore *lu)
{
	if (!lu->lv)
		return;
	pthread_mutex_lock(&lazy_lock);
	lazy_lv = NULL;
	pthread_mutex_unlock(&lazy_lock);
	guestmem_lazy_verify_stop(lu->lv);
	lu->lv = NULL;
}

/* Every chunk decided, or an error: fill in the verdict. */
static void lazy_verdict(struct live_update_restore *lu)
{
	struct guestmem_checksum c = { 0 };
	struct guestmem_lazy_verify_stats st;

	guestmem_lazy_verify_stats(lu->lv, &st);
	lazy_note(lu);
	if (!guestmem_lazy_verify_sum(lu->lv, &c.hi, &c.lo))
		guestmem_checksum_format(&c, lu->checksum_now);
	lu->memory_verified = st.done && !st.bad && !st.error && lu->has_recorded &&
			      !strcmp(lu->checksum_now, lu->checksum_recorded);
	lu->verified_wall_ns = kvmlu_wall_ns();
	snprintf(lu->verification, sizeof(lu->verification), "%s",
		 lu->memory_verified ? "verified" : st.error ? "failed" : "mismatch");
}

void live_update_lazy_settle(struct live_update_restore *lu)
{
	if (!lu->lv)
		return;
	guestmem_lazy_verify_drain(lu->lv);
	guestmem_lazy_verify_wait(lu->lv, 60000);
	lazy_verdict(lu);
	lazy_set_state(lu->memory_verified ? LAZY_VERIFIED : LAZY_MISMATCH);
}

static int lazy_mismatch(struct live_update_restore *lu, struct live_update_hold *h, struct vm *vm)
{
	struct guestmem_lazy_verify_stats st;
	char why[512], msg[256] = "";
	uint64_t ns;

	/* Held first: from here no resume gets through the gate. */
	guestmem_lazy_verify_stats(lu->lv, &st);
	snprintf(why, sizeof(why), "MEMORY CHECKSUM MISMATCH after resume: chunk %llu of %llu %s; the guest never touched it",
		 (unsigned long long)st.first_bad, (unsigned long long)st.nr_chunks,
		 st.error ? "could not be verified" : "differs from the pause");
	live_update_hold_set(h, "checksum-mismatch", false, why);
	if (vm_pause(vm, VM_PAUSE_TIMEOUT_MS, &ns, msg, sizeof(msg)) && vm_get_state(vm) != VM_STATE_PAUSED) {
		fprintf(stderr, "kvmlu-vmm: %s: %s; stopping the VM instead\n", vm->name, msg);
		vm_request_stop(vm, VM_STOP_VMM_ERROR, "memory checksum mismatch, pause failed: %s", msg);
	}
	/* The rest is still decided, for the count: here too, with the VM paused. */
	guestmem_lazy_verify_drain(lu->lv);
	guestmem_lazy_verify_wait(lu->lv, 60000);
	lazy_verdict(lu);
	lazy_set_state(LAZY_MISMATCH);
	snprintf(why, sizeof(why),
		 "MEMORY CHECKSUM MISMATCH: recorded at pause %s, now %s (%llu of %llu chunks of 2 MiB differ, the first is chunk %llu): paused before the guest touched it",
		 lu->checksum_recorded, lu->checksum_now[0] ? lu->checksum_now : "(not computed)",
		 (unsigned long long)lu->chunks_differ, (unsigned long long)lu->nr_chunks,
		 (unsigned long long)lu->first_differ_chunk);
	live_update_hold_set(h, "checksum-mismatch", false, why);
	lu->phase = "checksum-mismatch";
	snprintf(lu->reason, sizeof(lu->reason), "%s", why);
	live_update_restore_publish(lu);
	fprintf(stderr, "kvmlu-vmm: restore: VM %s HELD, paused, session kept (pid %d): %s; "
		"it cannot be resumed; shutdown gives it up\n", vm->name, (int)getpid(), why);
	return LIVE_UPDATE_LAZY_MISMATCH;
}

/*
 * UFFDIO_CONTINUE mapped every verified chunk with 4 KiB PTEs, also where
 * the file's folio is 2 MiB (the retrieved files keep their folios): map
 * those with 2 MiB entries again, so that KVM's nested page tables do
 * too, as after a plain start or an upgrade (docs/live-update-memory.md,
 * levers 3 and 4 together). Best effort: a refusal leaves 4 KiB mappings,
 * which are correct, only slower.
 */
static void lazy_remap_huge(struct vm *vm)
{
	uint64_t t0, huge = 0;
	int ret;

	if (vm->mem.backend != GUESTMEM_MEMFD || !vm->mem.huge_advised)
		return;
	t0 = kvmlu_mono_ns();
	ret = guestmem_folio_collapse(&vm->mem);
	if (guestmem_folio_huge_bytes(&vm->mem, &huge))
		huge = 0;
	fprintf(stderr, "kvmlu-vmm: %s: verified RAM mapped with 2 MiB entries again (MADV_COLLAPSE, %.1f ms): %llu of %llu MiB%s%s\n",
		vm->name, (double)(kvmlu_mono_ns() - t0) / 1e6, (unsigned long long)(huge >> 20),
		(unsigned long long)(vm->mem.total >> 20), ret ? "; not all: " : "",
		ret ? strerror(-ret) : "");
}

int live_update_lazy_watch(struct live_update_restore *lu, struct live_update_hold *h,
			   struct vm *vm, int sig_fd)
{
	struct pollfd pfd[3] = {
		{ .fd = guestmem_lazy_verify_event_fd(lu->lv), .events = POLLIN },
		{ .fd = vm->stop_efd, .events = POLLIN },
		{ .fd = sig_fd, .events = POLLIN },
	};
	struct guestmem_lazy_verify_stats st;
	struct signalfd_siginfo si;
	uint64_t n;

	for (;;) {
		/* Progress for update-status, twice a second. */
		int rc = poll(pfd, 3, 500);

		if (rc < 0 && errno != EINTR)
			return -errno;
		if (pfd[1].revents)
			return LIVE_UPDATE_LAZY_STOPPED;
		if (pfd[2].revents && read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
			vm_request_stop(vm, VM_STOP_SIGNAL, "stopped by %s",
					strsignal((int)si.ssi_signo));
			return LIVE_UPDATE_LAZY_STOPPED;
		}
		if (pfd[0].revents && read(pfd[0].fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
			return -errno;
		guestmem_lazy_verify_stats(lu->lv, &st);
		if (st.bad || st.error)
			return lazy_mismatch(lu, h, vm);
		lazy_note(lu);
		if (st.done)
			break;
		live_update_restore_publish(lu);
	}
	lazy_verdict(lu);
	/* All equal: every page may be mapped as any other from now on. */
	live_update_lazy_stop(lu);
	lazy_remap_huge(vm);
	/*
	 * Not published yet: "verified" is shown together with the FINISHed
	 * session, and the commands waiting at the gate go on only after it
	 * (live_update_lazy_finished), so none sees a verdict without FINISH.
	 */
	return LIVE_UPDATE_LAZY_VERIFIED;
}

void live_update_lazy_finished(void)
{
	lazy_set_state(LAZY_VERIFIED);
}

/* Commands that read all of guest RAM, or hand it to another process or kernel. */
static bool lazy_cmd_waits(const char *cmd)
{
	return !strcmp(cmd, "checksum") || !strcmp(cmd, "save-state") ||
	       !strcmp(cmd, "upgrade") || !strcmp(cmd, "prepare-update");
}

int live_update_lazy_gate(const char *cmd, const char *vm_name, struct json_line_error *e)
{
	struct guestmem_lazy_verify_stats st = { 0 };
	struct timespec until;
	int rc = 0;

	if (!lazy_cmd_waits(cmd))
		return CONTROL_GATE_PASS;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += LIVE_UPDATE_LAZY_WAIT_MS / 1000;
	pthread_mutex_lock(&lazy_lock);
	while (lazy_state == LAZY_RUNNING && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&lazy_cond, &lazy_lock, &until);
	if (lazy_state == LAZY_RUNNING && lazy_lv)
		guestmem_lazy_verify_stats(lazy_lv, &st);
	switch (lazy_state) {
	case LAZY_RUNNING:
		json_line_error_set(e, KVMLU_ERR_BUSY,
				    "%s: VM %s: guest memory is still being verified after the host update (%llu of %llu chunks after %d s); retry once update-status says verification verified",
				    cmd, vm_name, (unsigned long long)(st.verified + st.bad),
				    (unsigned long long)st.nr_chunks, LIVE_UPDATE_LAZY_WAIT_MS / 1000);
		rc = CONTROL_GATE_REFUSED;
		break;
	case LAZY_MISMATCH:
		json_line_error_set(e, KVMLU_ERR_MISMATCH,
				    "%s: VM %s: guest memory differs from the pause (checksum mismatch)",
				    cmd, vm_name);
		rc = CONTROL_GATE_REFUSED;
		break;
	default:
		rc = CONTROL_GATE_PASS;
	}
	pthread_mutex_unlock(&lazy_lock);
	return rc;
}
