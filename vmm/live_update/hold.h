/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A restored VM that cannot run yet, held paused and reachable.
 *
 * After `kvmlu-vmm restore` has taken a VM's LUO session, this process
 * holds the only copy of the VM: exiting would lose it. So from the take
 * on, a failure (a --control path that cannot be bound, a --serial file
 * that cannot be opened, a VM that cannot be built or started) does not
 * end the process. The VM is "held": its vCPUs never run, the session
 * and its files stay open, and the control socket answers:
 *   status, update-status  what is held and why ("state":"held", "reason")
 *   resume                 fix the cause first: retries every step that
 *                          failed, answers once the VM runs or says why not
 *   shutdown               gives the VM up (the kernel frees its memory)
 * and refuses every other command with class Held. A checksum mismatch
 * is held the same way but never resumed (class ChecksumMismatch): the
 * guest must not run on memory that differs from what was paused.
 *
 * The control thread asks; the main thread does the work (it owns the VM):
 * live_update_hold_wait() returns when a resume or a release is asked,
 * live_update_hold_done() answers the waiting `resume`.
 */
#ifndef KVMLU_VMM_LIVE_UPDATE_HOLD_H
#define KVMLU_VMM_LIVE_UPDATE_HOLD_H

#include <pthread.h>
#include <stdbool.h>

#include <json-c/json.h>

#include "vmm/control/commands.h"

struct live_update_hold {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int efd;			/* eventfd: the main thread has a request */
	bool live;			/* vCPUs run: every command goes through */
	bool resumable;			/* false: only shutdown can end the hold */
	bool resume_asked;
	bool release_asked;
	bool attempting;		/* main is retrying: resume says Busy */
	unsigned long attempts;		/* finished resume attempts */
	const char *state;		/* "restoring", "held", "checksum-mismatch" */
	char reason[512];
	char vm_name[64];
	char session[64];
	char reachable[108];		/* where the control socket listens */
	/*
	 * Once live, asked first about every command (NULL: nothing to ask):
	 * what holds back commands until guest memory is verified
	 * (live_update_lazy_gate(), lazy_restore.c, which is above the hold:
	 * it holds the VM on a checksum mismatch). Set by the hold's maker.
	 */
	int (*live_gate)(const char *cmd, const char *vm_name, struct json_line_error *e);
};

enum live_update_hold_wake {
	LIVE_UPDATE_HOLD_RESUME,	/* retry, then live_update_hold_done() */
	LIVE_UPDATE_HOLD_RELEASE,	/* shutdown: give the VM up */
	LIVE_UPDATE_HOLD_SIGNAL,	/* SIGTERM/SIGINT */
	LIVE_UPDATE_HOLD_ERROR,		/* poll failed */
};

int live_update_hold_init(struct live_update_hold *h, const char *vm_name, const char *session);
void live_update_hold_destroy(struct live_update_hold *h);

/* Where the control socket listens now (for status and messages). */
void live_update_hold_reachable(struct live_update_hold *h, const char *where);

/* Not running: state as above, and why. */
void live_update_hold_set(struct live_update_hold *h, const char *state, bool resumable,
			  const char *reason);

/* The vCPUs run: the gate lets everything through from now on. */
void live_update_hold_go_live(struct live_update_hold *h);

/* Main thread: block until a resume or release is asked, or a signal. */
enum live_update_hold_wake live_update_hold_wait(struct live_update_hold *h, int sig_fd);

/* Main thread: the asked resume finished (after set or go_live). */
void live_update_hold_done(struct live_update_hold *h);

/* The control gate (control_ctx.gate, gate_arg = the hold). */
int live_update_hold_gate(struct control_ctx *ctx, const char *cmd, json_object *args,
			  json_object **ret, struct json_line_error *e);

#endif /* KVMLU_VMM_LIVE_UPDATE_HOLD_H */
