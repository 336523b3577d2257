// SPDX-License-Identifier: GPL-2.0
/*
 * The control commands of the VM itself (see vm_commands.h): status,
 * pause, resume, checksum, guest-verify, save-state, shutdown. Each
 * handler runs on the control server's thread; none keeps anything
 * between requests. Unhappy paths answer with a class a client can act
 * on: NotPaused (checksum or save-state while running), NotRunning (pause
 * of a stopping VM, guest-verify while paused), Timeout (a vCPU that does
 * not park, a guest that does not answer), AlreadyPrepared (resume while
 * a host update holds the paused state), InvalidRequest (bad args).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/json_line.h"
#include "guestmem/folio.h"
#include "guestmem/guestmem_folio.h"
#include "guestmem/gmem_link.h"
#include "kvmlu/payload_abi.h"
#include "kvmlu/version.h"
#include "vmm/control/commands.h"
#include "vmm/devices/platform.h"
#include "vmm/live_update/live_update.h"
#include "vmm/memory_digest.h"
#include "vmm/state/save_state.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "vmm/virtio/virtio_pci_vm.h"
#include "vmm/vm_virtio.h"

/*
 * One device in status: where it sits and its driver's state, every
 * device alike, then its type's own keys (its status op).
 */
static json_object *status_device(const struct vm_virtio *vv, struct vm_device *dev)
{
	struct vm_virtio_slot at = vm_virtio_slot(dev->slot);
	json_object *j = json_object_new_object(), *own = json_object_new_object();
	struct vm_device_health h = { 0 };
	struct virtio_pci *p = vm_virtio_pci_fn(vv, dev->slot);

	dev->type->status(dev, &h, own);
	json_object_object_add(j, KVMLU_KEY_SLOT, json_object_new_int64((int)dev->slot));
	if (p) {
		/* virtio-pci: its BAR0 where the window would be, and no GSI (MSI-X). */
		json_object_object_add(j, KVMLU_KEY_MMIO_BASE, json_line_new_u64(p->bar_home));
		json_object_object_add(j, KVMLU_KEY_GSI, NULL);
		json_object_object_add(j, KVMLU_KEY_PCI_DEVICE,
				       json_object_new_int64((int)dev->slot + 1));
		pthread_mutex_lock(&p->lock);
		json_object_object_add(j, KVMLU_KEY_MSIX_SENT, json_line_new_u64(p->msis));
		json_object_object_add(j, KVMLU_KEY_MSIX_LOST, json_line_new_u64(p->msis_lost));
		pthread_mutex_unlock(&p->lock);
	} else {
		json_object_object_add(j, KVMLU_KEY_MMIO_BASE, json_line_new_u64(at.base));
		json_object_object_add(j, KVMLU_KEY_GSI, json_object_new_int64((int)at.gsi));
	}
	json_object_object_add(j, KVMLU_KEY_DRIVER_STATUS, json_object_new_int64((int)h.driver_status));
	json_object_object_add(j, KVMLU_KEY_DEVICE_ERROR,
			       h.device_error ? json_object_new_string(h.error) : NULL);
	json_object_object_foreach(own, key, val)
		json_object_object_add(j, key, json_object_get(val));
	json_object_put(own);
	return j;
}

/* Each device type's devices, as an array under the type's key; none: no key. */
static void status_devices(struct vm *vm, json_object *o)
{
	for (unsigned int k = 0; vm_device_types[k]; k++) {
		const struct vm_device_type *t = vm_device_types[k];
		unsigned int n = vm_virtio_count(&vm->virtio, t);
		json_object *arr;

		if (!n)
			continue;
		arr = json_object_new_array();
		for (unsigned int i = 0; i < n; i++)
			json_object_array_add(arr, status_device(&vm->virtio, vm_virtio_find(&vm->virtio, t, i)));
		json_object_object_add(o, t->status_key, arr);
	}
}

static int vm_cmd_status(struct control_ctx *ctx, json_object *args, json_object **ret,
			 struct json_line_error *e)
{
	struct vm *vm = ctx->vm;
	json_object *o = json_object_new_object(), *io = json_object_new_object();
	uint64_t tx, resident, huge;

	(void)args;
	(void)e;
	pthread_mutex_lock(&vm->platform->uart.lock);
	tx = vm->platform->uart.tx_bytes;
	pthread_mutex_unlock(&vm->platform->uart.lock);
	json_object_object_add(o, KVMLU_KEY_NAME, json_object_new_string(vm->name));
	json_object_object_add(o, KVMLU_KEY_STATE, json_object_new_string(vm_state_name(vm_get_state(vm))));
	json_object_object_add(o, KVMLU_KEY_VCPUS, json_object_new_int64((int)vm->nr_vcpus));
	json_object_object_add(o, KVMLU_KEY_MEMORY, json_line_new_u64(vm->ram_size));
	json_object_object_add(o, KVMLU_KEY_BACKEND,
			       json_object_new_string(guestmem_backend_name(vm->mem.backend)));
	json_object_object_add(o, KVMLU_KEY_UPTIME_NS, json_line_new_u64(vm_uptime_ns(vm)));
	/*
	 * Guest RAM in host memory now. Preserving the RAM for a kexec
	 * allocates the rest (holes included), so the agent's preflight counts
	 * memory - memory_resident against free memory. Absent where it cannot
	 * be measured (guest_memfd): the agent then counts all of memory.
	 */
	if (!guestmem_resident(&vm->mem, &resident))
		json_object_object_add(o, KVMLU_KEY_RESIDENT, json_line_new_u64(resident));
	/*
	 * The folio size of memfd RAM (guestmem/folio.h): what new faults get
	 * ("2M" with MADV_HUGEPAGE where shmem_enabled allows it, else "4K"),
	 * the host setting behind it, and, for "2M", the bytes mapped huge
	 * now, measured. Not for "4K": reading smaps walks every page table
	 * entry of the RAM, some 20 ms per GiB of 4 KiB pages, on each status.
	 */
	if (vm->mem.backend == GUESTMEM_MEMFD) {
		json_object_object_add(o, KVMLU_KEY_FOLIO,
				       json_object_new_string(guestmem_folio_name(&vm->mem)));
		json_object_object_add(o, KVMLU_KEY_SHMEM_ENABLED, json_object_new_string(
			guestmem_shmem_thp_name(vm->mem.shmem_thp)));
		if (vm->mem.huge_advised && !guestmem_folio_huge_bytes(&vm->mem, &huge))
			json_object_object_add(o, KVMLU_KEY_MEMORY_HUGE, json_line_new_u64(huge));
	}
	/*
	 * Whether prepare-update can hand this VM's RAM to the next kernel:
	 * memfd always; guest_memfd only on a kernel with the project's patch
	 * series, which brings KVM_LINK_GUEST_MEMFD with the LUO handler (a
	 * new VM could not take the retrieved files without it). The agent's
	 * preflight refuses before pausing anything when this is false.
	 */
	json_object_object_add(o, KVMLU_KEY_PRESERVABLE, json_object_new_boolean(
		vm->mem.backend == GUESTMEM_MEMFD ||
		guestmem_gmem_can_link(vm->vm_fd, NULL, 0) == 1));
	json_object_object_add(o, KVMLU_KEY_VIRTIO_TRANSPORT, json_object_new_string(
		vm->virtio.transport == VM_VIRTIO_TRANSPORT_PCI ? "pci" : "mmio"));
	json_object_object_add(o, KVMLU_KEY_VERSION, json_object_new_string(KVMLU_VERSION));
	json_object_object_add(o, KVMLU_KEY_PROTOCOL, json_object_new_int(KVMLU_WIRE_PROTOCOL));
	json_object_object_add(o, KVMLU_KEY_PID, json_object_new_int64((int)getpid()));
	json_object_object_add(o, KVMLU_KEY_SERIAL_BYTES, json_line_new_u64(tx));
	json_object_object_add(io, KVMLU_KEY_PIO_READS,
			       json_line_new_u64(io_bus_unhandled(&vm->bus, IO_SPACE_PIO, false)));
	json_object_object_add(io, KVMLU_KEY_PIO_WRITES,
			       json_line_new_u64(io_bus_unhandled(&vm->bus, IO_SPACE_PIO, true)));
	json_object_object_add(io, KVMLU_KEY_MMIO_READS,
			       json_line_new_u64(io_bus_unhandled(&vm->bus, IO_SPACE_MMIO, false)));
	json_object_object_add(io, KVMLU_KEY_MMIO_WRITES,
			       json_line_new_u64(io_bus_unhandled(&vm->bus, IO_SPACE_MMIO, true)));
	json_object_object_add(o, KVMLU_KEY_UNHANDLED_IO, io);
	status_devices(vm, o);
	*ret = o;
	return 0;
}

static int vm_run_error(int rc, const char *what, const char *msg, struct json_line_error *e)
{
	if (rc == -ETIMEDOUT)
		return json_line_error_set(e, KVMLU_ERR_TIMEOUT, "%s", msg);
	if (rc == -ESRCH)
		return json_line_error_set(e, KVMLU_ERR_NOT_RUNNING, "%s", msg);
	return json_line_error_set(e, KVMLU_ERR_FAILED, "%s: %s", what, msg);
}

/*
 * pause and resume alike: the same errors, and a reply with the state now,
 * whether it changed and how long that took.
 */
static int vm_pause_or_resume(struct vm *vm, bool pause, json_object **ret,
			      struct json_line_error *e)
{
	char msg[256] = "";
	uint64_t ns;
	int rc;

	if (pause)
		rc = vm_pause(vm, VM_PAUSE_TIMEOUT_MS, &ns, msg, sizeof(msg));
	else
		rc = vm_resume(vm, &ns, msg, sizeof(msg));
	if (rc)
		return vm_run_error(rc, pause ? "pause" : "resume", msg, e);
	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_STATE,
			       json_object_new_string(pause ? "paused" : "running"));
	json_object_object_add(*ret, KVMLU_KEY_CHANGED, json_object_new_boolean(ns != 0));
	json_object_object_add(*ret, KVMLU_KEY_LATENCY_NS, json_line_new_u64(ns));
	return 0;
}

static int vm_cmd_pause(struct control_ctx *ctx, json_object *args, json_object **ret,
			struct json_line_error *e)
{
	(void)args;
	return vm_pause_or_resume(ctx->vm, true, ret, e);
}

static int vm_cmd_resume(struct control_ctx *ctx, json_object *args, json_object **ret,
			 struct json_line_error *e)
{
	(void)args;
	/* A prepared host update holds a state that a running guest would make stale. */
	if (live_update_prepared())
		return json_line_error_set(e, KVMLU_ERR_PREPARED,
					   "resume refused: prepared for a host update (send abort-update)");
	return vm_pause_or_resume(ctx->vm, false, ret, e);
}

/*
 * checksum {"incremental":true} on a running VM: the way prepare-update
 * takes it (vmm/memory_digest.h: hashed while running, the rest in the
 * pause), then the full checksum of the same paused memory, both
 * returned with their times. The VM stays paused. For tests and the bench.
 */
static int vm_cmd_checksum_incremental(struct control_ctx *ctx, json_object *args,
				       json_object **ret, struct json_line_error *e)
{
	struct memory_digest md = { .log = { .vm_fd = -1 } };
	struct guestmem_checksum inc = { 0 }, full = { 0 };
	char msg[512], hex[33], full_hex[33];
	uint64_t pause_ns = 0;
	unsigned int running_ms;
	int rc;

	if (memory_digest_running_ms_arg(args, "checksum", &running_ms, e))
		return -EINVAL;
	if (vm_get_state(ctx->vm) != VM_STATE_RUNNING)
		return json_line_error_set(e, KVMLU_ERR_NOT_RUNNING,
					   "checksum incremental needs a running VM; it is %s",
					   vm_state_name(vm_get_state(ctx->vm)));
	rc = memory_digest_start(ctx->vm, &md, running_ms, msg, sizeof(msg));
	if (rc) {
		memory_digest_release(&md);
		return json_line_error_set(e, KVMLU_ERR_FAILED, "%s", msg);
	}
	memory_digest_converge(ctx->vm, &md);
	rc = vm_pause(ctx->vm, VM_PAUSE_TIMEOUT_MS, &pause_ns, msg, sizeof(msg));
	if (rc) {
		memory_digest_release(&md);
		return vm_run_error(rc, "pause", msg, e);
	}
	rc = memory_digest_finish(ctx->vm, &md, &inc, msg, sizeof(msg));
	if (!rc)
		rc = guestmem_checksum(&ctx->vm->mem, 0, &full);
	if (rc) {
		memory_digest_release(&md);
		return json_line_error_set(e, KVMLU_ERR_FAILED, "checksum: %s",
					   msg[0] ? msg : strerror(-rc));
	}
	guestmem_checksum_format(&inc, hex);
	guestmem_checksum_format(&full, full_hex);
	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_STATE, json_object_new_string("paused"));
	json_object_object_add(*ret, KVMLU_KEY_DIGEST, json_object_new_string(hex));
	json_object_object_add(*ret, KVMLU_KEY_FULL_DIGEST, json_object_new_string(full_hex));
	json_object_object_add(*ret, KVMLU_KEY_EQUAL, json_object_new_boolean(inc.hi == full.hi &&
								      inc.lo == full.lo));
	json_object_object_add(*ret, KVMLU_KEY_FULL_CHECKSUM_NS, json_line_new_u64(full.nsec));
	json_object_object_add(*ret, KVMLU_KEY_BYTES, json_line_new_u64(full.bytes));
	memory_digest_report(&md, *ret);
	memory_digest_release(&md);
	return 0;
}

static int vm_cmd_checksum(struct control_ctx *ctx, json_object *args, json_object **ret,
			   struct json_line_error *e)
{
	struct guestmem_checksum c;
	enum vm_state s = vm_get_state(ctx->vm);
	json_object *jinc = NULL;
	char hex[33];
	int rc;

	if (args && json_object_object_get_ex(args, KVMLU_ARG_INCREMENTAL, &jinc)) {
		if (!json_object_is_type(jinc, json_type_boolean))
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "checksum: args.incremental must be true or false");
		if (json_object_get_boolean(jinc))
			return vm_cmd_checksum_incremental(ctx, args, ret, e);
	}
	/* A running vCPU changes memory under the hash: the digest would mean nothing. */
	if (s != VM_STATE_PAUSED)
		return json_line_error_set(e, KVMLU_ERR_NOT_PAUSED,
					   "checksum needs a paused VM; it is %s (send pause first)",
					   vm_state_name(s));
	rc = guestmem_checksum(&ctx->vm->mem, 0, &c);
	if (rc)
		return json_line_error_set(e, KVMLU_ERR_FAILED, "guestmem_checksum: %s",
					   strerror(-rc));
	guestmem_checksum_format(&c, hex);
	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_DIGEST, json_object_new_string(hex));
	json_object_object_add(*ret, KVMLU_KEY_ALGORITHM, json_object_new_string("xxh3-128"));
	json_object_object_add(*ret, KVMLU_KEY_BYTES, json_line_new_u64(c.bytes));
	json_object_object_add(*ret, KVMLU_KEY_CHECKSUM_NS, json_line_new_u64(c.nsec));
	/* A rate, not a duration, in the same rounded form. */
	json_object_object_add(*ret, KVMLU_KEY_GBPS,
			       json_line_new_ms(c.nsec ? (double)c.bytes / (double)c.nsec : 0));
	json_object_object_add(*ret, KVMLU_KEY_THREADS, json_object_new_int64((int)c.threads));
	return 0;
}

static int vm_cmd_shutdown(struct control_ctx *ctx, json_object *args, json_object **ret,
			   struct json_line_error *e)
{
	(void)args;
	(void)e;
	vm_request_stop(ctx->vm, VM_STOP_REQUESTED, "shutdown requested on the control socket");
	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_STATE, json_object_new_string("stopping"));
	return 0;
}

static int vm_cmd_guest_verify(struct control_ctx *ctx, json_object *args, json_object **ret,
			       struct json_line_error *e)
{
	unsigned int timeout = ctx->verify_timeout_ms ? ctx->verify_timeout_ms : 10000;
	enum vm_state s;
	uint64_t t0, t1;
	uint32_t result = 0;
	json_object *v;
	int64_t t;
	int rc;

	/* A big guest verifies for longer than the default 10 s. */
	if (args && json_object_object_get_ex(args, KVMLU_ARG_TIMEOUT_MS, &v)) {
		t = json_object_get_int64(v);
		if (!json_object_is_type(v, json_type_int) || t < 1 || t > 600000)
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "guest-verify: timeout_ms must be an integer 1..600000");
		timeout = (unsigned int)t;
	}
	s = vm_get_state(ctx->vm);
	/* A paused guest cannot poll its port: it would only time out. */
	if (s != VM_STATE_RUNNING)
		return json_line_error_set(e, KVMLU_ERR_NOT_RUNNING,
					   "guest-verify needs a running guest; it is %s", vm_state_name(s));
	t0 = kvmlu_mono_ns();
	rc = test_port_request(&ctx->vm->platform->test_port, KVMLU_REQ_VERIFY, timeout, &result);
	t1 = kvmlu_mono_ns();
	if (rc == -ETIMEDOUT)
		return json_line_error_set(e, KVMLU_ERR_TIMEOUT,
					   "guest did not answer the verify request on port %#x within %u ms",
					   KVMLU_PORT_RESULT, timeout);
	if (rc == -ECANCELED)
		return json_line_error_set(e, KVMLU_ERR_NOT_RUNNING,
					   "VM stopping (%s) before the guest answered",
					   vm_stop_reason_name(ctx->vm->stop_reason));
	if (rc)
		return json_line_error_set(e, KVMLU_ERR_FAILED, "verify request: %s", strerror(-rc));
	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_VERIFIED_GUEST,
			       json_object_new_boolean(result == KVMLU_RESULT_VERIFY_OK));
	json_object_object_add(*ret, KVMLU_KEY_RESULT,
			       json_object_new_string(result == KVMLU_RESULT_VERIFY_OK ? "ok" :
						      result == KVMLU_RESULT_VERIFY_FAILED ? "failed" :
						      "unknown"));
	json_object_object_add(*ret, KVMLU_KEY_RESULT_CODE, json_object_new_int64((int)result));
	json_object_object_add(*ret, KVMLU_KEY_VERIFY_NS, json_line_new_u64(t1 - t0));
	return 0;
}

static int vm_cmd_save_state(struct control_ctx *ctx, json_object *args, json_object **ret,
			     struct json_line_error *e)
{
	json_object *jpath = NULL, *v = NULL;
	enum vm_state st = vm_get_state(ctx->vm);
	struct save_state_result r;
	const char *path;
	bool with_sum = false, overwrite = false;
	struct save_state_target t;
	char err[512], full[PATH_MAX + NAME_MAX + 2];
	int rc;

	if (!args || !json_object_object_get_ex(args, KVMLU_ARG_PATH, &jpath) ||
	    !json_object_is_type(jpath, json_type_string))
		return json_line_error_set(e, KVMLU_ERR_INVALID,
					   "save-state: args.path (a string) is required");
	path = json_object_get_string(jpath);
	if (json_object_object_get_ex(args, KVMLU_ARG_CHECKSUM, &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "save-state: args.checksum must be true or false");
		with_sum = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(args, KVMLU_ARG_OVERWRITE, &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "save-state: args.overwrite must be true or false");
		overwrite = json_object_get_boolean(v);
	}
	/* Only in the control socket's directory (vmm/state/save_state.h). */
	rc = save_state_target_open(ctx->control_path, path, &t, err, sizeof(err));
	if (rc)
		return json_line_error_set(e, rc == -EINVAL || rc == -EPERM ? KVMLU_ERR_INVALID :
					   KVMLU_ERR_FAILED, "save-state: %s", err);
	if (st != VM_STATE_PAUSED) {
		save_state_target_close(&t);
		return json_line_error_set(e, KVMLU_ERR_NOT_PAUSED,
					   "save-state needs a paused VM; it is %s (send pause first)",
					   vm_state_name(st));
	}
	rc = save_state(ctx->vm, &t, overwrite, with_sum, &r, err, sizeof(err));
	save_state_target_close(&t);
	if (rc)
		return json_line_error_set(e, rc == -EEXIST || rc == -EPERM ? KVMLU_ERR_INVALID :
					   KVMLU_ERR_FAILED, "save-state: in %s: %s", t.dir, err);
	snprintf(full, sizeof(full), "%s/%s", strcmp(t.dir, "/") ? t.dir : "", t.name);
	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_PATH, json_object_new_string(full));
	json_object_object_add(*ret, KVMLU_KEY_BYTES, json_line_new_u64(r.bytes));
	json_object_object_add(*ret, KVMLU_KEY_VCPUS, json_object_new_int64(r.nr_vcpus));
	json_object_object_add(*ret, KVMLU_KEY_UUID, json_object_new_string(r.uuid));
	return 0;
}

static const char *const vm_guest_verify_args[] = { KVMLU_ARG_TIMEOUT_MS, NULL };
static const char *const vm_checksum_args[] = { KVMLU_ARG_INCREMENTAL, MEMORY_DIGEST_RUNNING_MS_ARG,
						  NULL };
static const char *const vm_save_state_args[] = { KVMLU_ARG_PATH, KVMLU_ARG_CHECKSUM,
						     KVMLU_ARG_OVERWRITE, NULL };

static const struct control_command vm_commands[] = {
	{ "status", vm_cmd_status, NULL, CONTROL_CMD_ANYTIME },
	/* Not during an upgrade: it keeps the run state it found (vmm/upgrade/upgrade.c). */
	{ "pause", vm_cmd_pause, NULL, CONTROL_CMD_ANYTIME | CONTROL_CMD_RUN_STATE },
	/* Long: a held restored VM retries its whole restore on resume. */
	{ "resume", vm_cmd_resume, NULL, CONTROL_CMD_LONG },
	{ "checksum", vm_cmd_checksum, vm_checksum_args, CONTROL_CMD_LONG },
	{ "guest-verify", vm_cmd_guest_verify, vm_guest_verify_args, CONTROL_CMD_LONG },
	{ "save-state", vm_cmd_save_state, vm_save_state_args, CONTROL_CMD_LONG },
	{ "shutdown", vm_cmd_shutdown, NULL, 0 },
};

int vm_commands_register(void)
{
	return control_register(vm_commands, sizeof(vm_commands) / sizeof(vm_commands[0]));
}
