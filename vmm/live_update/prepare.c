// SPDX-License-Identifier: GPL-2.0
/*
 * prepare-update and abort-update: the VMM's half of a host update before
 * the kexec (see live_update.h).
 *
 * Happy path, first while the guest runs: dirty logging on and every
 * chunk of RAM hashed (vmm/memory_digest.h) -> LUO session
 * "kvmlu/vm/<name>" -> preserve RAM file i under LUO_TOKEN_RAM(i) -> hash
 * again what the guest wrote; then pause -> every disk fdatasync'ed ->
 * capture, the checksum's last
 * round -> state FDT with the chunk digests in a sealed memfd -> preserve
 * it under LUO_TOKEN_STATE -> reply ready and stay paused holding the
 * session fd. The kexec then carries the session to the next kernel
 * (docs/live-update-memory.md: why preserving RAM the guest still writes
 * loses nothing).
 *
 * Unhappy paths, each ending with the VM as it was before the request
 * (running if it ran) and nothing preserved:
 *  1. No usable /dev/liveupdate, or a name that cannot be a session name:
 *     refused before the pause.
 *  2. Pause, a disk's fdatasync or capture fails: resumed, error.
 *  3. A RAM file the kernel cannot preserve (guest_memfd on a kernel
 *     without the project's patch, kernel/patches: ENOENT, no LUO handler;
 *     or EOPNOTSUPP, memory it refuses; hugetlb): class NotPreservable,
 *     before the pause; closing the session unpreserves what it already
 *     held.
 * guest_memfd RAM is preserved like memfd where the kernel has the
 * handler (CONFIG_LIVEUPDATE_GUEST_MEMFD); restore links it into the new
 * VM (restore.c). Whether it can is only known by trying.
 *  4. abort-update: the session is closed (unpreserved) and the VM resumed.
 *  5. The VMM dies while prepared: the kernel closes the session and the
 *     VM is not carried over; the agent reports it lost.
 * While prepared, resume is refused (the saved state would go stale).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/json_line.h"
#include "common/test_hooks.h"
#include "guestmem/guestmem.h"
#include "vmm/live_update/live_update.h"
#include "vmm/memory_digest.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_memfd.h"
#include "vmm/state/vm_capture.h"
#include "vmm/vm.h"
#include "vmm/vm_virtio.h"

/* One VM per process: what prepare-update holds until kexec or abort. */
struct live_update_prepared {
	bool active;
	bool was_running;		/* resume on abort */
	struct luo_session session;
	char checksum[33];
	size_t state_bytes;
	unsigned int nr_files;
	uint64_t paused_wall_ns;
	uint64_t prepared_wall_ns;
	/* KVM's dirty log, still on: turned off only if the VM runs again. */
	struct guestmem_dirty_log log;
};

static struct live_update_prepared prepared = { .session = { .fd = -1 }, .log = { .vm_fd = -1 } };
/*
 * prepare-update and abort-update run on the control worker, update-status
 * and resume's check on the server thread: what they share is read and
 * published under this lock.
 */
static pthread_mutex_t prepared_lock = PTHREAD_MUTEX_INITIALIZER;

bool live_update_prepared(void)
{
	bool active;

	pthread_mutex_lock(&prepared_lock);
	active = prepared.active;
	pthread_mutex_unlock(&prepared_lock);
	return active;
}

/* Which class a LUO failure gets: clients act on it (agent rollback). */
static const char *luo_error_class(int rc, bool preserving)
{
	if (preserving && (rc == -ENOENT || rc == -EOPNOTSUPP || rc == -EFBIG))
		return KVMLU_ERR_NOT_PRESERVABLE;
	if (!preserving && (rc == -ENOENT || rc == -ENOTTY || rc == -EACCES ||
			    rc == -EPERM || rc == -ENODEV))
		return KVMLU_ERR_NO_LUO;
	if (rc == -EBUSY && !preserving)
		return KVMLU_ERR_BUSY;
	return KVMLU_ERR_FAILED;
}

/*
 * A new session holding the RAM files; on error nothing stays preserved.
 * Called while the guest still runs (docs/live-update-memory.md): the
 * kernel pins the very folios the guest keeps writing and hands them over
 * as they are at the kexec, so nothing written after this is lost.
 */
static int prepare_session_ram(struct vm *vm, const char *name, struct luo_session *s,
			       uint64_t *preserve_ns, struct json_line_error *e)
{
	char err[512] = "";
	char what[32];
	uint64_t t0;
	int rc;

	rc = luo_session_create(s, name, err, sizeof(err));
	if (rc)
		return json_line_error_set(e, luo_error_class(rc, false), "%s", err);
	/*
	 * The kernel pins every page of a preserved memfd here, allocating
	 * and zeroing each hole (memfd_pin_folios): the per-GiB cost, and new
	 * memory the agent's preflight counted (status memory_resident).
	 */
	t0 = kvmlu_mono_ns();
	for (unsigned int i = 0; i < vm->mem.nr; i++) {
		snprintf(what, sizeof(what), "RAM region %u", i);
		rc = luo_session_preserve_fd(s, vm->mem.r[i].fd, LUO_TOKEN_RAM(i), what,
					     err, sizeof(err));
		if (rc) {
			bool gmem = vm->mem.backend == GUESTMEM_GUEST_MEMFD;

			json_line_error_set(e, luo_error_class(rc, true), "%s backend: %s%s",
					    guestmem_backend_name(vm->mem.backend), err,
					    gmem && (rc == -ENOENT || rc == -EOPNOTSUPP) ?
					    " (guest_memfd needs the kvmlu kernel patch, CONFIG_LIVEUPDATE_GUEST_MEMFD, and shared memory)" : "");
			/* Closing an outgoing session unpreserves every file already in it. */
			luo_session_close(s);
			return rc;
		}
	}
	*preserve_ns = kvmlu_mono_ns() - t0;
	return 0;
}

/* The state memfd joins the session; on error the session is closed. */
static int prepare_session_state(struct luo_session *s, int state_fd, uint64_t *preserve_ns,
				 struct json_line_error *e)
{
	char err[512] = "";
	uint64_t t0 = kvmlu_mono_ns();
	int rc;

	rc = luo_session_preserve_fd(s, state_fd, LUO_TOKEN_STATE, "state memfd",
				     err, sizeof(err));
	if (rc) {
		json_line_error_set(e, luo_error_class(rc, true), "%s", err);
		luo_session_close(s);
		return rc;
	}
	*preserve_ns = kvmlu_mono_ns() - t0;
	return 0;
}

/*
 * Capture into a sealed memfd; *state_fd and the checksum on success.
 * capture_ns[0] is all of it, capture_ns[1] the vCPUs' and devices' state.
 */
static int prepare_state(struct vm *vm, struct memory_digest *md, int *state_fd, char sum[33],
			 size_t *bytes, uint64_t capture_ns[2], uint64_t *paused_wall_ns,
			 struct json_line_error *e)
{
	struct guestmem_checksum c = { 0 };
	struct state_vm s;
	char err[512] = "";
	void *blob = NULL;
	size_t size = 0;
	uint64_t t0 = kvmlu_mono_ns();
	int rc;

	rc = state_vm_capture(vm, false, &s, err, sizeof(err));
	if (rc)
		return json_line_error_set(e, KVMLU_ERR_FAILED, "capture: %s", err);
	capture_ns[1] = kvmlu_mono_ns() - t0;
	/* Last, as capture would: only the chunks written since the last round. */
	rc = memory_digest_finish(vm, md, &c, err, sizeof(err));
	if (rc) {
		state_vm_free(&s);
		return json_line_error_set(e, KVMLU_ERR_FAILED, "capture: %s", err);
	}
	s.has_checksum = true;
	s.checksum_hi = c.hi;
	s.checksum_lo = c.lo;
	/* The table travels too: a mismatch after the kexec names its chunks. */
	s.chunk_digests = malloc((size_t)md->table.nr_chunks * sizeof(*s.chunk_digests));
	if (s.chunk_digests) {
		memcpy(s.chunk_digests, md->table.digest,
		       (size_t)md->table.nr_chunks * sizeof(*s.chunk_digests));
		s.nr_chunk_digests = md->table.nr_chunks;
	}
	/* After the kexec the files are found by these tokens, not fd order. */
	for (unsigned int i = 0; i < s.nr_regions; i++)
		s.regions[i].token = LUO_TOKEN_RAM(i);
	guestmem_checksum_format(&c, sum);
	/*
	 * The one pause time of this update: the wall clock read with the
	 * VM's clock, which travels in the state. The restore reports the same
	 * value from there, so both sides of the kexec agree on it.
	 */
	if (s.devices.have & VM_DEVICES_HAVE_CLOCK)
		*paused_wall_ns = s.devices.clock_wall_ns;
	rc = state_fdt_write(&s, &blob, &size, err, sizeof(err));
	state_vm_free(&s);
	if (rc)
		return json_line_error_set(e, KVMLU_ERR_FAILED, "state FDT: %s", err);
	rc = state_memfd_create(vm->name, blob, size, state_fd, err, sizeof(err));
	free(blob);
	if (rc)
		return json_line_error_set(e, KVMLU_ERR_FAILED, "%s", err);
	*bytes = size;
	capture_ns[0] = kvmlu_mono_ns() - t0;
	return 0;
}

static int live_update_cmd_prepare(struct control_ctx *ctx, json_object *args, json_object **ret,
			    struct json_line_error *e)
{
	struct vm *vm = ctx->vm;
	struct luo_session s;
	char name[LUO_SESSION_NAME_SIZE], err[512] = "";
	enum vm_state st = vm_get_state(vm);
	uint64_t pause_ns = 0, capture_ns[2] = { 0, 0 }, preserve_ns = 0, preserve_ram_ns = 0;
	uint64_t t0 = kvmlu_mono_ns(), t_pause = 0, resume_ns;
	struct memory_digest md = { .log = { .vm_fd = -1 } };
	size_t bytes = 0;
	char sum[33];
	unsigned int running_ms;
	int state_fd = -1, rc;

	luo_session_init(&s);
	if (memory_digest_running_ms_arg(args, "prepare-update", &running_ms, e))
		return -EINVAL;
	if (prepared.active)
		return json_line_error_set(e, KVMLU_ERR_PREPARED,
					   "already prepared: session '%s' is held (abort-update first)",
					   prepared.session.name);
	if (st != VM_STATE_RUNNING && st != VM_STATE_PAUSED)
		return json_line_error_set(e, KVMLU_ERR_NOT_RUNNING,
					   "prepare-update needs a running or paused VM; it is %s",
					   vm_state_name(st));
	rc = luo_session_name_for_vm(vm->name, name, err, sizeof(err));
	if (rc)
		return json_line_error_set(e, KVMLU_ERR_FAILED, "no LUO session name for VM '%s': %s",
					   vm->name, err);
	/* Refuse before the pause when this host cannot keep anything. */
	if (access(LUO_SESSION_DEVICE, F_OK) != 0)
		return json_line_error_set(e, KVMLU_ERR_NO_LUO, "%s: %s", LUO_SESSION_DEVICE,
					   luo_session_error_hint(LUO_OP_OPEN, ENOENT));

	prepared.was_running = st == VM_STATE_RUNNING;
	/*
	 * The O(RAM) work while the guest runs: every chunk hashed with dirty
	 * logging on, the RAM files preserved, a few rounds of hashing what
	 * the guest wrote meanwhile. The pause then holds only the last
	 * round, the capture and the state memfd.
	 */
	if (prepared.was_running) {
		rc = memory_digest_start(vm, &md, running_ms, err, sizeof(err));
		if (rc) {
			rc = json_line_error_set(e, KVMLU_ERR_FAILED, "%s", err);
			goto err_release;
		}
	}
	rc = prepare_session_ram(vm, name, &s, &preserve_ram_ns, e);
	if (rc)
		goto err_release;
	if (prepared.was_running)
		memory_digest_converge(vm, &md);
	/* Until the capture gives the state's own value (prepare_state). */
	prepared.paused_wall_ns = kvmlu_wall_ns();
	t_pause = kvmlu_mono_ns();
	rc = vm_pause(vm, VM_PAUSE_TIMEOUT_MS, &pause_ns, err, sizeof(err));
	if (rc) {
		json_line_error_set(e, rc == -ETIMEDOUT ? KVMLU_ERR_TIMEOUT : KVMLU_ERR_FAILED,
				    "pause: %s", err);
		luo_session_close(&s);
		goto err_release;
	}
	/*
	 * The pause completed every disk request, but a write the guest has
	 * not flushed yet may still be only in this kernel's page cache,
	 * which the kexec drops (nothing in between need sync()): the guest
	 * would go on with a completed write that is not on its disk. So
	 * make every disk durable here, while nothing can write to it.
	 */
	rc = vm_virtio_sync(&vm->virtio, err, sizeof(err));
	if (rc) {
		json_line_error_set(e, KVMLU_ERR_FAILED, "disk: %s", err);
		luo_session_close(&s);
		goto err_resume;
	}
	rc = prepare_state(vm, &md, &state_fd, sum, &bytes, capture_ns,
			   &prepared.paused_wall_ns, e);
	if (rc) {
		luo_session_close(&s);
		goto err_resume;
	}
	rc = prepare_session_state(&s, state_fd, &preserve_ns, e);
	/* The session holds its own reference to the state file. */
	close(state_fd);
	if (rc)
		goto err_resume;
	test_hook_stop_at(vm->name, "prepare-preserved");

	pthread_mutex_lock(&prepared_lock);
	prepared.active = true;
	prepared.session = s;
	prepared.state_bytes = bytes;
	prepared.nr_files = vm->mem.nr + 1;
	prepared.prepared_wall_ns = kvmlu_wall_ns();
	snprintf(prepared.checksum, sizeof(prepared.checksum), "%s", sum);
	pthread_mutex_unlock(&prepared_lock);

	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_STATE, json_object_new_string("prepared"));
	json_object_object_add(*ret, KVMLU_KEY_SESSION, json_object_new_string(s.name));
	json_object_object_add(*ret, KVMLU_KEY_CHECKSUM, json_object_new_string(sum));
	json_object_object_add(*ret, KVMLU_KEY_ALGORITHM, json_object_new_string("xxh3-128"));
	json_object_object_add(*ret, KVMLU_KEY_MEMORY, json_line_new_u64(vm->mem.total));
	json_object_object_add(*ret, KVMLU_KEY_BACKEND,
			       json_object_new_string(guestmem_backend_name(vm->mem.backend)));
	json_object_object_add(*ret, KVMLU_KEY_FILES, json_object_new_int64((int)prepared.nr_files));
	json_object_object_add(*ret, KVMLU_KEY_STATE_BYTES, json_line_new_u64(bytes));
	json_object_object_add(*ret, KVMLU_KEY_PAUSED_AT, json_line_new_u64(prepared.paused_wall_ns));
	json_object_object_add(*ret, KVMLU_KEY_PAUSE_NS, json_line_new_u64(pause_ns));
	json_object_object_add(*ret, KVMLU_KEY_CAPTURE_NS, json_line_new_u64(capture_ns[0]));
	json_object_object_add(*ret, KVMLU_KEY_CAPTURE_VM_NS, json_line_new_u64(capture_ns[1]));
	json_object_object_add(*ret, KVMLU_KEY_PRESERVE_NS, json_line_new_u64(preserve_ns));
	json_object_object_add(*ret, KVMLU_KEY_PRESERVE_RAM_NS, json_line_new_u64(preserve_ram_ns));
	memory_digest_report(&md, *ret);
	json_object_object_add(*ret, KVMLU_KEY_PREPARE_NS, json_line_new_u64(kvmlu_mono_ns() - t0));
	/* The part of prepare_ns with the vCPUs paused: its share of the blackout. */
	json_object_object_add(*ret, KVMLU_KEY_PREPARE_PAUSED_NS,
			       json_line_new_u64(kvmlu_mono_ns() - t_pause));
	memory_digest_take_log(&md, &prepared.log);
	memory_digest_release(&md);
	return 0;

err_resume:
	if (prepared.was_running && vm_resume(vm, &resume_ns, err, sizeof(err)))
		snprintf(e->desc + strlen(e->desc), sizeof(e->desc) - strlen(e->desc),
			 "; and resume failed: %s", err);
err_release:
	prepared.was_running = false;
	memory_digest_release(&md);
	return rc ? rc : -EIO;
}

static int live_update_cmd_abort(struct control_ctx *ctx, json_object *args, json_object **ret,
			  struct json_line_error *e)
{
	char err[512] = "", session[LUO_SESSION_NAME_SIZE];
	uint64_t ns = 0;
	int rc = 0;

	(void)args;
	if (!prepared.active)
		return json_line_error_set(e, KVMLU_ERR_NOT_PREPARED,
					   "abort-update: no prepare-update to abort");
	snprintf(session, sizeof(session), "%s", prepared.session.name);
	/*
	 * The kernel unpreserves every file of an outgoing session on close;
	 * the holes it allocated stay allocated (zero pages of the file).
	 */
	pthread_mutex_lock(&prepared_lock);
	luo_session_close(&prepared.session);
	prepared.active = false;
	pthread_mutex_unlock(&prepared_lock);
	guestmem_dirty_log_stop(&prepared.log);
	if (prepared.was_running)
		rc = vm_resume(ctx->vm, &ns, err, sizeof(err));
	if (rc)
		return json_line_error_set(e, KVMLU_ERR_FAILED,
					   "session '%s' closed, but resume failed: %s", session, err);
	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_STATE,
			       json_object_new_string(prepared.was_running ? "running" : "paused"));
	json_object_object_add(*ret, KVMLU_KEY_SESSION, json_object_new_string(session));
	json_object_object_add(*ret, KVMLU_KEY_RESUME_NS, json_line_new_u64(ns));
	json_object_object_add(*ret, KVMLU_KEY_PAUSED_NS,
			       json_line_new_u64(kvmlu_wall_ns() - prepared.paused_wall_ns));
	prepared.was_running = false;
	return 0;
}

static int live_update_cmd_status(struct control_ctx *ctx, json_object *args, json_object **ret,
			   struct json_line_error *e)
{
	json_object *o = json_object_new_object(), *r;

	(void)ctx;
	(void)args;
	(void)e;
	pthread_mutex_lock(&prepared_lock);
	if (prepared.active) {
		json_object_object_add(o, KVMLU_KEY_PHASE, json_object_new_string("prepared"));
		json_object_object_add(o, KVMLU_KEY_SESSION, json_object_new_string(prepared.session.name));
		json_object_object_add(o, KVMLU_KEY_CHECKSUM, json_object_new_string(prepared.checksum));
		json_object_object_add(o, KVMLU_KEY_STATE_BYTES, json_line_new_u64(prepared.state_bytes));
		json_object_object_add(o, KVMLU_KEY_PAUSED_AT,
				       json_line_new_u64(prepared.paused_wall_ns));
		json_object_object_add(o, KVMLU_KEY_PREPARED_AT,
				       json_line_new_u64(prepared.prepared_wall_ns));
		pthread_mutex_unlock(&prepared_lock);
	} else {
		pthread_mutex_unlock(&prepared_lock);
		/* A restore after a kexec in this process: what it published last. */
		if (live_update_restore_status(&r)) {
			json_object_put(o);
			o = r;
		} else {
			json_object_object_add(o, KVMLU_KEY_PHASE, json_object_new_string("none"));
		}
	}
	*ret = o;
	return 0;
}

static const char *const live_update_prepare_args[] = { MEMORY_DIGEST_RUNNING_MS_ARG, NULL };

static const struct control_command live_update_commands[] = {
	{ "prepare-update", live_update_cmd_prepare, live_update_prepare_args, CONTROL_CMD_LONG },
	{ "abort-update", live_update_cmd_abort, NULL, 0 },
	{ "update-status", live_update_cmd_status, NULL, CONTROL_CMD_ANYTIME },
};

int live_update_register_commands(void)
{
	return control_register(live_update_commands,
				sizeof(live_update_commands) / sizeof(live_update_commands[0]));
}
