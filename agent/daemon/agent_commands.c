// SPDX-License-Identifier: GPL-2.0
/*
 * Handlers of the agent's commands (see agent_commands.h). Unknown keys
 * in a request's "args" are refused before anything runs. libvirt-event
 * comes from kvmlu-libvirt-hook, not from the CLI, and goes to the domain
 * table kvmlu-agent registers (agent/libvirt/libvirt_tracked.h).
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/daemon/agent_commands.h"
#include "agent/daemon/agent_restore.h"
#include "agent/daemon/vm_discovery.h"
#include "agent/vmm/vmm_client.h"
#include "agent/journal/journal_json.h"
#include "agent/journal/journal_store.h"
#include "agent/update/host_facts.h"
#include "agent/update/kexec_files.h"
#include "agent/update/update_machine.h"
#include "agent/update/update_ops_host.h"
#include "common/clock.h"
#include "common/json_line.h"
#include "kvmlu/control_wire.h"
#include "kvmlu/version.h"

#define REPORT_DEFAULT_LAST 10

/*
 * One change of the host's VMs at a time: a host-update, the libvirt
 * domains' restore after a kexec, or a domain-replace-qemu (which saves a
 * domain that a host-update would otherwise suspend or save meanwhile).
 * update_holder names the holder for the Busy answer.
 */
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(const char *) update_holder;

static bool update_lock_take(const char *who)
{
	if (pthread_mutex_trylock(&update_lock))
		return false;
	atomic_store(&update_holder, who);
	return true;
}

static void update_lock_give(void)
{
	atomic_store(&update_holder, NULL);
	pthread_mutex_unlock(&update_lock);
}

static struct json_object *update_lock_busy(const char *cmd, const struct json_line_request *rq)
{
	const char *who = atomic_load(&update_holder);
	char msg[160];

	snprintf(msg, sizeof(msg), "%s: %s is running; try again when it ends", cmd,
		 who ? who : "another host-update");
	return json_line_reply_error(KVMLU_ERR_BUSY, msg, rq->id);
}
/* The running update, for `status` (guarded by status_lock). */
static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static char running_id[48];
static char running_phase[24];
static const struct agent_domain_table *domains;

void agent_commands_set_domains(const struct agent_domain_table *t)
{
	domains = t;
}

static agent_replace_qemu_fn replace_qemu;

void agent_commands_set_replace_qemu(agent_replace_qemu_fn fn)
{
	replace_qemu = fn;
}

static struct json_object *bad_request(const struct json_line_request *rq, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static struct json_object *bad_request(const struct json_line_request *rq, const char *fmt, ...)
{
	char desc[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	return json_line_reply_error(KVMLU_ERR_INVALID, desc, rq->id);
}

/* NULL when every key of args (NULL: none) is allowed, else the first one that is not. */
static const char *unknown_arg(const struct json_line_request *rq, const char *const *allowed)
{
	if (!rq->args)
		return NULL;
	json_object_object_foreach(rq->args, key, v) {
		bool ok = false;

		for (unsigned int i = 0; allowed[i] && !ok; i++)
			ok = !strcmp(key, allowed[i]);
		(void)v;
		if (!ok)
			return key;
	}
	return NULL;
}

/* The argument key, or NULL when absent. */
static struct json_object *arg(const struct json_line_request *rq, const char *key)
{
	struct json_object *v;

	return rq->args && json_object_object_get_ex(rq->args, key, &v) ? v : NULL;
}

static struct json_object *cmd_status(const struct agent_config *cfg, const struct json_line_request *rq)
{
	struct json_object *r = json_object_new_object(), *u = NULL;
	struct journal *j = calloc(1, sizeof(*j));
	char err[128];

	unsigned int lv_total = 0, lv_active = 0;

	if (j && !vm_discovery_scan(cfg->run_dir, j, err, sizeof(err)))
		json_object_object_add(r, KVMLU_KEY_VMS, json_object_new_int((int)j->nr_vms));
	free(j);
	if (domains)
		domains->count(&lv_total, &lv_active);
	json_object_object_add(r, KVMLU_KEY_LIBVIRT_DOMAINS, json_object_new_int((int)lv_total));
	json_object_object_add(r, KVMLU_KEY_LIBVIRT_ACTIVE, json_object_new_int((int)lv_active));
	json_object_object_add(r, KVMLU_KEY_VERSION, json_object_new_string(KVMLU_VERSION));
	json_object_object_add(r, KVMLU_KEY_PROTOCOL, json_object_new_int(KVMLU_WIRE_PROTOCOL));
	json_object_object_add(r, KVMLU_KEY_PID, json_object_new_int((int)getpid()));
	json_object_object_add(r, KVMLU_KEY_SOCKET, json_object_new_string(cfg->socket_path));
	json_object_object_add(r, KVMLU_KEY_RUN_DIR, json_object_new_string(cfg->run_dir));
	json_object_object_add(r, KVMLU_KEY_HISTORY_DIR, json_object_new_string(cfg->history_dir));
	json_object_object_add(r, KVMLU_KEY_LIVEUPDATE,
			       json_object_new_boolean(access("/dev/liveupdate", F_OK) == 0));
	json_object_object_add(r, KVMLU_KEY_ALLOW_KEXEC, json_object_new_boolean(cfg->allow_kexec));
	pthread_mutex_lock(&status_lock);
	if (running_id[0]) {
		u = json_object_new_object();
		json_object_object_add(u, KVMLU_KEY_UPDATE_ID, json_object_new_string(running_id));
		json_object_object_add(u, KVMLU_KEY_PHASE, json_object_new_string(running_phase));
	}
	pthread_mutex_unlock(&status_lock);
	json_object_object_add(r, KVMLU_KEY_UPDATE, u);
	return json_line_reply_ok(r, rq->id);
}

static struct json_object *cmd_vms(const struct agent_config *cfg, const struct json_line_request *rq)
{
	struct json_object *list, *r, *dom;
	struct journal *j = calloc(1, sizeof(*j));
	char err[256];

	if (!j)
		return json_line_reply_error(KVMLU_ERR_FAILED, "out of memory", rq->id);
	if (vm_discovery_scan(cfg->run_dir, j, err, sizeof(err))) {
		free(j);
		return json_line_reply_error(KVMLU_ERR_FAILED, err, rq->id);
	}
	list = json_object_new_array();
	for (unsigned int i = 0; i < j->nr_vms; i++) {
		struct json_object *o = json_object_new_object(), *ret = NULL;
		char why[256];
		const char *s;

		json_object_object_add(o, KVMLU_KEY_KIND, json_object_new_string("kvmlu-vmm"));
		json_object_object_add(o, KVMLU_KEY_NAME, json_object_new_string(j->vms[i].name));
		json_object_object_add(o, KVMLU_KEY_CONTROL, json_object_new_string(j->vms[i].control));
		if (vmm_client_call(j->vms[i].control, "status", (int)cfg->vmm_timeout_ms, &ret,
				    why, sizeof(why))) {
			json_object_object_add(o, KVMLU_KEY_ANSWERED, json_object_new_boolean(0));
			json_object_object_add(o, KVMLU_KEY_STATE, json_object_new_string("unreachable"));
			json_object_object_add(o, KVMLU_KEY_ERROR, json_object_new_string(why));
		} else {
			json_object_object_add(o, KVMLU_KEY_ANSWERED, json_object_new_boolean(1));
			s = vmm_client_reply_str(ret, KVMLU_KEY_STATE);
			json_object_object_add(o, KVMLU_KEY_STATE, json_object_new_string(s ? s : "unknown"));
			json_object_object_add(o, KVMLU_KEY_MEMORY_BYTES,
					       json_object_new_int64(vmm_client_reply_int(ret, KVMLU_KEY_MEMORY)));
			json_object_object_add(o, KVMLU_KEY_CPUS,
					       json_object_new_int64(vmm_client_reply_int(ret, KVMLU_KEY_VCPUS)));
			s = vmm_client_reply_str(ret, KVMLU_KEY_BACKEND);
			json_object_object_add(o, KVMLU_KEY_BACKEND, json_object_new_string(s ? s : "memfd"));
			json_object_put(ret);
		}
		json_object_array_add(list, o);
	}
	free(j);
	dom = domains ? domains->to_json() : NULL;
	for (size_t i = 0; dom && i < json_object_array_length(dom); i++) {
		struct json_object *o = json_object_get(json_object_array_get_idx(dom, i));

		json_object_object_add(o, KVMLU_KEY_KIND, json_object_new_string("libvirt"));
		json_object_array_add(list, o);
	}
	json_object_put(dom);
	r = json_object_new_object();
	json_object_object_add(r, KVMLU_KEY_VMS, list);
	return json_line_reply_ok(r, rq->id);
}

/* From the hook, while libvirt holds the domain's lock: answer at once. */
static struct json_object *cmd_libvirt_event(const struct json_line_request *rq)
{
	char err[256];
	int ret;

	ret = domains->event(rq->args, (int64_t)kvmlu_wall_ns(), err, sizeof(err));
	if (ret)
		return json_line_reply_error(ret == -EINVAL ? KVMLU_ERR_INVALID : KVMLU_ERR_BUSY,
					     err, rq->id);
	return json_line_reply_ok(json_object_new_object(), rq->id);
}

static struct json_object *cmd_report(const struct agent_config *cfg, const struct json_line_request *rq)
{
	static const char *const allowed[] = { KVMLU_ARG_LAST, NULL };
	struct json_object *v, *list, *r;
	unsigned int last = REPORT_DEFAULT_LAST, n, bad;
	struct journal *js;
	const char *k = unknown_arg(rq, allowed);

	if (k)
		return bad_request(rq, "report: unknown argument \"%s\"", k);
	v = arg(rq, KVMLU_ARG_LAST);
	if (v) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int(v) < 1 ||
		    json_object_get_int(v) > 100)
			return bad_request(rq, "report: \"last\" is not 1..100");
		last = (unsigned int)json_object_get_int(v);
	}
	js = calloc(last, sizeof(*js));
	if (!js)
		return json_line_reply_error(KVMLU_ERR_FAILED, "out of memory", rq->id);
	if (journal_store_history_list(cfg->history_dir, js, last, &n, &bad)) {
		free(js);
		return json_line_reply_error(KVMLU_ERR_FAILED, "history directory unreadable", rq->id);
	}
	list = json_object_new_array();
	for (unsigned int i = 0; i < n; i++)
		json_object_array_add(list, journal_to_json(&js[i]));
	free(js);
	r = json_object_new_object();
	json_object_object_add(r, KVMLU_KEY_UPDATES, list);
	json_object_object_add(r, KVMLU_KEY_UNREADABLE, json_object_new_int((int)bad));
	return json_line_reply_ok(r, rq->id);
}

struct emit_target {
	int fd;
	bool gone;
};

static void emit_to_client(void *arg, struct json_object *ev)
{
	struct emit_target *t = arg;
	struct json_object *phase, *state;

	if (json_object_object_get_ex(ev, KVMLU_KEY_PHASE, &phase) &&
	    json_object_object_get_ex(ev, KVMLU_KEY_STATE, &state)) {
		pthread_mutex_lock(&status_lock);
		snprintf(running_phase, sizeof(running_phase), "%s",
			 json_object_get_string(phase));
		pthread_mutex_unlock(&status_lock);
	}
	/* The CLI may have gone; the update goes on without it. */
	if (!t->gone && json_line_write(t->fd, ev))
		t->gone = true;
}

static int get_path(const struct json_line_request *rq, const char *key, char *out, size_t len,
		    bool required, char *err, size_t errlen)
{
	struct json_object *v = arg(rq, key);
	const char *s;

	if (!v) {
		if (required)
			snprintf(err, errlen, "host-update: \"%s\" missing", key);
		return required ? -EINVAL : 0;
	}
	if (!json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) >= len) {
		snprintf(err, errlen, "host-update: \"%s\" is not a string shorter than %zu",
			 key, len);
		return -EINVAL;
	}
	s = json_object_get_string(v);
	if (key[0] != 'a' && s[0] != '/') {
		snprintf(err, errlen, "host-update: \"%s\" %s is not an absolute path", key, s);
		return -EINVAL;
	}
	snprintf(out, len, "%s", s);
	return 0;
}

static void finish_update(const struct agent_config *cfg, const struct journal *j)
{
	char err[256];

	if (j->outcome == UPDATE_RUNNING)
		return;
	if (journal_store_history_add(cfg->history_dir, cfg->history_keep, j, err, sizeof(err)))
		fprintf(stderr, "kvmlu-agent: %s\n", err);
	journal_store_remove(cfg->state_dir);
}

/* The uid of the process on the other end of fd; -1 (nobody's) if unknown. */
static uid_t peer_uid(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || len != sizeof(cr))
		return (uid_t)-1;
	return cr.uid;
}

static struct json_object *cmd_host_update(const struct agent_config *cfg, int fd,
					   const struct json_line_request *rq)
{
	static const char *const allowed[] = { KVMLU_ARG_KERNEL, KVMLU_ARG_INITRD, KVMLU_ARG_APPEND,
						KVMLU_ARG_DRY_RUN, NULL };
	struct emit_target target = { .fd = fd };
	struct json_object *v, *r, *reply;
	struct kexec_files files = KEXEC_FILES_NONE;
	struct update_host_ctx ctx;
	int rc;
	struct update_ops ops;
	struct journal *j;
	char err[256];
	const char *k = unknown_arg(rq, allowed);
	bool trusted;

	if (k)
		return bad_request(rq, "host-update: unknown argument \"%s\"", k);
	if (!update_lock_take("a host-update"))
		return update_lock_busy("host-update", rq);
	j = calloc(1, sizeof(*j));
	if (!j) {
		reply = json_line_reply_error(KVMLU_ERR_FAILED, "out of memory", rq->id);
		goto out_unlock;
	}
	journal_init(j, (int64_t)kvmlu_wall_ns());
	if (get_path(rq, KVMLU_ARG_KERNEL, j->kernel, sizeof(j->kernel), true, err, sizeof(err)) ||
	    get_path(rq, KVMLU_ARG_INITRD, j->initrd, sizeof(j->initrd), false, err, sizeof(err)) ||
	    get_path(rq, KVMLU_ARG_APPEND, j->cmdline, sizeof(j->cmdline), false, err, sizeof(err))) {
		reply = json_line_reply_error(KVMLU_ERR_INVALID, err, rq->id);
		goto out_free;
	}
	v = arg(rq, KVMLU_ARG_DRY_RUN);
	if (v) {
		if (!json_object_is_type(v, json_type_boolean)) {
			reply = bad_request(rq, "host-update: \"dry-run\" is not true/false");
			goto out_free;
		}
		j->dry_run = json_object_get_boolean(v);
	}
	/*
	 * The command line chooses what the next kernel runs as root (init=,
	 * rdinit=, systemd.run=...): only a trusted caller may write it. A
	 * group member's kernel boots with this one's command line.
	 */
	trusted = kexec_files_trusted(peer_uid(fd));
	if (arg(rq, KVMLU_ARG_APPEND) && !trusted) {
		reply = json_line_reply_error(KVMLU_ERR_PERMISSION,
					      "host-update: only root may set the next kernel's "
					      "command line (append): it chooses what runs as root",
					      rq->id);
		goto out_free;
	}
	/* No --append: the next kernel boots with this one's command line. */
	if (!arg(rq, KVMLU_ARG_APPEND) &&
	    host_facts_cmdline("", j->cmdline, sizeof(j->cmdline))) {
		reply = json_line_reply_error(KVMLU_ERR_FAILED, "cannot read /proc/cmdline", rq->id);
		goto out_free;
	}
	/* Who may kexec what; the fds opened here are the files loaded. */
	rc = kexec_files_open(cfg, trusted, j->kernel, j->initrd, &files,
			      err, sizeof(err));
	if (rc) {
		reply = json_line_reply_error(rc == -EPERM ? KVMLU_ERR_PERMISSION : KVMLU_ERR_FAILED,
					      err, rq->id);
		goto out_free;
	}
	if (vm_discovery_scan(cfg->run_dir, j, err, sizeof(err))) {
		reply = json_line_reply_error(KVMLU_ERR_FAILED, err, rq->id);
		goto out_free;
	}

	pthread_mutex_lock(&status_lock);
	snprintf(running_id, sizeof(running_id), "%s", j->update_id);
	pthread_mutex_unlock(&status_lock);

	update_ops_host_init(&ops, &ctx, cfg);
	ctx.kexec = files;
	ctx.emit = emit_to_client;
	ctx.emit_arg = &target;
	update_machine_run(j, &ops);
	update_ops_host_fini(&ctx);
	finish_update(cfg, j);

	r = json_object_new_object();
	json_object_object_add(r, KVMLU_KEY_OUTCOME,
			       json_object_new_string(update_outcome_name(j->outcome)));
	json_object_object_add(r, KVMLU_KEY_REPORT, journal_to_json(j));
	reply = json_line_reply_ok(r, rq->id);

	pthread_mutex_lock(&status_lock);
	running_id[0] = 0;
	pthread_mutex_unlock(&status_lock);
out_free:
	kexec_files_close(&files);
	free(j);
out_unlock:
	update_lock_give();
	return reply;
}

struct json_object *agent_commands_dispatch(const struct agent_config *cfg, int fd,
					    const struct json_line_request *rq)
{
	static const char *const none[] = { NULL };
	const char *k;

	if (!strcmp(rq->cmd, "host-update"))
		return cmd_host_update(cfg, fd, rq);
	if (!strcmp(rq->cmd, "report"))
		return cmd_report(cfg, rq);
	if (!strcmp(rq->cmd, "libvirt-event") && domains)
		return cmd_libvirt_event(rq);
	if (!strcmp(rq->cmd, KVMLU_CMD_REPLACE_QEMU) && replace_qemu) {
		struct json_object *reply;

		if (!update_lock_take("a " KVMLU_CMD_REPLACE_QEMU))
			return update_lock_busy(KVMLU_CMD_REPLACE_QEMU, rq);
		reply = replace_qemu(cfg, rq);
		update_lock_give();
		return reply;
	}
	if (!strcmp(rq->cmd, "status") || !strcmp(rq->cmd, "vms")) {
		k = unknown_arg(rq, none);
		if (k)
			return bad_request(rq, "%s: unknown argument \"%s\"", rq->cmd, k);
		return rq->cmd[0] == 's' ? cmd_status(cfg, rq) : cmd_vms(cfg, rq);
	}
	return json_line_reply_error(KVMLU_ERR_UNKNOWN_CMD, rq->cmd, rq->id);
}

void agent_commands_recover(const struct agent_config *cfg)
{
	struct update_host_ctx ctx;
	struct update_ops ops;
	struct journal *j = calloc(1, sizeof(*j));
	char err[256];
	int ret;

	if (!j)
		return;
	ret = journal_store_load(cfg->state_dir, j, err, sizeof(err));
	if (ret == -ENOENT)
		goto out;
	if (ret) {
		fprintf(stderr, "kvmlu-agent: unfinished journal refused, left in place: %s\n", err);
		goto out;
	}
	if (j->outcome == UPDATE_RUNNING) {
		fprintf(stderr, "kvmlu-agent: update %s was cut off in %s: rolling back\n",
			j->update_id, update_phase_name(j->phase));
		update_ops_host_init(&ops, &ctx, cfg);
		update_machine_recover(j, &ops);
		update_ops_host_fini(&ctx);
	}
	finish_update(cfg, j);
	fprintf(stderr, "kvmlu-agent: update %s: %s\n", j->update_id,
		update_outcome_name(j->outcome));
out:
	free(j);
}

static void *restore_domains_thread(void *arg)
{
	const struct agent_config *cfg = arg;
	struct update_host_ctx ctx;
	struct update_ops ops;

	/* The tail of the update before the kexec: no new one meanwhile. */
	pthread_mutex_lock(&update_lock);
	atomic_store(&update_holder, "the restore of the libvirt domains left by the kexec");
	update_ops_host_init(&ops, &ctx, cfg);
	agent_restore_domains(cfg, &ops, stderr);
	update_ops_host_fini(&ctx);
	update_lock_give();
	return NULL;
}

void agent_commands_restore_domains(const struct agent_config *cfg)
{
	pthread_t t;
	int ret;

	ret = pthread_create(&t, NULL, restore_domains_thread, (void *)cfg);
	if (ret) {
		fprintf(stderr, "kvmlu-agent: no thread for the pending libvirt domains (%s): restoring them first\n",
			strerror(ret));
		restore_domains_thread((void *)cfg);
		return;
	}
	pthread_detach(t);
}
