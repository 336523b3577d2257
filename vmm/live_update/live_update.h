/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host live update of one VM: its RAM files and state FDT kept across a
 * host kexec in the LUO session "kvmlu/vm/<name>" (common/luo_session.h).
 *
 * Before the kexec (control commands, prepare.c):
 *   prepare-update  while the guest runs: hash its RAM with dirty
 *                   logging, create the session, preserve the RAM files;
 *                   then pause, capture the state with the memory checksum
 *                   (its last round) and chunk digests, seal it into a
 *                   memfd, preserve that, keep the session fd, answer
 *                   ready and stay paused until the kexec.
 *   abort-update    close the session (the kernel unpreserves) and resume
 *                   as before the prepare.
 *   update-status   what this process holds or restored (for the agent).
 * After the kexec (`kvmlu-vmm restore --session`, live_update_restore*.c):
 *   check what can be checked first, retrieve the session, fill a
 *   resume plan from it (vmm/resume/resume.h): the state read and
 *   validated (the checks every restore uses), the retrieved RAM files,
 *   disks by path and taps by name, lazy or full verification; then the
 *   resume pipeline, the same as a live upgrade's: build the VM on the
 *   retrieved files, verify its memory (lazily: each chunk checked
 *   against its digest at pause before its first access, lazy_restore.c
 *   watching the verdict; or the whole checksum now), apply vCPU and
 *   device state and move the guest TSC onto the new boot's TSC, start
 *   the vCPUs; the session is finished (lazy: once every chunk is
 *   verified). Once the session is taken no
 *   failure ends the process: the VM is held, paused and reachable
 *   (hold.h), until the cause is fixed and `resume` retries.
 *   On a checksum mismatch the vCPUs never start (lazy: they are paused
 *   before any touches the chunk) and the session stays open, so its
 *   files live as long as this process.
 */
#ifndef KVMLU_VMM_LIVE_UPDATE_H
#define KVMLU_VMM_LIVE_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/luo_session.h"
#include "guestmem/guestmem.h"
#include "vmm/control/commands.h"
#include "vmm/resume/resume.h"
#include "vmm/state/state_vm.h"

struct vm;
struct guestmem_lazy_verify;

/*
 * Register prepare-update, abort-update and update-status with the
 * control dispatcher (control_register()); before any server starts.
 */
int live_update_register_commands(void);

/* True while prepare-update holds a session: resume must be refused. */
bool live_update_prepared(void);

/*
 * A restore after a kexec: what only it needs, around the plan it fills
 * from the session and the report the resume pipeline fills
 * (vmm/resume/resume.h). Owned by the main thread; update-status sees
 * what live_update_restore_publish() last gave it.
 */
struct live_update_restore {
	struct luo_session session;	/* retrieved; open until finished */
	char vm_name[STATE_NAME_MAX + 1];
	int state_fd;			/* retrieved, not read yet; -1 */
	void *state_blob;		/* the state memfd's FDT, as taken */
	size_t state_size;
	/* The retrieved RAM files (plan.ram_fds, -1 past plan.nr_ram), the verify mode. */
	struct resume_plan plan;
	struct resume_report report;
	/*
	 * "restoring", "held", "checksum-mismatch", then "restored" once the
	 * vCPUs run (update-status "phase"); reason says why it is held.
	 */
	const char *phase;
	char reason[512];
	uint64_t paused_wall_ns;	/* the state's: CLOCK_REALTIME at the capture of the clock */
	uint64_t started_wall_ns;	/* restore began in this boot */
	uint64_t restored_wall_ns;	/* state restored, ready to start */
	uint64_t resumed_wall_ns;	/* vCPUs running (live_update_restore_finish) */
	uint64_t retrieve_ns;		/* RETRIEVE_FD of the RAM files (kernel refills them) */
};

/* Holds nothing: every fd -1. */
void live_update_restore_init(struct live_update_restore *lu);

/*
 * After a kexec: retrieve the session (restore.c). Once
 * lu->session.fd >= 0 this process holds the only copy of the VM.
 */
int live_update_restore_take(const char *session_name, struct live_update_restore *lu,
			     char *err, size_t errlen);

/* Then its state and RAM files; may be called again after a failure. */
int live_update_restore_take_files(struct live_update_restore *lu, char *err, size_t errlen);
bool live_update_restore_have_files(const struct live_update_restore *lu);

/*
 * Build vm from what lu took, through the resume pipeline: the VM on the
 * retrieved files, its memory verified (lu->plan.verify), its state
 * applied. 0: vm is created and, if resume_memory_ok(&lu->report),
 * restored and ready for resume_start(); if not, vm exists but its vCPUs
 * must not run. -errno: no vm (destroyed), the taken files unchanged:
 * the caller may fix the cause and build again.
 */
int live_update_restore_build(struct live_update_restore *lu, int serial_fd, struct vm *vm,
			      char *err, size_t errlen);

/* Once the vCPUs run: FINISH the session; the kernel lets go of the files. */
int live_update_restore_finish(struct live_update_restore *lu, char *err, size_t errlen);

/* Close whatever lu holds (an unfinished session is finished by the kernel). */
void live_update_restore_release(struct live_update_restore *lu);

/*
 * Let update-status report the restore of this process: its reply is
 * made here, on the main thread, and kept for the control thread
 * (restore_status.c). status: a copy of the last one, false if none.
 */
void live_update_restore_publish(const struct live_update_restore *lu);
bool live_update_restore_status(json_object **out);

/*
 * main() of `kvmlu-vmm restore --session S [--control SOCK] [--serial F]`
 * (restore_main.c); returns the exit status: 0 clean stop;
 * 3 a check before the take failed, so the session is still in the
 * kernel for another restore; 2 checksum mismatch, the VM never ran; 1
 * any other failure, or a held VM released by shutdown or a signal.
 */
int live_update_restore_main(const char *session, const char *control, const char *serial,
			     const char *verify);

/*
 * Lazy verification after a kexec (lazy_restore.c; guestmem/lazy_verify.h).
 * wanted: lazy unless --verify sync (opt) or KVMLU_RESTORE_VERIFY=sync.
 * The verifier itself is the resume pipeline's (vmm/resume/verify.c);
 * this is what a restore after a kexec does around it. begin: the
 * verifier runs (resume_verify() started it): commands that read all
 * guest RAM wait from now on. failed: a chunk was found bad already.
 * settle: before the vCPUs start, after a failure: every chunk's
 * verdict. stop: the verifier gone (after a mismatch only once the vCPU
 * threads are). watch: the main thread until the verdict:
 * LIVE_UPDATE_LAZY_VERIFIED (verifier stopped, nothing published: FINISH
 * next, then finished() opens the gate), _MISMATCH (VM held and paused),
 * _STOPPED (the VM is stopping), or -errno. gate: on the control thread,
 * commands that read all guest RAM wait for the verdict (CONTROL_GATE_*).
 */
#define LIVE_UPDATE_LAZY_WAIT_MS	60000
enum { LIVE_UPDATE_LAZY_VERIFIED = 0, LIVE_UPDATE_LAZY_MISMATCH, LIVE_UPDATE_LAZY_STOPPED };
struct live_update_hold;
struct json_line_error;
bool live_update_verify_lazy_wanted(const char *opt, char *why, size_t whylen);
void live_update_lazy_begin(struct live_update_restore *lu);
bool live_update_lazy_failed(struct live_update_restore *lu);
void live_update_lazy_settle(struct live_update_restore *lu);
void live_update_lazy_stop(struct live_update_restore *lu);
int live_update_lazy_watch(struct live_update_restore *lu, struct live_update_hold *h,
			   struct vm *vm, int sig_fd);
void live_update_lazy_finished(void);
int live_update_lazy_gate(const char *cmd, const char *vm_name, struct json_line_error *e);

#endif /* KVMLU_VMM_LIVE_UPDATE_H */
