// SPDX-License-Identifier: GPL-2.0
/*
 * The held restored VM (see hold.h). The gate runs on the
 * control thread and only reads and flags under the lock; everything
 * that touches the VM, the session or the sockets stays on the main
 * thread, which the eventfd wakes.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "common/json_line.h"
#include "kvmlu/version.h"
#include "vmm/live_update/hold.h"

int live_update_hold_init(struct live_update_hold *h, const char *vm_name, const char *session)
{
	memset(h, 0, sizeof(*h));
	h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->efd < 0)
		return -errno;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	h->state = "restoring";
	h->resumable = true;
	snprintf(h->vm_name, sizeof(h->vm_name), "%s", vm_name);
	snprintf(h->session, sizeof(h->session), "%s", session);
	return 0;
}

void live_update_hold_destroy(struct live_update_hold *h)
{
	if (h->efd < 0)
		return;
	close(h->efd);
	h->efd = -1;
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
}

void live_update_hold_reachable(struct live_update_hold *h, const char *where)
{
	pthread_mutex_lock(&h->lock);
	snprintf(h->reachable, sizeof(h->reachable), "%s", where);
	pthread_mutex_unlock(&h->lock);
}

void live_update_hold_set(struct live_update_hold *h, const char *state, bool resumable,
			  const char *reason)
{
	pthread_mutex_lock(&h->lock);
	h->state = state;
	h->resumable = resumable;
	h->live = false;
	snprintf(h->reason, sizeof(h->reason), "%s", reason);
	pthread_mutex_unlock(&h->lock);
}

void live_update_hold_go_live(struct live_update_hold *h)
{
	pthread_mutex_lock(&h->lock);
	h->live = true;
	h->reason[0] = '\0';
	pthread_mutex_unlock(&h->lock);
}

static void hold_kick(struct live_update_hold *h)
{
	uint64_t one = 1;

	/* Fails only if the counter is full, and then main wakes anyway. */
	if (write(h->efd, &one, sizeof(one)) < 0)
		return;
}

/* The VM is given up: a resume waiting on the control worker must not wait on. */
static void hold_give_up(struct live_update_hold *h)
{
	pthread_mutex_lock(&h->lock);
	h->release_asked = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

enum live_update_hold_wake live_update_hold_wait(struct live_update_hold *h, int sig_fd)
{
	struct signalfd_siginfo si;
	struct pollfd pfd[2] = {
		{ .fd = h->efd, .events = POLLIN },
		{ .fd = sig_fd, .events = POLLIN },
	};
	uint64_t n;

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			hold_give_up(h);
			return LIVE_UPDATE_HOLD_ERROR;
		}
		if (pfd[1].revents && read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
			hold_give_up(h);
			return LIVE_UPDATE_HOLD_SIGNAL;
		}
		if (!pfd[0].revents || read(h->efd, &n, sizeof(n)) != sizeof(n))
			continue;
		pthread_mutex_lock(&h->lock);
		if (h->release_asked) {
			pthread_mutex_unlock(&h->lock);
			return LIVE_UPDATE_HOLD_RELEASE;
		}
		if (h->resume_asked) {
			h->resume_asked = false;
			h->attempting = true;
			h->state = "restoring";
			pthread_mutex_unlock(&h->lock);
			return LIVE_UPDATE_HOLD_RESUME;
		}
		pthread_mutex_unlock(&h->lock);
	}
}

void live_update_hold_done(struct live_update_hold *h)
{
	pthread_mutex_lock(&h->lock);
	h->attempting = false;
	h->attempts++;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static json_object *hold_status(struct live_update_hold *h)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, KVMLU_KEY_NAME, json_object_new_string(h->vm_name));
	json_object_object_add(o, KVMLU_KEY_STATE, json_object_new_string(
		!strcmp(h->state, "restoring") ? "restoring" : "held"));
	json_object_object_add(o, KVMLU_KEY_PHASE, json_object_new_string(h->state));
	json_object_object_add(o, KVMLU_KEY_REASON, json_object_new_string(h->reason));
	json_object_object_add(o, KVMLU_KEY_RESUMABLE, json_object_new_boolean(h->resumable));
	json_object_object_add(o, KVMLU_KEY_SESSION, json_object_new_string(h->session));
	json_object_object_add(o, KVMLU_KEY_CONTROL, json_object_new_string(h->reachable));
	json_object_object_add(o, KVMLU_KEY_VERSION, json_object_new_string(KVMLU_VERSION));
	json_object_object_add(o, KVMLU_KEY_PROTOCOL, json_object_new_int(KVMLU_WIRE_PROTOCOL));
	json_object_object_add(o, KVMLU_KEY_PID, json_object_new_int64((int)getpid()));
	return o;
}

/* resume of a held VM: the main thread retries; wait for its answer. */
static int hold_resume(struct live_update_hold *h, json_object **ret, struct json_line_error *e)
{
	unsigned long seen = h->attempts;

	if (h->attempting || !strcmp(h->state, "restoring")) {
		json_line_error_set(e, KVMLU_ERR_BUSY, "VM %s: restore in progress", h->vm_name);
		return CONTROL_GATE_REFUSED;
	}
	if (!h->resumable) {
		json_line_error_set(e, !strcmp(h->state, "checksum-mismatch") ?
				  KVMLU_ERR_MISMATCH : KVMLU_ERR_HELD,
				  "VM %s cannot be resumed: %s", h->vm_name, h->reason);
		return CONTROL_GATE_REFUSED;
	}
	h->resume_asked = true;
	hold_kick(h);
	while (h->attempts == seen && !h->release_asked)
		pthread_cond_wait(&h->cond, &h->lock);
	if (!h->live) {
		json_line_error_set(e, KVMLU_ERR_HELD, "VM %s still held: %s", h->vm_name,
				  h->release_asked ? "being given up" : h->reason);
		return CONTROL_GATE_REFUSED;
	}
	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_STATE, json_object_new_string("running"));
	json_object_object_add(*ret, KVMLU_KEY_CHANGED, json_object_new_boolean(true));
	json_object_object_add(*ret, KVMLU_KEY_CONTROL, json_object_new_string(h->reachable));
	return CONTROL_GATE_ANSWERED;
}

int live_update_hold_gate(struct control_ctx *ctx, const char *cmd, json_object *args,
			  json_object **ret, struct json_line_error *e)
{
	struct live_update_hold *h = ctx->gate_arg;
	int rc;

	(void)args;
	/* Live, but memory still being verified: some commands wait for it. */
	pthread_mutex_lock(&h->lock);
	rc = h->live ? 1 : 0;
	pthread_mutex_unlock(&h->lock);
	if (rc && h->live_gate) {
		rc = h->live_gate(cmd, h->vm_name, e);
		if (rc != CONTROL_GATE_PASS)
			return rc;
	}
	pthread_mutex_lock(&h->lock);
	if (h->live || !strcmp(cmd, "update-status")) {
		rc = CONTROL_GATE_PASS;
	} else if (!strcmp(cmd, "status")) {
		*ret = hold_status(h);
		rc = CONTROL_GATE_ANSWERED;
	} else if (!strcmp(cmd, "resume")) {
		rc = hold_resume(h, ret, e);
	} else if (!strcmp(cmd, "shutdown")) {
		h->release_asked = true;
		pthread_cond_broadcast(&h->cond);
		hold_kick(h);
		*ret = json_object_new_object();
		json_object_object_add(*ret, KVMLU_KEY_STATE, json_object_new_string("stopping"));
		json_object_object_add(*ret, KVMLU_KEY_RELEASED, json_object_new_boolean(true));
		rc = CONTROL_GATE_ANSWERED;
	} else {
		json_line_error_set(e, KVMLU_ERR_HELD,
				  "%s: VM %s is %s, not running: %s (fix the cause, then resume; shutdown gives it up)",
				  cmd, h->vm_name, h->state, h->reason[0] ? h->reason : "restore in progress");
		rc = CONTROL_GATE_REFUSED;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}
