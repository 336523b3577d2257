// SPDX-License-Identifier: GPL-2.0
/* domain-replace-qemu (see qemu_replace.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "agent/config/agent_config.h"
#include "agent/libvirt/libvirt_errors.h"
#include "agent/libvirt/libvirt_phase.h"
#include "agent/libvirt/lvram_qmp.h"
#include "agent/libvirt/lvram_server.h"
#include "agent/libvirt/lvram_store.h"
#include "agent/libvirt/lvram_sum.h"
#include "agent/libvirt/qemu_ram_fd.h"
#include "agent/libvirt/qemu_replace.h"
#include "agent/libvirt/qemu_replace_job.h"
#include "agent/libvirt/qemu_wrapper_config.h"
#include "common/err.h"
#include "common/json_line.h"
#include "common/test_hooks.h"
#include "kvmlu/control_wire.h"

#define RAM_ALIGN		(2ULL << 20)	/* what the guestmem checksum takes */
#define INCOMING_WAIT_MS	10000	/* after the start returned: it is done by then */

static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;


static int fail(struct qemu_replace_job *r, const char *cls, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct qemu_replace_job *r, const char *cls, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->cls = cls;
	return rc;
}

static int qmp_open(struct qemu_replace_job *r, pid_t pid, struct qmp_client *c, char *why, size_t n)
{
	char path[160];

	if (lvram_qmp_path(r->qmp_dir, r->uuid, path, sizeof(path)))
		return kvmlu_err(why, n, -ENAMETOOLONG, "QMP socket path too long");
	return lvram_qmp_connect(c, path, pid, 0, why, n);
}

/* x-ignore-shared in the old QEMU again (abort paths); errors only logged. */
static void old_cap_off(struct qemu_replace_job *r)
{
	struct qmp_client c;
	char why[256];

	if (!qmp_open(r, r->old_pid, &c, why, sizeof(why))) {
		if (lvram_qmp_ignore_shared(&c, false, why, sizeof(why)))
			fprintf(stderr, "kvmlu-agent: %s: x-ignore-shared off: %s\n", r->name, why);
		qmp_client_close(&c);
	}
}

/* The old QEMU's pc.ram: its size, checked (one backend, shared, 2 MiB multiple). */
static int check_old_qemu(struct qemu_replace_job *r, struct qmp_client *c)
{
	struct qmp_memdev devs[4];
	struct qmp_status st;
	char why[256];
	size_t nr;
	int rc;

	rc = qmp_query_status(c, &st, why, sizeof(why));
	if (!rc && !st.running)
		return fail(r, KVMLU_ERR_NOT_RUNNING, -EINVAL, "domain %s: QEMU is %s, not running",
			    r->name, st.status);
	if (!rc)
		rc = qmp_query_memdev(c, devs, 4, &nr, why, sizeof(why));
	if (!rc && nr >= 1)
		rc = lvram_qmp_check_ram(c, devs[0].size, why, sizeof(why));
	else if (!rc)
		rc = kvmlu_err(why, sizeof(why), -EINVAL, "query-memdev: no backend");
	if (rc)
		return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: %s", r->name, why);
	if (devs[0].size % RAM_ALIGN)
		return fail(r, KVMLU_ERR_FAILED, -EINVAL,
			    "domain %s: pc.ram of %" PRIu64 " bytes is not a multiple of 2 MiB",
			    r->name, devs[0].size);
	r->size = devs[0].size;
	return 0;
}

/* The save's RAM: what libvirt's job statistics say the stream carried. */
static int check_image(struct qemu_replace_job *r)
{
	virTypedParameterPtr params = NULL;
	unsigned long long total = 0, processed = 0;
	int type, n = 0, has_total, has_processed;

	r->image_bytes = -1;
	if (virDomainGetJobStats(r->dom, &type, &params, &n, VIR_DOMAIN_JOB_STATS_COMPLETED) < 0 ||
	    !n)
		return 0;	/* no statistics: the load's configuration check still holds */
	has_total = virTypedParamsGetULLong(params, n, VIR_DOMAIN_JOB_MEMORY_TOTAL, &total);
	has_processed = virTypedParamsGetULLong(params, n, VIR_DOMAIN_JOB_DATA_PROCESSED,
						&processed);
	virTypedParamsFree(params, n);
	fprintf(stderr, "kvmlu-agent: %s: the save counted %lld bytes of memory, wrote %lld "
		"(pc.ram %" PRIu64 ")\n", r->name, has_total == 1 ? (long long)total : -1LL,
		has_processed == 1 ? (long long)processed : -1LL, r->size);
	if (has_processed == 1)
		r->image_bytes = (int64_t)processed;
	/* With pc.ram ignored, QEMU counts only the small blocks (ROMs, ACPI). */
	if (has_total == 1 && total >= r->size)
		return fail(r, KVMLU_ERR_FAILED, -EIO,
			    "domain %s: the managed save carried the RAM (%llu bytes of memory, "
			    "pc.ram %" PRIu64 "): x-ignore-shared did not hold", r->name, total,
			    r->size);
	return 0;
}

/* A test's means to make the held RAM differ from the sum at the pause. */
static void test_corrupt(int fd)
{
	unsigned char b;

	if (!test_hook_lvram_corrupt())
		return;
	if (pread(fd, &b, 1, 4096) == 1) {
		b ^= 0xff;
		if (pwrite(fd, &b, 1, 4096) == 1)
			fprintf(stderr, "kvmlu-agent: test hook: one byte of the held RAM changed\n");
	}
}

/* Whether the process of pidfd has ended (readable once it has); no pidfd: not known to. */
static bool exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

/* running -> saved with the RAM held. On failure the domain runs again, or is lost. */
int qemu_replace_save_and_hold(struct qemu_replace_job *r)
{
	struct qmp_client c;
	struct stat st;
	char why[256], path[64];
	int fdno, ram_fd, rc, pidfd;

	rc = qemu_ram_find_pid(r->uuid, &r->old_pid, &fdno, why, sizeof(why));
	if (rc)
		return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: %s", r->name, why);
	rc = qmp_open(r, r->old_pid, &c, why, sizeof(why));
	if (rc)
		return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: kvmlu's QMP socket: %s", r->name,
			    why);
	rc = check_old_qemu(r, &c);
	if (rc) {
		qmp_client_close(&c);
		return rc;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)r->old_pid);
	if (stat(path, &st)) {
		qmp_client_close(&c);
		return fail(r, KVMLU_ERR_FAILED, -errno, "domain %s: %s: %s", r->name, path,
			    strerror(errno));
	}
	rc = qemu_ram_take(r->old_pid, fdno, r->size, &ram_fd, why, sizeof(why));
	if (rc) {
		qmp_client_close(&c);
		return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: %s", r->name, why);
	}
	rc = lvram_qmp_ignore_shared(&c, true, why, sizeof(why));
	qmp_client_close(&c);
	if (rc) {
		close(ram_fd);
		old_cap_off(r);
		return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: x-ignore-shared: %s", r->name, why);
	}
	if (r->before_suspend) {
		rc = r->before_suspend(r, ram_fd, why, sizeof(why));
		if (rc) {
			close(ram_fd);
			old_cap_off(r);
			return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: %s (nothing suspended)",
				    r->name, why);
		}
	}
	libvirt_phase_log(r->name, "suspend");
	if (virDomainSuspend(r->dom) < 0) {
		close(ram_fd);
		old_cap_off(r);
		return fail(r, KVMLU_ERR_FAILED, -EIO, "domain %s: virDomainSuspend: %s", r->name,
			    libvirt_last_error());
	}
	pidfd = (int)syscall(SYS_pidfd_open, r->old_pid, 0);
	test_hook_stop_at("kvmlu-agent", "replace-suspended");
	if (virDomainManagedSave(r->dom, VIR_DOMAIN_SAVE_RUNNING) < 0) {
		snprintf(why, sizeof(why), "%s", libvirt_last_error());
		close(ram_fd);
		/*
		 * Alive: back to running on it. Whether it is alive is asked of
		 * its pidfd, not of kill(0) (true for a zombie) or of libvirt
		 * (which may not have read the monitor's EOF yet).
		 */
		if (!exited(pidfd)) {
			old_cap_off(r);
			if (virDomainResume(r->dom) >= 0) {
				close(pidfd);
				return fail(r, KVMLU_ERR_FAILED, -EIO,
					    "domain %s: virDomainManagedSave: %s (nothing replaced: "
					    "it runs on its old QEMU, pid %d)", r->name, why,
					    (int)r->old_pid);
			}
			if (!exited(pidfd)) {
				close(pidfd);
				return fail(r, KVMLU_ERR_FAILED, -EIO,
					    "domain %s: virDomainManagedSave: %s; and it does not "
					    "resume: %s (it is paused on its old QEMU: virsh resume %s)",
					    r->name, why, libvirt_last_error(), r->name);
			}
		}
		close(pidfd);
		/* No device state: the RAM alone cannot bring the guest back. */
		return fail(r, KVMLU_ERR_FAILED, -EIO,
			    "domain %s: its QEMU (pid %d) died during the save (%s): the domain is "
			    "shut off and its running state is lost (no device state was saved, so "
			    "its RAM was let go); start it afresh with virsh start %s", r->name,
			    (int)r->old_pid, why, r->name);
	}
	close(pidfd);
	libvirt_phase_log(r->name, "saved");
	rc = check_image(r);
	if (rc) {
		/* The image has the RAM: the domain starts from it on a new memfd. */
		close(ram_fd);
		if (virDomainCreate(r->dom) < 0)
			snprintf(r->err + strlen(r->err), sizeof(r->err) - strlen(r->err),
				 "; and starting it from its managed save failed: %s", libvirt_last_error());
		else
			snprintf(r->err + strlen(r->err), sizeof(r->err) - strlen(r->err),
				 "; started again from its managed save");
		return rc;
	}
	/*
	 * The image has no RAM now: the domain needs this memfd back. Unhashed
	 * (out of memory, say), it is still given back, but the guest is then
	 * left paused (restart_and_verify): nothing vouches for the RAM.
	 */
	if (lvram_sum(ram_fd, r->sum, why, sizeof(why))) {
		fprintf(stderr, "kvmlu-agent: %s: hashing its RAM at the pause: %s\n", r->name, why);
		memset(r->sum, '-', LVRAM_SUM_LEN);
		r->sum[LVRAM_SUM_LEN] = '\0';
	}
	libvirt_phase_log(r->name, "hashed");
	test_corrupt(ram_fd);
	r->qemu_uid = st.st_uid;
	rc = lvram_store_hold(r->uuid, ram_fd, r->size, st.st_uid, r->sum);
	if (rc)
		return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: cannot hold its RAM (%s): its "
			    "managed save has device state only and cannot be restored without it; "
			    "virsh managedsave-remove %s, then virsh start %s boots it afresh",
			    r->name, strerror(-rc), r->name, r->name);
	return 0;
}

/* saved with the RAM held -> running on a new QEMU, or paused with the reason. */
int qemu_replace_restart_and_verify(struct qemu_replace_job *r)
{
	struct lvram_held_info info;
	struct qmp_client c;
	char why[256];
	int fdno, ram_fd, rc;

	libvirt_phase_log(r->name, "start");
	lvram_store_expect(r->uuid, true);
	rc = virDomainCreateWithFlags(r->dom, VIR_DOMAIN_START_PAUSED);
	lvram_store_expect(r->uuid, false);
	if (rc < 0) {
		snprintf(why, sizeof(why), "%s", libvirt_last_error());
		lvram_store_ungive(r->uuid);
		return fail(r, KVMLU_ERR_FAILED, -EIO,
			    "domain %s: the start on a new QEMU failed: %s. Its managed-save image "
			    "(device state) is kept and kvmlu-agent holds its RAM: fix the cause "
			    "and run `kvmlu domain-replace-qemu %s` again (a virsh start is refused "
			    "and changes nothing)",
			    r->name, why, r->name);
	}
	rc = lvram_store_wait_incoming(r->uuid, INCOMING_WAIT_MS, why, sizeof(why));
	if (rc)
		return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: started paused, but its RAM: %s; "
			    "left paused", r->name, why);
	rc = qemu_ram_find_pid(r->uuid, &r->new_pid, &fdno, why, sizeof(why));
	if (!rc)
		rc = qmp_open(r, r->new_pid, &c, why, sizeof(why));
	if (!rc) {
		rc = lvram_qmp_paused(&c, why, sizeof(why));
		if (!rc)
			rc = lvram_qmp_ignore_shared(&c, false, why, sizeof(why));
		qmp_client_close(&c);
	}
	if (rc)
		return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: the new QEMU: %s; left paused",
			    r->name, why);
	/*
	 * The sum the lvram socket took as it gave the RAM, before the new
	 * QEMU mapped it: after the load KVM has written to it (lvram_store.h).
	 */
	rc = lvram_store_get(r->uuid, &ram_fd, &info);
	if (!rc) {
		close(ram_fd);
		memcpy(r->sum, info.sum, sizeof(r->sum));
		memcpy(r->sum_after, info.sum_given, sizeof(r->sum_after));
		/* After a kexec: hashed equal before the start, and nothing ran on it since. */
		if (!r->sum_after[0] && r->verified)
			memcpy(r->sum_after, info.sum, sizeof(r->sum_after));
		if (!r->sum_after[0])
			rc = kvmlu_err(why, sizeof(why), -EIO, "it was not hashed as it was given "
				       "(kvmlu-agent's log says why)");
	} else {
		snprintf(why, sizeof(why), "%s", strerror(-rc));
	}
	if (rc)
		return fail(r, KVMLU_ERR_FAILED, rc, "domain %s: hashing its RAM again: %s; left "
			    "paused", r->name, why);
	/* The new QEMU maps the RAM now: the agent's reference is no longer needed. */
	lvram_store_release(r->uuid);
	if (r->sum[0] == '-')
		return fail(r, KVMLU_ERR_FAILED, -EIO,
			    "domain %s: its RAM could not be hashed at the pause, so nothing shows "
			    "it unchanged (now %s): left paused on its new QEMU (pid %d); virsh "
			    "resume %s runs it, virsh destroy %s stops it", r->name, r->sum_after,
			    (int)r->new_pid, r->name, r->name);
	if (strcmp(r->sum, r->sum_after))
		return fail(r, KVMLU_ERR_MISMATCH, -EIO,
			    "domain %s: its RAM differs from the pause (checksum %s, now %s): left "
			    "paused on its new QEMU (pid %d), never run on wrong RAM. Inspect it, "
			    "then virsh destroy %s (or virsh resume %s to run it anyway)", r->name,
			    r->sum, r->sum_after, (int)r->new_pid, r->name, r->name);
	libvirt_phase_log(r->name, "resume");
	if (virDomainResume(r->dom) < 0)
		return fail(r, KVMLU_ERR_FAILED, -EIO, "domain %s: virDomainResume: %s; it is "
			    "paused on its new QEMU with its RAM verified: virsh resume %s",
			    r->name, libvirt_last_error(), r->name);
	libvirt_phase_log(r->name, "running");
	return 0;
}

static int find_domain(struct qemu_replace_job *r, const char *which)
{
	int state = 0, reason;

	r->dom = virDomainLookupByUUIDString(r->conn, which);
	if (!r->dom)
		r->dom = virDomainLookupByName(r->conn, which);
	if (!r->dom)
		return fail(r, KVMLU_ERR_INVALID, -ENOENT, "no libvirt domain %.255s", which);
	snprintf(r->name, sizeof(r->name), "%s", virDomainGetName(r->dom));
	if (virDomainGetUUIDString(r->dom, r->uuid) < 0 ||
	    virDomainGetState(r->dom, &state, &reason, 0) < 0)
		return fail(r, KVMLU_ERR_FAILED, -EIO, "domain %s: %s", r->name, libvirt_last_error());
	if (state == VIR_DOMAIN_RUNNING && !lvram_store_held(r->uuid))
		return 0;
	if (state == VIR_DOMAIN_SHUTOFF && lvram_store_held(r->uuid) &&
	    virDomainHasManagedSaveImage(r->dom, 0) == 1)
		return 1;	/* a restart that failed: try it again */
	return fail(r, KVMLU_ERR_NOT_RUNNING, -EINVAL,
		    "domain %s is not running%s", r->name,
		    lvram_store_held(r->uuid) ? " and has no managed save, yet its RAM is held" : "");
}

static json_object *reply(struct qemu_replace_job *r, const struct json_line_request *rq, int rc)
{
	json_object *o;
	int state = 0, reason;

	if (rc) {
		fprintf(stderr, "kvmlu-agent: %s: %s\n", KVMLU_CMD_REPLACE_QEMU, r->err);
		return json_line_reply_error(r->cls ? r->cls : KVMLU_ERR_FAILED, r->err, rq->id);
	}
	o = json_object_new_object();
	json_object_object_add(o, KVMLU_ARG_DOMAIN, json_object_new_string(r->name));
	json_object_object_add(o, KVMLU_KEY_UUID, json_object_new_string(r->uuid));
	json_object_object_add(o, KVMLU_KEY_OLD_PID, json_object_new_int(r->old_pid));
	json_object_object_add(o, KVMLU_KEY_NEW_PID, json_object_new_int(r->new_pid));
	json_object_object_add(o, KVMLU_KEY_IMAGE_BYTES, json_object_new_int64(r->image_bytes));
	json_object_object_add(o, KVMLU_KEY_MEMORY, json_object_new_int64((int64_t)r->size));
	json_object_object_add(o, KVMLU_KEY_CHECKSUM, json_object_new_string(r->sum));
	json_object_object_add(o, KVMLU_KEY_CHECKSUM_AFTER, json_object_new_string(r->sum_after));
	if (r->dom)
		virDomainGetState(r->dom, &state, &reason, 0);
	json_object_object_add(o, KVMLU_KEY_STATE, json_object_new_string(
				       state == VIR_DOMAIN_RUNNING ? "running" : "paused"));
	fprintf(stderr, "kvmlu-agent: %s %s: QEMU %d replaced by %d, RAM kept (%s)\n",
		KVMLU_CMD_REPLACE_QEMU, r->name, (int)r->old_pid, (int)r->new_pid, r->sum);
	return json_line_reply_ok(o, rq->id);
}

json_object *qemu_replace_command(const struct agent_config *cfg,
				  const struct json_line_request *rq)
{
	struct qemu_wrapper_config wcfg;
	struct qemu_replace_job *r;
	json_object *v = NULL, *out;
	int rc;

	if (rq->args) {
		json_object_object_foreach(rq->args, key, val) {
			(void)val;
			if (strcmp(key, KVMLU_ARG_DOMAIN))
				return json_line_reply_error(KVMLU_ERR_INVALID, "unknown argument",
							     rq->id);
		}
		json_object_object_get_ex(rq->args, KVMLU_ARG_DOMAIN, &v);
	}
	if (!v || !json_object_is_type(v, json_type_string) ||
	    !json_object_get_string_len(v) || json_object_get_string_len(v) > 255 ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return json_line_reply_error(KVMLU_ERR_INVALID,
					     "\"domain\" (a name or UUID, 1..255 bytes) missing",
					     rq->id);
	if (pthread_mutex_trylock(&one_at_a_time))
		return json_line_reply_error(KVMLU_ERR_BUSY, "another QEMU replacement is running",
					     rq->id);
	r = calloc(1, sizeof(*r));
	if (!r) {
		pthread_mutex_unlock(&one_at_a_time);
		return json_line_reply_error(KVMLU_ERR_FAILED, "out of memory", rq->id);
	}
	rc = qemu_wrapper_config_load(cfg->qemu_config, &wcfg, r->err, sizeof(r->err));
	if (rc) {
		fail(r, KVMLU_ERR_FAILED, rc, "kvmlu-qemu's configuration %s", r->err);
		goto out;
	}
	memcpy(r->qmp_dir, wcfg.qmp_dir, sizeof(r->qmp_dir));
	libvirt_errors_quiet();
	r->conn = virConnectOpen(cfg->libvirt_uri[0] ? cfg->libvirt_uri : "qemu:///system");
	if (!r->conn) {
		rc = fail(r, KVMLU_ERR_FAILED, -ECONNREFUSED, "libvirt: %s", libvirt_last_error());
		goto out;
	}
	rc = find_domain(r, json_object_get_string(v));
	if (rc == 0) {
		rc = qemu_replace_save_and_hold(r);
		if (!rc)
			test_hook_stop_at("kvmlu-agent", "replace-held");
	} else if (rc == 1) {
		rc = 0;
	}
	if (!rc)
		rc = qemu_replace_restart_and_verify(r);
out:
	out = reply(r, rq, rc);
	if (r->dom)
		virDomainFree(r->dom);
	if (r->conn)
		virConnectClose(r->conn);
	free(r);
	pthread_mutex_unlock(&one_at_a_time);
	return out;
}

int qemu_replace_start(const struct agent_config *cfg, char *err, size_t errlen)
{
	struct qemu_wrapper_config wcfg;
	char why[256];
	int rc;

	if (access(cfg->qemu_config, F_OK))
		return kvmlu_err(err, errlen, -ENOENT, "no %s (kvmlu-qemu not set up): no lvram "
				 "socket, domain-replace-qemu cannot give RAM back", cfg->qemu_config);
	rc = qemu_wrapper_config_load(cfg->qemu_config, &wcfg, err, errlen);
	if (rc)
		return rc;
	rc = lvram_server_start(wcfg.lvram_socket, wcfg.qmp_dir, why, sizeof(why));
	return rc ? kvmlu_err(err, errlen, rc, "lvram socket: %s", why) : 0;
}
