// SPDX-License-Identifier: GPL-2.0
/*
 * The host's update operations (see update_ops_host.h). VMM requests use
 * the control socket recorded for each VM; after the kexec each VM is
 * brought back by a `kvmlu-vmm restore` child in its own session (setsid),
 * which outlives the restoring agent.
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

#include "agent/daemon/vmm_client.h"
#include "agent/journal/journal_store.h"
#include "agent/journal/kexec_marker.h"
#include "agent/update/host_facts.h"
#include "agent/update/kexec_image.h"
#include "agent/update/update_ops_host.h"
#include "agent/update/vm_disks.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "common/test_hooks.h"
#include "kvmlu/control_wire.h"
#include "kvmlu/unix_addr.h"

#define RESTORE_POLL_US 50000
/* kvmlu-vmm restore's exit status when the kernel has no session of that name. */
#define RESTORE_EXIT_NO_SESSION 4

static int64_t host_now(void *ctx)
{
	(void)ctx;
	return (int64_t)kvmlu_wall_ns();
}

static int host_facts_op(void *ctx, const struct journal *j, struct host_facts *h,
			 char *err, size_t errlen)
{
	(void)ctx;
	return host_facts_read("", j, h, err, errlen);
}

static void vm_facts_op(void *vctx, const struct journal_vm *vm, struct vm_facts *vf)
{
	struct update_host_ctx *ctx = vctx;
	struct json_object *ret = NULL, *v;
	const char *s;
	long long mem;

	if (vmm_client_call(vm->control, "status", (int)ctx->cfg->vmm_timeout_ms, &ret,
			    vf->why, sizeof(vf->why)))
		return;
	vf->answered = true;
	/* Its replies would be read wrong: no update of a VM we cannot follow. */
	(void)vmm_client_check_protocol(ret, vf->protocol_why, sizeof(vf->protocol_why));
	s = vmm_client_reply_str(ret, KVMLU_KEY_STATE);
	snprintf(vf->state, sizeof(vf->state), "%s", s ? s : "unknown");
	mem = vmm_client_reply_int(ret, KVMLU_KEY_MEMORY);
	vf->memory_bytes = mem > 0 ? (uint64_t)mem : 0;
	/* Preserving allocates what is not resident: preflight counts it. */
	if (json_object_object_get_ex(ret, KVMLU_KEY_RESIDENT, &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0) {
		vf->memory_resident = (uint64_t)json_object_get_int64(v);
		vf->resident_known = true;
	}
	s = vmm_client_reply_str(ret, KVMLU_KEY_BACKEND);
	snprintf(vf->backend, sizeof(vf->backend), "%s", s ? s : "memfd");
	s = vmm_client_reply_str(ret, KVMLU_KEY_FOLIO);
	snprintf(vf->folio, sizeof(vf->folio), "%s", s ? s : "");
	if (json_object_object_get_ex(ret, KVMLU_KEY_PRESERVABLE, &v) &&
	    json_object_is_type(v, json_type_boolean)) {
		vf->preservable = json_object_get_boolean(v);
		snprintf(vf->why, sizeof(vf->why), "its VMM says so (backend %s)", vf->backend);
	} else if (!strcmp(vf->backend, "memfd")) {
		vf->preservable = true;
	} else if (!strcmp(vf->backend, "guest_memfd")) {
		snprintf(vf->why, sizeof(vf->why),
			 "guest_memfd preservation is not in this kernel (Linux 7.3)");
	} else {
		snprintf(vf->why, sizeof(vf->why), "memory backend %s (only shmem memfd is "
			 "preserved; hugetlb is refused by LUO)", vf->backend);
	}
	/* A disk the restore could not reopen as the same file would leave the VM held. */
	(void)vm_disks_check(ret, vf->disk_why, sizeof(vf->disk_why));
	json_object_put(ret);
}

static int kexec_allowed_op(void *vctx, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;

	return kexec_image_jump_allowed(ctx->cfg->allow_kexec, err, errlen);
}

static int kexec_load_op(void *vctx, const struct journal *j, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;

	if (ctx->kexec.kernel_fd >= 0)
		return kexec_image_load_fds(ctx->kexec.kernel_fd, ctx->kexec.initrd_fd, j->kernel,
					    j->cmdline, err, errlen);
	return kexec_image_load(j->kernel, j->initrd, j->cmdline, err, errlen);
}

static int kexec_unload_op(void *ctx, char *err, size_t errlen)
{
	(void)ctx;
	return kexec_image_unload(err, errlen);
}

static bool kexec_is_loaded_op(void *ctx)
{
	(void)ctx;
	return kexec_image_is_loaded();
}

static int vm_prepare_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;
	char want[LUO_SESSION_NAME_SIZE];
	struct json_object *ret = NULL, *args;
	const char *session, *sum;
	int rc;

	rc = luo_session_name_for_vm(vm->name, want, err, errlen);
	if (rc)
		return rc;
	args = json_object_new_object();
	if (!args)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	json_object_object_add(args, KVMLU_ARG_RUNNING_HASH_MS,
			       json_object_new_int64(agent_running_hash_ms(ctx->cfg)));
	rc = vmm_client_call_args(vm->control, "prepare-update", args,
				  (int)ctx->cfg->prepare_timeout_ms, &ret, err, errlen);
	if (rc)
		return rc;
	session = vmm_client_reply_str(ret, KVMLU_KEY_SESSION);
	sum = vmm_client_reply_str(ret, KVMLU_KEY_CHECKSUM);
	/* Still recorded as preparing: the rollback will send abort-update. */
	if (!session || strcmp(session, want))
		rc = kvmlu_err(err, errlen, -EPROTO, "ready with session \"%s\", expected \"%s\"",
			       session ? session : "(none)", want);
	else if (!sum || strlen(sum) != JOURNAL_CHECKSUM_LEN ||
		 strspn(sum, "0123456789abcdef") != JOURNAL_CHECKSUM_LEN)
		rc = kvmlu_err(err, errlen, -EPROTO, "ready without a 32-hex-digit checksum (%s)",
			       sum ? sum : "none");
	if (!rc) {
		snprintf(vm->session, sizeof(vm->session), "%s", session);
		memcpy(vm->checksum, sum, JOURNAL_CHECKSUM_LEN + 1);
		/* The VMM's own pause time is closer to the truth than ours. */
		if (vmm_client_reply_int(ret, KVMLU_KEY_PAUSED_AT) > 0)
			vm->paused_ns = (int64_t)vmm_client_reply_int(ret, KVMLU_KEY_PAUSED_AT);
		if (vmm_client_reply_int(ret, KVMLU_KEY_MEMORY) > 0)
			vm->memory_bytes = (uint64_t)vmm_client_reply_int(ret, KVMLU_KEY_MEMORY);
		vm->vmm_prepare_ns = vmm_client_reply_ns(ret, KVMLU_KEY_PREPARE_NS);
		vm->steps.prepare_paused_ns = vmm_client_reply_ns(ret, KVMLU_KEY_PREPARE_PAUSED_NS);
		vm->steps.capture_ns = vmm_client_reply_ns(ret, KVMLU_KEY_CAPTURE_NS);
		vm->steps.preserve_ram_ns = vmm_client_reply_ns(ret, KVMLU_KEY_PRESERVE_RAM_NS);
	}
	json_object_put(ret);
	return rc;
}

/* The VMM refused cmd as Busy: another client's command still runs. */
static bool vmm_busy(int rc, const char *why)
{
	char cls[JSON_LINE_CLASS_MAX];

	return rc == -EREMOTEIO && !json_line_error_class(why, cls) && !strcmp(cls, KVMLU_ERR_BUSY);
}

static int vm_abort_once(const char *control, int t, char *err, size_t errlen)
{
	struct json_object *ret = NULL;
	char why[256], swhy[256];
	const char *state;
	int rc;

	rc = vmm_client_call(control, "abort-update", t, NULL, why, sizeof(why));
	if (!rc || vmm_busy(rc, why))
		return rc ? kvmlu_err(err, errlen, rc, "%s", why) : 0;
	/*
	 * abort-update is refused by a VMM that never got (or never finished)
	 * prepare-update; what matters is that the VM runs, so check and
	 * resume it if it is paused.
	 */
	rc = vmm_client_call(control, "status", t, &ret, swhy, sizeof(swhy));
	if (rc)
		return kvmlu_err(err, errlen, rc, "abort-update: %.100s; status: %.100s", why, swhy);
	state = vmm_client_reply_str(ret, KVMLU_KEY_STATE);
	if (state && !strcmp(state, "running"))
		rc = 0;
	else if (state && !strcmp(state, "paused"))
		rc = vmm_client_call(control, "resume", t, NULL, err, errlen);
	else
		rc = kvmlu_err(err, errlen, -EPROTO, "abort-update: %s; state %s", why,
			       state ? state : "unknown");
	json_object_put(ret);
	return rc;
}

/*
 * A prepare-update that a stopped agent had asked for goes on in the VMM
 * after its client is gone, and abort-update or resume get Busy until it
 * ends: wait for it (up to the VMM timeout), then abort.
 */
static int vm_abort_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;
	int t = (int)ctx->cfg->vmm_timeout_ms;
	uint64_t end = kvmlu_mono_ns() + (uint64_t)t * 1000000ull;
	int rc;

	while ((rc = vm_abort_once(vm->control, t, err, errlen)) && vmm_busy(rc, err) &&
	       kvmlu_mono_ns() < end)
		usleep(200000);
	return rc;
}

static int journal_save_op(void *vctx, const struct journal *j)
{
	struct update_host_ctx *ctx = vctx;
	int ret = journal_store_save(ctx->cfg->state_dir, j);

	if (ret)
		fprintf(stderr, "kvmlu-agent: saving journal in %s: %s\n", ctx->cfg->state_dir,
			strerror(-ret));
	return ret;
}

static int kexec_marker_write_op(void *vctx, const struct journal *j, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;
	struct kexec_marker *m = malloc(sizeof(*m));
	int ret;

	if (!m)
		return kvmlu_err(err, errlen, -ENOMEM, "kexec marker: out of memory");
	kexec_marker_from_journal(j, host_now(NULL), m);
	ret = kexec_marker_write(ctx->cfg->history_dir, m, err, errlen);
	free(m);
	return ret;
}

static void kexec_marker_clear_op(void *vctx)
{
	struct update_host_ctx *ctx = vctx;
	int ret = kexec_marker_remove(ctx->cfg->history_dir);

	if (ret)
		fprintf(stderr, "kvmlu-agent: removing the kexec marker in %s: %s\n",
			ctx->cfg->history_dir, strerror(-ret));
}

static int journal_preserve_op(void *vctx, const struct journal *j, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;

	return journal_store_preserve(&ctx->journal_out, j, err, errlen);
}

static void journal_discard_op(void *vctx)
{
	struct update_host_ctx *ctx = vctx;

	luo_session_close(&ctx->journal_out);
}

static int kexec_jump_op(void *ctx, char *err, size_t errlen)
{
	(void)ctx;
	test_hook_stop_at("kvmlu-agent", "kexec");
	return kexec_image_jump(err, errlen);
}

/*
 * What the restored VMM says about its restore: the memory checksum it
 * computed before resuming (checksum_now), whether it matched, when it
 * resumed: the reply of its "update-status".
 */
static int restore_facts(const struct update_host_ctx *ctx, struct journal_vm *vm,
			 char *err, size_t errlen)
{
	int64_t deadline = host_now(NULL) + (int64_t)ctx->cfg->restore_timeout_ms * 1000000;
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
		if (host_now(NULL) >= deadline) {
			rc = kvmlu_err(err, errlen, -ETIMEDOUT,
				       "guest memory still being verified after %u ms (the guest runs meanwhile)",
				       ctx->cfg->restore_timeout_ms);
			goto out;
		}
		json_object_put(lu);
		lu = NULL;
		usleep(RESTORE_POLL_US * 4);
	}
	if (vmm_client_reply_int(lu, KVMLU_KEY_VERIFIED_AT) > 0)
		vm->verified_ns = (int64_t)vmm_client_reply_int(lu, KVMLU_KEY_VERIFIED_AT);
	sum = vmm_client_reply_str(lu, KVMLU_KEY_SUM_NOW);
	if (sum && strlen(sum) == JOURNAL_CHECKSUM_LEN)
		memcpy(vm->checksum_after, sum, JOURNAL_CHECKSUM_LEN + 1);
	if (vmm_client_reply_int(lu, KVMLU_KEY_RESUMED_AT) > 0)
		vm->resumed_ns = (int64_t)vmm_client_reply_int(lu, KVMLU_KEY_RESUMED_AT);
	vm->vmm_restore_ns = vmm_client_reply_ns(lu, KVMLU_KEY_RESTORE_NS);
	vm->steps.retrieve_ns = vmm_client_reply_ns(lu, KVMLU_KEY_RETRIEVE_NS);
	vm->steps.vm_create_ns = vmm_client_reply_ns(lu, KVMLU_KEY_VM_CREATE_NS);
	vm->steps.verify_start_ns = vmm_client_reply_ns(lu, KVMLU_KEY_VERIFY_START_NS);
	vm->steps.state_restore_ns = vmm_client_reply_ns(lu, KVMLU_KEY_STATE_RESTORE_NS);
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

static int vm_restore_start_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
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

static int vm_restore_wait_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
{
	struct update_host_ctx *ctx = vctx;
	int64_t deadline = host_now(NULL) + (int64_t)ctx->cfg->restore_timeout_ms * 1000000;
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
	while (host_now(NULL) < deadline) {
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

				vm->resumed_ns = host_now(NULL);
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

static int vm_restore_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
{
	int rc = vm_restore_start_op(vctx, vm, err, errlen);

	return rc ? rc : vm_restore_wait_op(vctx, vm, err, errlen);
}

static int vm_verify_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen)
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

static void journal_finish_op(void *vctx)
{
	struct update_host_ctx *ctx = vctx;
	char err[256];

	if (ctx->journal_in.fd >= 0 && luo_session_finish(&ctx->journal_in, err, sizeof(err)))
		fprintf(stderr, "kvmlu-agent: %s\n", err);
	luo_session_close(&ctx->journal_in);
}

struct json_object *update_event_json(const struct journal *j, enum update_event ev,
				      enum update_phase phase, const struct journal_vm *vm,
				      unsigned int done)
{
	struct json_object *o = json_object_new_object();
	const struct journal_phase_time *t = &j->phases[phase];

	json_object_object_add(o, KVMLU_KEY_EVENT, json_object_new_string(vm ? "vm" : "phase"));
	json_object_object_add(o, KVMLU_KEY_UPDATE_ID, json_object_new_string(j->update_id));
	json_object_object_add(o, KVMLU_KEY_PHASE, json_object_new_string(update_phase_name(phase)));
	if (vm) {
		json_object_object_add(o, KVMLU_KEY_VM, json_object_new_string(vm->name));
		json_object_object_add(o, KVMLU_KEY_STATE,
				       json_object_new_string(journal_vm_state_name(vm->state)));
		json_object_object_add(o, KVMLU_KEY_ERROR, json_object_new_string(vm->error));
		json_object_object_add(o, KVMLU_KEY_DONE, json_object_new_int((int)done));
		json_object_object_add(o, KVMLU_KEY_TOTAL, json_object_new_int((int)j->nr_vms));
		return o;
	}
	json_object_object_add(o, KVMLU_KEY_STATE, json_object_new_string(
		ev == UPDATE_EV_PHASE_START ? "start" : ev == UPDATE_EV_PHASE_END ? "end" : "failed"));
	if (ev != UPDATE_EV_PHASE_START)
		json_object_object_add(o, KVMLU_KEY_PHASE_NS, json_object_new_int64(t->end_ns - t->start_ns));
	json_object_object_add(o, KVMLU_KEY_TOTAL, json_object_new_int((int)j->nr_vms));
	return o;
}

static void event_op(void *vctx, const struct journal *j, enum update_event ev,
		     enum update_phase phase, const struct journal_vm *vm, unsigned int done)
{
	struct update_host_ctx *ctx = vctx;
	struct json_object *o = update_event_json(j, ev, phase, vm, done);

	if (!ctx->quiet)
		fprintf(stderr, "kvmlu-agent: %s\n",
			json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	if (ctx->emit)
		ctx->emit(ctx->emit_arg, o);
	json_object_put(o);
}

static const struct update_domains_provider *domains_provider;

void update_ops_host_set_domains(const struct update_domains_provider *p)
{
	domains_provider = p;
}

void update_ops_host_init(struct update_ops *ops, struct update_host_ctx *ctx,
			  const struct agent_config *cfg)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->cfg = cfg;
	ctx->kexec = KEXEC_FILES_NONE;
	luo_session_init(&ctx->journal_out);
	luo_session_init(&ctx->journal_in);
	*ops = (struct update_ops){
		.ctx = ctx,
		.cfg = cfg,
		.now_ns = host_now,
		.host_facts = host_facts_op,
		.vm_facts = vm_facts_op,
		.kexec_allowed = kexec_allowed_op,
		.kexec_load = kexec_load_op,
		.kexec_unload = kexec_unload_op,
		.kexec_is_loaded = kexec_is_loaded_op,
		.vm_prepare = vm_prepare_op,
		.vm_abort = vm_abort_op,
		.journal_save = journal_save_op,
		.kexec_marker_write = kexec_marker_write_op,
		.kexec_marker_clear = kexec_marker_clear_op,
		.journal_preserve = journal_preserve_op,
		.journal_discard = journal_discard_op,
		.kexec_jump = kexec_jump_op,
		.vm_restore = vm_restore_op,
		.vm_restore_start = vm_restore_start_op,
		.vm_restore_wait = vm_restore_wait_op,
		.vm_verify = vm_verify_op,
		.journal_finish = journal_finish_op,
		.event = event_op,
	};
	if (!domains_provider)
		return;
	ctx->domains = calloc(1, domains_provider->ctx_size);
	if (!ctx->domains || domains_provider->init(ctx->domains, cfg)) {
		update_ops_host_fini(ctx);
		return;
	}
	ops->domains_ctx = ctx->domains;
	ops->domains_prepare = domains_provider->prepare;
	ops->domains_rollback = domains_provider->rollback;
	ops->domains_restore = domains_provider->restore;
	ops->domains_pending = domains_provider->pending;
}

void update_ops_host_fini(struct update_host_ctx *ctx)
{
	free(ctx->domains);
	ctx->domains = NULL;
}
