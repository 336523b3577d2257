// SPDX-License-Identifier: GPL-2.0
/*
 * A restored VM that runs while its RAM is verified (guestmem/lazy_verify.h):
 * the VMM side.
 *
 * Happy path: the resume pipeline's memory step registers the RAM
 * before the state is applied (vmm/resume/verify.c, from restore.c), and
 * live_update_lazy_begin() makes the commands that read all guest RAM
 * wait; the vCPUs start; the main thread sits in
 * live_update_lazy_watch() until every chunk is found equal, then stops
 * the verifier (the mapping becomes an ordinary one), records when, and
 * returns so that the session is FINISHed and the VM served.
 *
 * Unhappy paths:
 *  1. lazy verification cannot start (no userfaultfd, no shmem minor
 *     faults, holes, no chunk digests, guest_memfd): the memory step
 *     verifies everything before the guest runs, and restore.c says why
 *     once.
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
#include "guestmem/guestmem_folio.h"
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

void live_update_lazy_begin(struct live_update_restore *lu)
{
	pthread_mutex_lock(&lazy_lock);
	lazy_lv = lu->report.lazy;
	lazy_state = LAZY_RUNNING;
	pthread_mutex_unlock(&lazy_lock);
}

bool live_update_lazy_failed(struct live_update_restore *lu)
{
	return resume_verify_failed(&lu->report);
}

void live_update_lazy_stop(struct live_update_restore *lu)
{
	if (!lu->report.lazy)
		return;
	pthread_mutex_lock(&lazy_lock);
	lazy_lv = NULL;
	pthread_mutex_unlock(&lazy_lock);
	resume_verify_stop(&lu->report);
}

void live_update_lazy_settle(struct live_update_restore *lu)
{
	if (!lu->report.lazy)
		return;
	resume_verify_settle(&lu->report);
	lazy_set_state(lu->report.memory_verified ? LAZY_VERIFIED : LAZY_MISMATCH);
}

static int lazy_mismatch(struct live_update_restore *lu, struct live_update_hold *h, struct vm *vm)
{
	struct resume_report *r = &lu->report;
	struct guestmem_lazy_verify_stats st;
	char why[512], msg[256] = "";
	uint64_t ns;

	/* Held first: from here no resume gets through the gate. */
	guestmem_lazy_verify_stats(r->lazy, &st);
	snprintf(why, sizeof(why), "MEMORY CHECKSUM MISMATCH after resume: chunk %llu of %llu %s; the guest never touched it",
		 (unsigned long long)st.first_bad, (unsigned long long)st.nr_chunks,
		 st.error ? "could not be verified" : "differs from the pause");
	live_update_hold_set(h, "checksum-mismatch", false, why);
	if (vm_pause(vm, VM_PAUSE_TIMEOUT_MS, &ns, msg, sizeof(msg)) && vm_get_state(vm) != VM_STATE_PAUSED) {
		fprintf(stderr, "kvmlu-vmm: %s: %s; stopping the VM instead\n", vm->name, msg);
		vm_request_stop(vm, VM_STOP_VMM_ERROR, "memory checksum mismatch, pause failed: %s", msg);
	}
	/* The rest is still decided, for the count: here too, with the VM paused. */
	resume_verify_settle(r);
	lazy_set_state(LAZY_MISMATCH);
	snprintf(why, sizeof(why),
		 "MEMORY CHECKSUM MISMATCH: recorded at pause %s, now %s (%llu of %llu chunks of 2 MiB differ, the first is chunk %llu): paused before the guest touched it",
		 r->checksum_recorded, r->checksum_now[0] ? r->checksum_now : "(not computed)",
		 (unsigned long long)r->chunks_differ, (unsigned long long)r->nr_chunks,
		 (unsigned long long)r->first_differ_chunk);
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
		{ .fd = guestmem_lazy_verify_event_fd(lu->report.lazy), .events = POLLIN },
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
		guestmem_lazy_verify_stats(lu->report.lazy, &st);
		if (st.bad || st.error)
			return lazy_mismatch(lu, h, vm);
		resume_verify_note(&lu->report);
		if (st.done)
			break;
		live_update_restore_publish(lu);
	}
	resume_verify_verdict(&lu->report);
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
