// SPDX-License-Identifier: GPL-2.0
/*
 * The `upgrade` control command: hand the running VM to a new kvmlu-vmm
 * process (the same binary, or args.binary) without the guest noticing.
 *
 *   -> {"cmd":"upgrade","args":{"binary":"/usr/bin/kvmlu-vmm","checksum":true}}
 *   <- {"ok":true,"return":{"pid":1234,"blackout_ns":4100123,"memory_copied_bytes":0,...}}
 * args: binary (default: this one), checksum (take one at pause and have
 * the new process compare; costs time with RAM, so off by default),
 * timeout_ms (default 10000).
 *
 * Happy path, in steps so that the slow part happens while the guest
 * still runs: (1) fork+exec `kvmlu-vmm incoming --fd 3` on one end of a
 * socketpair and send it the RAM files, the UART output and the listening
 * control socket (upgrade_wire.h); it starts up and builds its VM
 * (KVM_CREATE_VM, vCPUs, memslots on the same RAM files) and says
 * "ready". (2) Only then pause (if the VM runs; a paused VM stays so and
 * the state says so), capture the state into a sealed memfd and send it;
 * the new process validates and restores it, starts nothing, and says
 * "restored". (3) The commit point, the only one: if the deadline has not
 * passed, send "commit". Before it only this process may run the guest,
 * after it only the new one. The new process starts its vCPUs (or keeps
 * them parked) and says "resumed". The blackout is steps 2 and 3. We
 * answer the request, stop serving the socket (the new process does now:
 * same path, same listening socket, so no connection is refused in
 * between) and exit.
 *
 * Unhappy paths before commit (exec fails, it refuses the state, it dies
 * or is killed, it is silent past the timeout, the commit cannot be
 * sent): it is killed with SIGKILL and reaped FIRST; it never ran the
 * guest anyway. Then the VM is resumed here if we paused it, and the
 * request is answered with the reason: nothing lost, nothing left paused
 * that was running. After commit this process never resumes the guest,
 * whatever happens: it waits (up to timeout_ms again) for "resumed" and
 * answers ok; if the new process says "error" or dies instead, the
 * answer says the VM is lost (Failed); if it is silent that long, the
 * answer is Timeout saying the VM is the new process's. Either way this
 * process then exits. While the upgrade runs, pause and resume from
 * other clients are refused (Busy): the run state is the upgrade's to
 * carry over.
 *
 * Memory: memfd RAM is shared, nothing is copied. A guest_memfd belongs
 * to the VM that made it (a stock kernel refuses to bind it to another);
 * with the kvmlu kernel patch the new process links it into its VM
 * (KVM_LINK_GUEST_MEMFD), else it makes fresh ones and copies. The reply
 * says which ("memory": shared, linked, copied) and how much was copied.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "vmm/control/commands.h"
#include "vmm/control/server.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_memfd.h"
#include "vmm/state/vm_capture.h"
#include "vmm/upgrade/upgrade.h"
#include "vmm/upgrade/upgrade_binary.h"
#include "vmm/upgrade/upgrade_devices.h"
#include "vmm/upgrade/upgrade_wire.h"
#include "vmm/devices/platform.h"
#include "vmm/vm.h"

#define UPGRADE_DEFAULT_TIMEOUT_MS	10000
#define UPGRADE_CHILD_FD		3	/* the socket's number in the new process */

/* Whether a host update holds the VM's state (upgrade_register_commands()). */
static bool (*upgrade_host_update_prepared)(void);

struct upgrade_args {
	const char *binary;
	bool checksum;
	unsigned int timeout_ms;
};

struct upgrade_result {
	pid_t pid;
	uint64_t copied;
	char memory[16];	/* "shared", "linked" or "copied", as the new process says */
	uint64_t pause_ns;
	/* The new process's own figures, ms to the us on the upgrade wire. */
	double prepare_ms;	/* new process: start-up and VM creation, guest running */
	double restore_ms;	/* new process: state to resumed, guest paused */
	double create_ms;	/* new process: the VM built (resume_build()) */
	size_t state_bytes;
	char checksum[33];
	json_object *steps;	/* new process: the resume pipeline's steps, ns; owned */
};

/* A figure of the upgrade wire (ms, rounded to the us) as the reply's ns. */
static uint64_t ms_to_ns(double ms)
{
	return ms > 0 && ms < 1e12 ? (uint64_t)llround(ms * 1e6) : 0;
}

static int parse_args(json_object *args, struct upgrade_args *a, struct json_line_error *e)
{
	json_object *v;

	*a = (struct upgrade_args){ .binary = "/proc/self/exe",
				    .timeout_ms = UPGRADE_DEFAULT_TIMEOUT_MS };
	if (!args)
		return 0;
	if (json_object_object_get_ex(args, KVMLU_ARG_BINARY, &v)) {
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string(v)[0] != '/')
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "upgrade: args.binary must be an absolute path");
		a->binary = json_object_get_string(v);
	}
	if (json_object_object_get_ex(args, KVMLU_ARG_CHECKSUM, &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "upgrade: args.checksum must be true or false");
		a->checksum = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(args, KVMLU_ARG_TIMEOUT_MS, &v)) {
		int64_t t = json_object_get_int64(v);

		if (!json_object_is_type(v, json_type_int) || t < 100 || t > 600000)
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "upgrade: args.timeout_ms must be 100..600000");
		a->timeout_ms = (unsigned int)t;
	}
	return upgrade_binary_check(a->binary, e);
}

/* Child side of fork(): only async-signal-safe calls until exec. */
static void exec_incoming(int sock, const char *binary)
{
	static const char msg[] = "kvmlu-vmm: upgrade: exec of the new kvmlu-vmm failed\n";
	char *argv[] = { "kvmlu-vmm", "incoming", "--fd", "3", NULL };

	if (sock != UPGRADE_CHILD_FD) {
		if (dup2(sock, UPGRADE_CHILD_FD) < 0)
			_exit(127);
	} else if (fcntl(sock, F_SETFD, 0) < 0) {
		_exit(127);
	}
	/*
	 * Nothing else of ours goes along: every file the new process needs
	 * comes over the socket, and an inherited guest_memfd or VM fd would
	 * keep the old VM alive as long as the new process runs.
	 */
	syscall(SYS_close_range, UPGRADE_CHILD_FD + 1, ~0U, 0);
	upgrade_binary_exec(binary, argv);
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more we can say */
	}
	_exit(127);
}

static int send_prepare(int sock, struct vm *vm, struct control_ctx *ctx,
			char *err, size_t errlen)
{
	int fds[UPGRADE_WIRE_MAX_FDS];
	unsigned int n = 0;
	int ret;
	json_object *o = json_object_new_object(), *regions = json_object_new_array();

	json_object_object_add(o, "msg", json_object_new_string("prepare"));
	json_object_object_add(o, "name", json_object_new_string(vm->name));
	json_object_object_add(o, "ram_size", json_line_new_u64(vm->ram_size));
	json_object_object_add(o, "nr_vcpus", json_object_new_int64((int)vm->nr_vcpus));
	json_object_object_add(o, "backend",
			       json_object_new_string(guestmem_backend_name(vm->mem.backend)));
	json_object_object_add(o, "serial_fd", json_object_new_int64((int)n));
	fds[n++] = vm->platform->uart.out_fd;
	if (ctx->listen_fd >= 0 && ctx->control_path) {
		json_object_object_add(o, "listen_fd", json_object_new_int64((int)n));
		fds[n++] = ctx->listen_fd;
		json_object_object_add(o, "control_path", json_object_new_string(ctx->control_path));
	}
	for (unsigned int i = 0; i < vm->mem.nr; i++) {
		json_object_array_add(regions, json_object_new_int64((int)n));
		fds[n++] = vm->mem.r[i].fd;
	}
	json_object_object_add(o, "region_fds", regions);
	/* Only for pci: the new process builds its devices the same way (the state checks it). */
	if (vm->virtio.transport == VM_VIRTIO_TRANSPORT_PCI)
		json_object_object_add(o, "virtio_transport", json_object_new_string("pci"));
	ret = upgrade_devices_write(&vm->virtio, o, fds, &n, UPGRADE_WIRE_MAX_FDS);
	if (ret) {
		json_object_put(o);
		return kvmlu_err(err, errlen, ret, "prepare: the devices' fds do not fit the message");
	}
	json_object_object_add(o, "verify_timeout_ms",
			       json_object_new_int64((int)ctx->verify_timeout_ms));
	/* The new process serves the socket with the idle time this one was given. */
	json_object_object_add(o, "control_idle_ms",
			       json_object_new_int64((int64_t)control_server_idle_ms()));
	return upgrade_wire_send(sock, o, fds, n, err, errlen);
}

/*
 * The new process's step times, integer ns: only the keys it may send,
 * each a non-negative integer, into a fresh object for the reply.
 */
static void steps_take(json_object *in, struct upgrade_result *r)
{
	static const char *const keys[] = { KVMLU_KEY_STEP_BUILD_NS, KVMLU_KEY_STEP_VERIFY_NS,
					     KVMLU_KEY_STEP_APPLY_NS, KVMLU_KEY_STEP_START_NS };
	json_object *v;

	if (!json_object_is_type(in, json_type_object) || r->steps)
		return;
	r->steps = json_object_new_object();
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_object_object_get_ex(in, keys[i], &v) &&
		    json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
			json_object_object_add(r->steps, keys[i],
					       json_line_new_u64((uint64_t)json_object_get_int64(v)));
}

/* Wait for message `want` until the deadline; anything else is an error in err. */
static int wait_for(int sock, const char *want, pid_t pid, uint64_t deadline,
		    struct upgrade_result *r, char *err, size_t errlen)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	int fds[UPGRADE_WIRE_MAX_FDS];
	unsigned int nfds = 0;
	json_object *o, *v;
	const char *msg;
	int ret;

	for (;;) {
		uint64_t now = kvmlu_mono_ns();
		int ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000) + 1;

		ret = poll(&p, 1, ms);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return kvmlu_err(err, errlen, -errno, "poll: %s", strerror(errno));
		if (ret == 0)
			return kvmlu_err(err, errlen, -ETIMEDOUT,
					 "new kvmlu-vmm (pid %d) did not say %s in time", pid, want);
		break;
	}
	ret = upgrade_wire_recv(sock, &o, fds, UPGRADE_WIRE_MAX_FDS, &nfds, err, errlen);
	if (ret == -ECONNRESET)
		return kvmlu_err(err, errlen, ret,
				 "new kvmlu-vmm (pid %d) exited before resuming the VM", pid);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	json_object_object_get_ex(o, "msg", &v);
	msg = json_object_get_string(v);
	if (!strcmp(msg, want)) {
		if (json_object_object_get_ex(o, "memory_copied_bytes", &v))
			r->copied = (uint64_t)json_object_get_int64(v);
		if (json_object_object_get_ex(o, "memory", &v) &&
		    json_object_is_type(v, json_type_string))
			snprintf(r->memory, sizeof(r->memory), "%s", json_object_get_string(v));
		if (json_object_object_get_ex(o, "restore_ms", &v))
			r->restore_ms = json_object_get_double(v);
		if (json_object_object_get_ex(o, "prepare_ms", &v))
			r->prepare_ms = json_object_get_double(v);
		if (json_object_object_get_ex(o, "create_ms", &v))
			r->create_ms = json_object_get_double(v);
		if (json_object_object_get_ex(o, KVMLU_KEY_STEPS, &v))
			steps_take(v, r);
		ret = 0;
	} else if (!strcmp(msg, "error") && json_object_object_get_ex(o, "desc", &v)) {
		ret = kvmlu_err(err, errlen, -ECANCELED, "new kvmlu-vmm (pid %d): %s", pid,
				json_object_get_string(v));
	} else {
		ret = kvmlu_err(err, errlen, -EPROTO, "new kvmlu-vmm (pid %d) sent \"%.40s\"",
				pid, msg);
	}
	json_object_put(o);
	return ret;
}

/*
 * Capture the paused VM and send its state; the VM stays paused. run:
 * whether the new process is to run the guest after commit (it ran here).
 */
static int send_state(int sock, struct vm *vm, const struct upgrade_args *a, bool run,
		      struct upgrade_result *r, char *err, size_t errlen)
{
	struct state_vm s;
	json_object *o;
	int state_fd = -1, ret;
	void *blob;
	size_t size;

	ret = state_vm_capture(vm, a->checksum, &s, err, errlen);
	if (ret)
		return ret;
	if (s.has_checksum)
		snprintf(r->checksum, sizeof(r->checksum), "%016llx%016llx",
			 (unsigned long long)s.checksum_hi, (unsigned long long)s.checksum_lo);
	ret = state_fdt_write(&s, &blob, &size, err, errlen);
	state_vm_free(&s);
	if (ret)
		return ret;
	r->state_bytes = size;
	ret = state_memfd_create(vm->name, blob, size, &state_fd, err, errlen);
	free(blob);
	if (ret)
		return ret;
	o = json_object_new_object();
	json_object_object_add(o, "msg", json_object_new_string("state"));
	json_object_object_add(o, "state_fd", json_object_new_int64(0));
	json_object_object_add(o, "run", json_object_new_boolean(run));
	ret = upgrade_wire_send(sock, o, &state_fd, 1, err, errlen);
	close(state_fd);
	return ret;
}

/* A send that failed because the peer is gone: say so in those words. */
static int peer_gone(int ret, pid_t pid, char *err, size_t errlen)
{
	if (ret == -EPIPE || ret == -ECONNRESET)
		return kvmlu_err(err, errlen, ret,
				 "new kvmlu-vmm (pid %d) exited before resuming the VM", pid);
	return ret;
}

static int send_commit(int sock, pid_t pid, char *err, size_t errlen)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "msg", json_object_new_string("commit"));
	return peer_gone(upgrade_wire_send(sock, o, NULL, 0, err, errlen), pid, err, errlen);
}

static void kill_and_reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/*
 * Start the new process, let it build its VM, then pause (*paused says
 * whether we did) and hand the state over, and commit if in time
 * (*committed). Before the commit, a failure returns with the child dead
 * and reaped (it never ran the guest) and the VM maybe paused here. After
 * it: 0 once the new process runs the VM; -ETIMEDOUT if it has not said
 * so in time (it is left alone: the VM is its now); else the VM is lost
 * (the child is dead and reaped).
 */
static int hand_over(struct control_ctx *ctx, const struct upgrade_args *a, bool *paused,
		     bool *committed, uint64_t *t_pause, struct upgrade_result *r,
		     char *err, size_t errlen)
{
	struct vm *vm = ctx->vm;
	uint64_t timeout_ns = (uint64_t)a->timeout_ms * 1000000ull;
	uint64_t deadline = kvmlu_mono_ns() + timeout_ns, ns = 0;
	bool run = false;
	int sv[2], ret;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return kvmlu_err(err, errlen, -errno, "socketpair: %s", strerror(errno));
	r->pid = fork();
	if (r->pid < 0) {
		ret = kvmlu_err(err, errlen, -errno, "fork: %s", strerror(errno));
		goto err_sock;
	}
	if (r->pid == 0)
		exec_incoming(sv[1], a->binary);
	close(sv[1]);
	sv[1] = -1;
	ret = peer_gone(send_prepare(sv[0], vm, ctx, err, errlen), r->pid, err, errlen);
	if (!ret)
		ret = wait_for(sv[0], "ready", r->pid, deadline, r, err, errlen);
	/* The blackout starts here: everything slow is done. */
	*t_pause = kvmlu_mono_ns();
	/* Pause and resume from clients are Busy now: this state stays until we say. */
	if (!ret && vm_get_state(vm) == VM_STATE_RUNNING) {
		run = true;
		ret = vm_pause(vm, VM_PAUSE_TIMEOUT_MS, &ns, err, errlen);
		*paused = ret == 0;
		r->pause_ns = ns;
	}
	if (!ret)
		ret = peer_gone(send_state(sv[0], vm, a, run, r, err, errlen), r->pid, err, errlen);
	if (!ret)
		ret = wait_for(sv[0], "restored", r->pid, deadline, r, err, errlen);
	if (!ret && kvmlu_mono_ns() >= deadline)
		ret = kvmlu_err(err, errlen, -ETIMEDOUT,
				"new kvmlu-vmm (pid %d) did not say restored in time", r->pid);
	/*
	 * The commit point. A commit that cannot be sent never reached the
	 * new process (its end of the socket is closed): it did not run the
	 * guest and will not.
	 */
	if (!ret)
		ret = send_commit(sv[0], r->pid, err, errlen);
	if (ret) {
		/* Dead before we touch the VM again; it never ran the guest. */
		kill_and_reap(r->pid);
		goto err_sock;
	}
	*committed = true;
	/* From here on the guest never runs in this process again. */
	ret = wait_for(sv[0], "resumed", r->pid, kvmlu_mono_ns() + timeout_ns, r, err, errlen);
	if (ret && ret != -ETIMEDOUT)
		kill_and_reap(r->pid);
err_sock:
	close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	return ret;
}

/* The reply once committed: ok, or why the new process cannot say it runs the VM. */
static int committed_reply(struct vm *vm, int rc, const char *err, const struct upgrade_result *r,
			   struct json_line_error *e)
{
	if (rc == -ETIMEDOUT) {
		vm_request_stop(vm, VM_STOP_REQUESTED, "upgraded: VM committed to pid %d", r->pid);
		return json_line_error_set(e, KVMLU_ERR_TIMEOUT,
					   "upgrade committed: %s; the VM is pid %d's now, not resumed here",
					   err, r->pid);
	}
	vm_request_stop(vm, VM_STOP_VMM_ERROR, "VM lost in upgrade: %s", err);
	return json_line_error_set(e, KVMLU_ERR_FAILED,
				   "upgrade committed, then %s; VM lost: not resumed here (its state was handed over)",
				   err);
}

static int upgrade_cmd(struct control_ctx *ctx, json_object *args, json_object **ret,
		       struct json_line_error *e)
{
	struct upgrade_result r = { .pid = -1 };
	struct upgrade_args a;
	struct vm *vm = ctx->vm;
	enum vm_state st = vm_get_state(vm);
	uint64_t t0 = 0, t1, ns;
	char err[512] = "", rerr[256] = "";
	bool paused = false, committed = false;
	int rc;

	if (parse_args(args, &a, e))
		return -EINVAL;
	if (st != VM_STATE_RUNNING && st != VM_STATE_PAUSED)
		return json_line_error_set(e, KVMLU_ERR_NOT_RUNNING, "upgrade: VM is %s",
					   vm_state_name(st));
	/* The LUO session of a prepared host update cannot follow to a new process. */
	if (upgrade_host_update_prepared && upgrade_host_update_prepared())
		return json_line_error_set(e, KVMLU_ERR_PREPARED,
					   "upgrade refused: prepared for a host update (send abort-update)");
	rc = hand_over(ctx, &a, &paused, &committed, &t0, &r, err, sizeof(err));
	t1 = kvmlu_mono_ns();
	if (rc)
		json_object_put(r.steps);
	if (rc && !committed) {
		if (paused && vm_resume(vm, &ns, rerr, sizeof(rerr)))
			return json_line_error_set(e, KVMLU_ERR_FAILED,
						   "upgrade failed (%s) and resume failed too: %s",
						   err, rerr);
		return json_line_error_set(e, rc == -ETIMEDOUT ? KVMLU_ERR_TIMEOUT : KVMLU_ERR_FAILED,
					   "upgrade: %s; VM %s here", err,
					   vm_get_state(vm) == VM_STATE_RUNNING ? "running" : "still paused");
	}
	/* Committed: the new process has the VM (or nobody has); this one only winds down. */
	ctx->handed_off = true;
	if (rc)
		return committed_reply(vm, rc, err, &r, e);
	vm_request_stop(vm, VM_STOP_REQUESTED, "upgraded: VM handed to pid %d", r.pid);
	*ret = json_object_new_object();
	json_object_object_add(*ret, KVMLU_KEY_PID, json_object_new_int64(r.pid));
	/* Pause to "resumed": what the guest lost, including our own pause. */
	json_object_object_add(*ret, KVMLU_KEY_BLACKOUT_NS, json_line_new_u64(t1 - t0));
	json_object_object_add(*ret, KVMLU_KEY_PAUSE_NS, json_line_new_u64(r.pause_ns));
	json_object_object_add(*ret, KVMLU_KEY_PREPARE_NS, json_line_new_u64(ms_to_ns(r.prepare_ms)));
	json_object_object_add(*ret, KVMLU_KEY_RESTORE_NS, json_line_new_u64(ms_to_ns(r.restore_ms)));
	json_object_object_add(*ret, KVMLU_KEY_CREATE_NS, json_line_new_u64(ms_to_ns(r.create_ms)));
	json_object_object_add(*ret, KVMLU_KEY_COPIED_BYTES, json_line_new_u64(r.copied));
	if (r.memory[0])
		json_object_object_add(*ret, KVMLU_KEY_MEMORY, json_object_new_string(r.memory));
	json_object_object_add(*ret, KVMLU_KEY_STATE_BYTES, json_line_new_u64(r.state_bytes));
	json_object_object_add(*ret, KVMLU_KEY_BACKEND,
			       json_object_new_string(guestmem_backend_name(vm->mem.backend)));
	/* Paused before the upgrade: paused in the new process too (resume there). */
	json_object_object_add(*ret, KVMLU_KEY_STATE,
			       json_object_new_string(paused ? "running" : "paused"));
	if (r.checksum[0])
		json_object_object_add(*ret, KVMLU_KEY_CHECKSUM, json_object_new_string(r.checksum));
	/* The new process's resume pipeline, step by step (integer ns). */
	if (r.steps)
		json_object_object_add(*ret, KVMLU_KEY_STEPS, r.steps);
	return 0;
}

static const char *const upgrade_cmd_args[] = { KVMLU_ARG_BINARY, KVMLU_ARG_CHECKSUM,
						  KVMLU_ARG_TIMEOUT_MS, NULL };

static const struct control_command upgrade_commands[] = {
	/* No accept while it runs: new clients must reach the new process. */
	{ "upgrade", upgrade_cmd, upgrade_cmd_args, CONTROL_CMD_LONG | CONTROL_CMD_NO_ACCEPT },
};

int upgrade_register_commands(bool (*prepared)(void))
{
	upgrade_host_update_prepared = prepared;
	return control_register(upgrade_commands, 1);
}
