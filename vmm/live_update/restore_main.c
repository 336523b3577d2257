// SPDX-License-Identifier: GPL-2.0
/*
 * `kvmlu-vmm restore --session kvmlu/vm/<name> [--control SOCK] [--serial F]`:
 * bring one VM back after a host kexec (live_update.h).
 *
 * Happy path: checks before the take -> control socket -> serial file ->
 * take the session (live_update_restore_take) -> build, verify memory,
 * apply the state (live_update_restore_build: the resume pipeline,
 * vmm/resume/resume.h) -> resume_start(): vCPUs run -> FINISH the
 * session -> serve the VM like `kvmlu-vmm run`. Verified lazily (the default where the
 * kernel has userfaultfd; --verify sync or KVMLU_RESTORE_VERIFY=sync
 * for the old way): the vCPUs run before the verdict, the main thread
 * waits for it (lazy_restore.c), and FINISH comes after it.
 *
 * Unhappy paths:
 *  1. Before the take (a bad session name, no /dev/liveupdate, no usable
 *     /dev/kvm, no socket that could be listened on at all): exit 3 with
 *     the reason. The session was not touched; it stays in the kernel for
 *     another restore once the cause is fixed.
 *  2. No session of that name in this kernel (RETRIEVE_SESSION said
 *     ENOENT: its VMM was gone at the kexec, say): exit 4, so that the
 *     agent can tell "not there" from "lost here". Taken already in this
 *     boot: exit 1. Either way there is nothing to hold.
 *  3. Anything after the take: the VM is held (hold.h), never
 *     an exit. A --control path that cannot be bound (a missing
 *     directory, say) is found before the take; the socket then listens
 *     on the abstract name KVMLU_HELD_SOCKET_FMT instead, and the VM is
 *     held until `resume` finds the path bindable. A --serial file that
 *     cannot be opened, a VM that cannot be built or started, a state or
 *     RAM file that cannot be retrieved or read: the same (a retry asks
 *     only for the files still missing). Memory that differs from what
 *     was paused (checksum mismatch): held too, but never resumed.
 *  4. A held VM is given up only by `shutdown` or SIGTERM/SIGINT: exit 2
 *     after a checksum mismatch, else 1. Closing the session lets the
 *     kernel free its memory.
 *  5. FINISH fails after the guest runs: reported; the guest keeps
 *     running (its files are ours already), the kernel finishes the
 *     session when this process exits.
 *  6. Verified lazily, a chunk differs: the running VM is held
 *     (checksum-mismatch) and paused before anything read the chunk,
 *     the session is not FINISHed; shutdown or a signal: exit 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/test_hooks.h"
#include "kvmlu/unix_addr.h"
#include "vmm/control/server.h"
#include "vmm/live_update/hold.h"
#include "vmm/live_update/live_update.h"
#include "vmm/vm.h"
#include "vmm/control/vmm_process.h"

#define EXIT_NOT_TAKEN	3
/* No session of that name in this kernel: nothing taken, nothing to hold. */
#define EXIT_NO_SESSION	4

struct restore_run {
	const char *session;
	const char *control;		/* --control, NULL: none asked for */
	const char *serial;		/* --serial, NULL: stdout */
	struct live_update_restore lu;
	struct live_update_hold hold;
	struct control_ctx ctx;
	struct control_server server;	/* on --control */
	struct control_server fallback;	/* on the held name: needs no directory */
	struct vm vm;
	bool built;
	int serial_fd;
};

/* What can fail before the take without anything being lost: say so and exit. */
static int restore_precheck(const char *session, char *err, size_t errlen)
{
	int fd;

	if (!luo_session_vm_name(session)) {
		luo_session_name_check(session, err, errlen);
		return -EINVAL;
	}
	if (access(LUO_SESSION_DEVICE, F_OK) != 0)
		return snprintf(err, errlen, "%s: %s", LUO_SESSION_DEVICE,
				luo_session_error_hint(LUO_OP_OPEN, ENOENT)), -ENOENT;
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return snprintf(err, errlen, "/dev/kvm: %s", strerror(errno)), -ENODEV;
	close(fd);
	return 0;
}

/*
 * A test can make each step (files, serial, control, build, start) fail
 * once, as its real causes would, to hold a VM at every step and resume
 * it (common/test_hooks.h; never in the release build).
 */
static bool restore_fault(const char *step, char *why, size_t whylen)
{
	return test_hook_restore_fail(step, true, why, whylen);
}

/*
 * The asked --control path if it binds now; else (or with no --control)
 * the held name, which needs no directory, so a held VM is always
 * reachable. Only when neither listens does the restore not start.
 */
static int restore_listen(struct restore_run *r, char *err, size_t errlen)
{
	char name[108], msg[512] = "";
	int rc;

	if (r->control) {
		/* Injected here and again at the first attempt, as a path in the way would. */
		rc = test_hook_restore_fail("control", false, msg, sizeof(msg)) ? -EIO :
		     control_server_start(&r->server, r->control, &r->ctx, msg, sizeof(msg));
		if (!rc) {
			r->ctx.listen_fd = r->server.listen_fd;
			r->ctx.control_path = r->control;
			live_update_hold_reachable(&r->hold, r->control);
			return 0;
		}
		/* Held on the other socket until resume finds the path bindable. */
		fprintf(stderr, "kvmlu-vmm: restore %s: control socket: %s\n", r->session, msg);
	}
	snprintf(name, sizeof(name), KVMLU_HELD_SOCKET_FMT, r->hold.vm_name);
	rc = control_server_start(&r->fallback, name, &r->ctx, err, errlen);
	if (rc)
		return rc;
	live_update_hold_reachable(&r->hold, name);
	return 0;
}

/* One try at running the VM; 0 once its vCPUs run, else why in why. */
static int restore_attempt(struct restore_run *r, char *why, size_t whylen,
			   const char **state, bool *resumable)
{
	char err[512] = "";
	int rc;

	*state = "held";
	*resumable = true;
	if (!live_update_restore_have_files(&r->lu)) {
		if (restore_fault("files", why, whylen))
			return -EIO;
		rc = live_update_restore_take_files(&r->lu, err, sizeof(err));
		if (rc)
			return snprintf(why, whylen, "%s", err), rc;
	}
	if (r->serial && r->serial_fd < 0) {
		if (restore_fault("serial", why, whylen))
			return -EIO;
		r->serial_fd = open(r->serial, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
		if (r->serial_fd < 0)
			return snprintf(why, whylen, "--serial %s: %s", r->serial,
					strerror(errno)), -errno;
	}
	if (r->control && !r->server.started) {
		if (restore_fault("control", why, whylen))
			return -EIO;
		rc = control_server_start(&r->server, r->control, &r->ctx, err, sizeof(err));
		if (rc)
			return snprintf(why, whylen, "control socket: %.400s", err), rc;
		live_update_hold_reachable(&r->hold, r->control);
	}
	if (!r->built) {
		if (restore_fault("build", why, whylen))
			return -EIO;
		rc = live_update_restore_build(&r->lu, r->serial ? r->serial_fd : STDOUT_FILENO,
					       &r->vm, err, sizeof(err));
		if (rc)
			return snprintf(why, whylen, "%s", err), rc;
		r->built = true;
	}
	/* Lazy: a chunk may be found bad before the vCPUs start; then as sync. */
	if (live_update_lazy_failed(&r->lu))
		live_update_lazy_settle(&r->lu);
	if (!resume_memory_ok(&r->lu.report)) {
		char desc[256];

		*state = "checksum-mismatch";
		*resumable = false;
		resume_mismatch_desc(&r->lu.report, desc, sizeof(desc));
		return snprintf(why, whylen, "MEMORY CHECKSUM MISMATCH: %s: never resumed", desc), -EIO;
	}
	rc = restore_fault("start", err, sizeof(err)) ? -EIO :
	     resume_start(&r->lu.plan, &r->vm, &r->lu.report, err, sizeof(err));
	if (rc) {
		vm_request_stop(&r->vm, VM_STOP_VMM_ERROR, "start failed");
		vm_join(&r->vm);
		live_update_lazy_stop(&r->lu);
		vm_destroy(&r->vm);
		r->built = false;
		return snprintf(why, whylen, "start vCPUs: %.400s", err), rc;
	}
	return 0;
}

/* Retry until the VM runs; false: it was given up (*status set). */
static bool restore_until_running(struct restore_run *r, int sig_fd, int *status)
{
	const char *state;
	bool resumable;
	char why[512];

	for (;;) {
		if (!restore_attempt(r, why, sizeof(why), &state, &resumable))
			return true;
		live_update_hold_set(&r->hold, state, resumable, why);
		r->lu.phase = state;
		snprintf(r->lu.reason, sizeof(r->lu.reason), "%s", why);
		live_update_restore_publish(&r->lu);
		live_update_hold_done(&r->hold);
		fprintf(stderr, "kvmlu-vmm: restore %s: VM %s HELD, paused, session kept (pid %d): %s; "
			"control socket %s; %s\n", r->session, r->hold.vm_name, (int)getpid(), why,
			r->hold.reachable, resumable ? "fix the cause, then send resume" :
			"it cannot be resumed; shutdown gives it up");
		switch (live_update_hold_wait(&r->hold, sig_fd)) {
		case LIVE_UPDATE_HOLD_RESUME:
			fprintf(stderr, "kvmlu-vmm: restore %s: resume asked, trying again\n",
				r->session);
			continue;
		case LIVE_UPDATE_HOLD_RELEASE:
		case LIVE_UPDATE_HOLD_SIGNAL:
		case LIVE_UPDATE_HOLD_ERROR:
			break;
		}
		fprintf(stderr, "kvmlu-vmm: restore %s: VM %s given up while held: %s\n",
			r->session, r->hold.vm_name, why);
		*status = !strcmp(state, "checksum-mismatch") ? 2 : 1;
		return false;
	}
}

/*
 * Once a resume is answered the VM is served on --control alone: the held
 * name has done its job, and two names for one VM would outlive the hold.
 */
static void restore_serve_on_control(struct restore_run *r)
{
	live_update_hold_done(&r->hold);
	if (r->server.started) {
		control_server_stop(&r->fallback);
		r->ctx.listen_fd = r->server.listen_fd;
		r->ctx.control_path = r->control;
	}
}

static void restore_report_resumed(struct restore_run *r, uint64_t t0)
{
	const struct live_update_restore *lu = &r->lu;
	const struct resume_report *rep = &lu->report;
	bool lazy = rep->verify_mode == RESUME_VERIFY_LAZY;
	char verified[128];

	if (lazy)
		snprintf(verified, sizeof(verified), "memory being verified lazily (%llu chunks)",
			 (unsigned long long)rep->nr_chunks);
	else
		snprintf(verified, sizeof(verified), "checksum %s verified", rep->checksum_now);
	fprintf(stderr, "kvmlu-vmm: %s: resumed from session %s (pid %d): %s, "
		"%.1f ms in this process (retrieve %.1f ms, checksum %.1f ms), tsc %s (shift %lld, %u kHz saved, %u kHz now), "
		"paused %.3f s by wall clock, control socket %s\n",
		r->vm.name, r->session, (int)getpid(), verified,
		(double)(kvmlu_mono_ns() - t0) / 1e6, (double)lu->retrieve_ns / 1e6,
		lazy ? 0.0 : (double)rep->checksum_ns / 1e6, rep->tsc_adjusted ? "adjusted" : "as saved",
		(long long)rep->tsc_shift, rep->tsc_khz_saved, rep->tsc_khz_now,
		lu->resumed_wall_ns > lu->paused_wall_ns ?
		(double)(lu->resumed_wall_ns - lu->paused_wall_ns) / 1e9 : 0.0,
		r->hold.reachable[0] ? r->hold.reachable : "(none)");
}

/*
 * Lazy verification runs: the guest does. Wait for the verdict, then
 * FINISH; a mismatch holds the VM (paused) until shutdown or a signal.
 * Returns false when the VM is given up (*status set).
 */
static bool restore_lazy_verdict(struct restore_run *r, int sig_fd, int *status)
{
	int rc = live_update_lazy_watch(&r->lu, &r->hold, &r->vm, sig_fd);

	if (rc == LIVE_UPDATE_LAZY_VERIFIED) {
		const struct resume_report *rep = &r->lu.report;

		fprintf(stderr, "kvmlu-vmm: %s: all %llu chunks verified equal to the pause, %.1f ms after the guest resumed (%llu first touches waited, %llu chunks hashed for them)\n",
			r->vm.name, (unsigned long long)rep->nr_chunks,
			rep->verified_wall_ns > r->lu.resumed_wall_ns ?
			(double)(rep->verified_wall_ns - r->lu.resumed_wall_ns) / 1e6 : 0.0,
			(unsigned long long)rep->verify_faults,
			(unsigned long long)rep->verify_fault_chunks);
		return true;
	}
	if (rc == LIVE_UPDATE_LAZY_MISMATCH) {
		r->lu.phase = "checksum-mismatch";
		live_update_restore_publish(&r->lu);
		/* Not resumable: only shutdown or a signal ends the hold. */
		(void)live_update_hold_wait(&r->hold, sig_fd);
		fprintf(stderr, "kvmlu-vmm: restore %s: VM %s given up while held: %s\n",
			r->session, r->hold.vm_name, r->lu.reason);
		vm_request_stop(&r->vm, VM_STOP_VMM_ERROR, "memory checksum mismatch");
		*status = 2;
		return false;
	}
	/* Stopping (shutdown, a signal, the guest) or an error: serve winds it down. */
	if (rc < 0)
		vm_request_stop(&r->vm, VM_STOP_VMM_ERROR, "verification watch: %s", strerror(-rc));
	*status = -1;
	return false;
}

int live_update_restore_main(const char *session, const char *control, const char *serial,
			     const char *verify)
{
	struct restore_run r = { .session = session, .control = control, .serial = serial,
				 .serial_fd = -1 };
	char err[512] = "";
	uint64_t t0 = kvmlu_mono_ns();
	int sig_fd, status = 1, rc;

	memset(&r.vm, 0, sizeof(r.vm));
	r.vm.kvm_fd = r.vm.vm_fd = r.vm.stop_efd = -1;
	control_server_init(&r.server);
	control_server_init(&r.fallback);
	live_update_restore_init(&r.lu);
	if (!live_update_verify_lazy_wanted(verify, err, sizeof(err))) {
		r.lu.plan.verify = RESUME_VERIFY_FULL;
		r.lu.plan.verify_why = "sync verification asked for";
		fprintf(stderr, "kvmlu-vmm: restore %s: %s: all RAM is verified before the guest runs\n",
			session, err);
	}
	err[0] = '\0';
	sig_fd = vmm_signals_setup();
	if (sig_fd < 0) {
		fprintf(stderr, "kvmlu-vmm: restore: signal setup: %s\n", strerror(errno));
		return EXIT_NOT_TAKEN;
	}
	status = EXIT_NOT_TAKEN;
	if (restore_precheck(session, err, sizeof(err))) {
		fprintf(stderr, "kvmlu-vmm: restore %s: %s; session not taken, it stays in the kernel\n",
			session, err);
		goto out_sig;
	}
	if (live_update_hold_init(&r.hold, luo_session_vm_name(session), session)) {
		fprintf(stderr, "kvmlu-vmm: restore %s: eventfd: %s; session not taken\n", session,
			strerror(errno));
		goto out_sig;
	}
	r.hold.live_gate = live_update_lazy_gate;
	r.ctx.vm = &r.vm;
	r.ctx.listen_fd = -1;
	r.ctx.gate = live_update_hold_gate;
	r.ctx.gate_arg = &r.hold;
	if (restore_listen(&r, err, sizeof(err))) {
		fprintf(stderr, "kvmlu-vmm: restore %s: no control socket at all: %s; session not taken, it stays in the kernel\n",
			session, err);
		goto out_hold;
	}
	r.lu.phase = "restoring";
	live_update_restore_publish(&r.lu);
	rc = live_update_restore_take(session, &r.lu, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "kvmlu-vmm: restore %s: %s\n", session, err);
		status = rc == -ENOENT ? EXIT_NO_SESSION : 1;
		goto out_servers;
	}
	test_hook_stop_at(r.hold.vm_name, "restore-taken");

	if (!restore_until_running(&r, sig_fd, &status))
		goto out_vm;
	live_update_hold_go_live(&r.hold);
	r.lu.phase = "restored";
	r.lu.reason[0] = '\0';
	if (r.lu.report.verify_mode == RESUME_VERIFY_LAZY) {
		int st = 0;

		r.lu.resumed_wall_ns = kvmlu_wall_ns();
		live_update_restore_publish(&r.lu);
		/* Answers a waiting resume: the guest runs, verified as it goes. */
		restore_serve_on_control(&r);
		restore_report_resumed(&r, t0);
		if (!restore_lazy_verdict(&r, sig_fd, &st)) {
			if (st >= 0) {
				status = st;
				vm_join(&r.vm);
				goto out_vm;
			}
			/* Stopping: no FINISH; serve joins the vCPUs and reports. */
			status = vmm_serve(&r.vm, sig_fd, r.server.started ? &r.server : &r.fallback);
			goto out_vm;
		}
	}
	if (live_update_restore_finish(&r.lu, err, sizeof(err)))
		fprintf(stderr, "kvmlu-vmm: restore %s: guest running, but %s\n", session, err);
	if (r.lu.report.verify_mode == RESUME_VERIFY_LAZY)
		live_update_lazy_finished();
	restore_serve_on_control(&r);
	if (r.lu.report.verify_mode != RESUME_VERIFY_LAZY)
		restore_report_resumed(&r, t0);
	/* Whichever socket serves the VM now; the other is stopped below too. */
	status = vmm_serve(&r.vm, sig_fd, r.server.started ? &r.server : &r.fallback);
out_vm:
	/* The control threads may be in a command that touches the VM: stop them first. */
	control_server_stop(&r.server);
	control_server_stop(&r.fallback);
	/* Only now, with every vCPU thread gone, may the verifier let faults through. */
	live_update_lazy_stop(&r.lu);
	if (r.built)
		vm_destroy(&r.vm);
	goto out_release;
out_servers:
	control_server_stop(&r.server);
	control_server_stop(&r.fallback);
out_release:
	live_update_restore_release(&r.lu);
	if (r.serial_fd >= 0)
		close(r.serial_fd);
out_hold:
	live_update_hold_destroy(&r.hold);
out_sig:
	close(sig_fd);
	return status;
}
