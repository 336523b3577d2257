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

#include "agent/vmm/vmm_client.h"
#include "agent/journal/journal_store.h"
#include "agent/journal/kexec_marker.h"
#include "agent/update/host_facts.h"
#include "agent/update/kexec_image.h"
#include "agent/update/update_ops_host.h"
#include "agent/update/update_ops_host_restore.h"
#include "agent/update/vm_disks.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "common/test_hooks.h"
#include "kvmlu/control_wire.h"
#include "kvmlu/unix_addr.h"


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
		const struct vmm_reply_field f[] = {
			/* The VMM's own pause time is closer to the truth than ours. */
			{ KVMLU_KEY_PAUSED_AT, &vm->paused_ns, true },
			{ KVMLU_KEY_PREPARE_NS, &vm->vmm_prepare_ns, false },
			{ KVMLU_KEY_PREPARE_PAUSED_NS, &vm->steps.prepare_paused_ns, false },
			{ KVMLU_KEY_CAPTURE_NS, &vm->steps.capture_ns, false },
			{ KVMLU_KEY_PRESERVE_RAM_NS, &vm->steps.preserve_ram_ns, false },
		};
		long long mem = vmm_client_reply_int(ret, KVMLU_KEY_MEMORY);

		snprintf(vm->session, sizeof(vm->session), "%s", session);
		memcpy(vm->checksum, sum, JOURNAL_CHECKSUM_LEN + 1);
		vmm_client_reply_fields(ret, f, sizeof(f) / sizeof(f[0]));
		if (mem > 0)
			vm->memory_bytes = (uint64_t)mem;
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
		.vm_restore = host_vm_restore_op,
		.vm_restore_start = host_vm_restore_start_op,
		.vm_restore_wait = host_vm_restore_wait_op,
		.vm_verify = host_vm_verify_op,
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
	ops->domains_preflight = domains_provider->preflight;
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
