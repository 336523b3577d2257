// SPDX-License-Identifier: GPL-2.0
/*
 * The host's update operations after the kexec (see
 * update_ops_host_restore.h): each VM is brought back by a `kvmlu-vmm
 * restore` child in its own session (setsid), which outlives the
 * restoring agent, and its own update-status says what it verified.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/vmm/vmm_client.h"
#include "agent/update/update_host_ctx.h"
#include "agent/update/update_machine.h"
#include "agent/update/update_ops_host_restore.h"
#include "agent/update/vm_disks.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "kvmlu/control_wire.h"
#include "kvmlu/unix_addr.h"

#define RESTORE_POLL_US 50000
/* kvmlu-vmm restore's exit status when the kernel has no session of that name. */
#define RESTORE_EXIT_NO_SESSION 4

/*
 * What the restored VMM says about its restore: the memory checksum it
 * computed before resuming (checksum_now), whether it matched, when it
 * resumed: the reply of its "update-status".
 */
static int restore_facts(const struct update_host_ctx *ctx, struct journal_vm *vm,
			 char *err, size_t errlen)
{
	int64_t deadline = (int64_t)kvmlu_wall_ns() + (int64_t)ctx->cfg->restore_timeout_ms * 1000000;
	const struct vmm_reply_field f[] = {
		{ KVMLU_KEY_VERIFIED_AT, &vm->verified_ns, true },
		{ KVMLU_KEY_RESUMED_AT, &vm->resumed_ns, true },
		{ KVMLU_KEY_RESTORE_NS, &vm->vmm_restore_ns, false },
		{ KVMLU_KEY_RETRIEVE_NS, &vm->steps.retrieve_ns, false },
		{ KVMLU_KEY_VM_CREATE_NS, &vm->steps.vm_create_ns, false },
		{ KVMLU_KEY_VERIFY_START_NS, &vm->steps.verify_start_ns, false },
		{ KVMLU_KEY_STATE_RESTORE_NS, &vm->steps.state_restore_ns, false },
	};
	struct json_object *lu = NULL, *v;
	const char *sum, *phase, *verification;
	int rc = 0;

	/*
	 * A VM verified lazily runs before all of its memory is verified:
	 * its facts are final once verification is no longer "running".
	 */
	for (;;) {
		if (vmm_client_call(vm->control, "update-status", (int)ctx->cfg->vmm_timeout_ms,
				    &lu, NULL, 0) || !json_object_is_type(lu, json_type_object))
			goto out;
		verification = vmm_client_reply_str(lu, KVMLU_KEY_VERIFICATION);
		if (!verification || strcmp(verification, "running"))
			break;
		if ((int64_t)kvmlu_wall_ns() >= deadline) {
			rc = kvmlu_err(err, errlen, -ETIMEDOUT,
				       "guest memory still being verified after %u ms (the guest runs meanwhile)",
				       ctx->cfg->restore_timeout_ms);
			goto out;
		}
		json_object_put(lu);
		lu = NULL;
		usleep(RESTORE_POLL_US * 4);
	}
	vmm_client_reply_fields(lu, f, sizeof(f) / sizeof(f[0]));
	sum = vmm_client_reply_str(lu, KVMLU_KEY_SUM_NOW);
	if (sum && strlen(sum) == JOURNAL_CHECKSUM_LEN)
		memcpy(vm->checksum_after, sum, JOURNAL_CHECKSUM_LEN + 1);
	phase = vmm_client_reply_str(lu, KVMLU_KEY_PHASE);
	if ((json_object_object_get_ex(lu, KVMLU_KEY_VERIFIED, &v) &&
	     json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v)) ||
	    (phase && !strcmp(phase, "checksum-mismatch")))
		rc = kvmlu_err(err, errlen, -EIO, "the VMM found guest memory changed (checksum %s)",
			       sum ? sum : "unknown");
out:
	json_object_put(lu);
	return rc;
}

static pid_t spawn_restore(const struct update_host_ctx *ctx, const struct journal_vm *vm,
			   char *log, size_t loglen, char *err, size_t errlen)
{
	pid_t pid;
	int fd;

	snprintf(log, loglen, "%s/%s.restore.log", ctx->cfg->state_dir, vm->name);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "restore log %s: %s", log, strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(fd);
		return kvmlu_err(err, errlen, -errno, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* Its own session: the VMM must outlive this restoring agent. */
		setsid();
		dup2(fd, 1);
		dup2(fd, 2);
		if (ctx->cfg->serial_dir[0]) {
			char serial[AGENT_PATH_MAX + 80];

			snprintf(serial, sizeof(serial), "%s/%s.serial", ctx->cfg->serial_dir,
				 vm->name);
			execl(ctx->cfg->vmm_binary, "kvmlu-vmm", "restore", "--session",
			      vm->session, "--control", vm->control, "--serial", serial,
			      (char *)NULL);
		} else {
			execl(ctx->cfg->vmm_binary, "kvmlu-vmm", "restore", "--session",
			      vm->session, "--control", vm->control, (char *)NULL);
		}
		dprintf(2, "kvmlu-agent: exec %s: %s\n", ctx->cfg->vmm_binary, strerror(errno));
		_exit(127);
	}
	close(fd);
	return pid;
}

int host_vm_restore_start_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;
	unsigned int n = ctx->nr_restores;
	pid_t pid;

	if (n >= JOURNAL_MAX_VMS)
		return kvmlu_err(err, errlen, -ENOSPC, "more than %d restores", JOURNAL_MAX_VMS);
	pid = spawn_restore(ctx, vm, ctx->restores[n].log, sizeof(ctx->restores[n].log),
			    err, errlen);
	if (pid < 0)
		return pid;
	snprintf(ctx->restores[n].name, sizeof(ctx->restores[n].name), "%s", vm->name);
	ctx->restores[n].pid = pid;
	ctx->nr_restores++;
	return 0;
}

/* The last line of a restore log: why a kvmlu-vmm restore stopped. */
static void log_last_line(const char *path, char *out, size_t outlen)
{
	char line[512];
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (line[0] && line[0] != '\n')
			snprintf(out, outlen, "%s", line);
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/*
 * status of a restoring VMM: on the control path the journal names, or,
 * where that could not be bound, on the name a held VM always listens on
 * (kvmlu/unix_addr.h). *where says which answered.
 */
static int restore_status(const struct journal_vm *vm, struct json_object **ret,
			  char *where, size_t wherelen, char *why, size_t whylen)
{
	char held[108];

	snprintf(where, wherelen, "%s", vm->control);
	if (!vmm_client_call(vm->control, "status", 500, ret, why, whylen))
		return 0;
	snprintf(held, sizeof(held), KVMLU_HELD_SOCKET_FMT, vm->name);
	if (vmm_client_call(held, "status", 500, ret, NULL, 0))
		return -1;
	snprintf(where, wherelen, "%s", held);
	return 0;
}

int host_vm_restore_wait_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;
	int64_t deadline = (int64_t)kvmlu_wall_ns() + (int64_t)ctx->cfg->restore_timeout_ms * 1000000;
	struct json_object *ret = NULL;
	char why[256] = "", where[108], last[512];
	const char *state, *log = "";
	pid_t pid = -1;
	int status;

	for (unsigned int i = 0; i < ctx->nr_restores; i++)
		if (!strcmp(ctx->restores[i].name, vm->name)) {
			pid = ctx->restores[i].pid;
			log = ctx->restores[i].log;
		}
	if (pid < 0)
		return kvmlu_err(err, errlen, -ESRCH, "no kvmlu-vmm restore was started");
	while ((int64_t)kvmlu_wall_ns() < deadline) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			log_last_line(log, last, sizeof(last));
			/* Exit 3: it checked before taking the session, which stays in the kernel. */
			if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
				kvmlu_err(err, errlen, -EAGAIN,
					  "session %s not taken, still in the kernel: %s; fix it, then run kvmlu-vmm restore --session %s --control %s",
					  vm->session, last, vm->session, vm->control);
				return UPDATE_VM_HELD;
			}
			/*
			 * Exit 4: no session of that name in this kernel. Nothing
			 * was taken and nothing is started in its place; why it
			 * is not there is not known here (the log has what the
			 * kernel said).
			 */
			if (WIFEXITED(status) && WEXITSTATUS(status) == RESTORE_EXIT_NO_SESSION) {
				kvmlu_err(err, errlen, -ENOENT,
					  "session %s is not in this kernel: nothing restored, nothing started in its place (log %s)",
					  vm->session, log);
				return UPDATE_VM_MISSING;
			}
			/*
			 * Otherwise it took the session and died (the VM is gone),
			 * or (exit 1) another process had taken it in this boot.
			 */
			kvmlu_err(err, errlen, -ECHILD,
					 "kvmlu-vmm restore exited with %s %d: %s (log %s)",
					 WIFEXITED(status) ? "status" : "signal",
					 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
					 last, log);
			return UPDATE_VM_LOST;
		}
		if (!restore_status(vm, &ret, where, sizeof(where), why, sizeof(why))) {
			state = vmm_client_reply_str(ret, KVMLU_KEY_STATE);
			if (state && !strcmp(state, "running")) {
				int rc;

				vm->resumed_ns = (int64_t)kvmlu_wall_ns();
				rc = restore_facts(ctx, vm, err, errlen);
				json_object_put(ret);
				return rc;
			}
			/* Paused and kept by its VMM, which says why: not lost. */
			if (state && !strcmp(state, "held")) {
				const char *reason = vmm_client_reply_str(ret, KVMLU_KEY_REASON);
				const char *phase = vmm_client_reply_str(ret, KVMLU_KEY_PHASE);

				kvmlu_err(err, errlen, -EAGAIN, "held by kvmlu-vmm pid %d (%s): %s; control socket %s",
					  (int)pid, phase ? phase : "held", reason ? reason : "no reason given",
					  where);
				json_object_put(ret);
				return UPDATE_VM_HELD;
			}
			snprintf(why, sizeof(why), "state %s", state ? state : "unknown");
			json_object_put(ret);
			ret = NULL;
		}
		usleep(RESTORE_POLL_US);
	}
	/* Left running: a VM that is slow to restore is not killed with its files. */
	return kvmlu_err(err, errlen, -ETIMEDOUT, "not running after %u ms (last: %s, log %s)",
			 ctx->cfg->restore_timeout_ms, why, log);
}

int host_vm_restore_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
{
	int rc = host_vm_restore_start_op(vctx, vm, err, errlen);

	return rc ? rc : host_vm_restore_wait_op(vctx, vm, err, errlen);
}

int host_vm_verify_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;
	struct json_object *ret = NULL;
	const char *state;
	int rc;

	rc = vmm_client_call(vm->control, "status", (int)ctx->cfg->vmm_timeout_ms, &ret,
			     err, errlen);
	if (rc)
		return rc;
	state = vmm_client_reply_str(ret, KVMLU_KEY_STATE);
	if (!state || strcmp(state, "running"))
		rc = kvmlu_err(err, errlen, -EPROTO, "state %s, not running",
			       state ? state : "unknown");
	else if (!vm->checksum_after[0])
		rc = restore_facts(ctx, vm, err, errlen);
	json_object_put(ret);
	return rc;
}
