// SPDX-License-Identifier: GPL-2.0
/*
 * `kvmlu-vmm incoming --fd N` (see incoming.h): the receiving half of a
 * live upgrade (vmm/upgrade/upgrade.c has the other half and the whole story).
 *
 * The wire fills a resume plan (vmm/resume/resume.h), and the resume
 * pipeline, the same as after a kexec, does the rest, its steps spread
 * over the hand-over. Happy path: receive "prepare", fill the plan's VM
 * (vCPU count, RAM size, the RAM files, disks and taps as the old
 * process's open fds, never reopened by path) and resume_build() it while
 * the old process still runs the guest (memfd: the same files;
 * guest_memfd: the old VM's memory linked in with KVM_LINK_GUEST_MEMFD
 * where the kernel has the kvmlu patch, else fresh files); say "ready".
 * Then receive the state (the guest is paused now) into the plan (read
 * and validated before KVM sees any of it); resume_verify(): the state
 * describes the VM we built, guest_memfd without the link is copied from
 * the old files, the memory checksum compared if the state has one;
 * resume_apply(): TSC rate, vCPUs and devices; say "restored" and wait.
 * Nothing has run the guest here yet, and nothing does unless the old
 * process answers "commit": that message is the one commit point of the
 * hand-over (docs/control-protocol.md has the drawing). On commit: serve
 * the inherited control socket, resume_start() (parked, if the state
 * says the VM was paused), say "resumed" with the steps' times, then run
 * the VM like `kvmlu-vmm run` until it stops.
 *
 * Unhappy paths before commit (an error, or anything but "commit" on the
 * socket, EOF included: the old process timed out or died): say "error"
 * with the reason if we can and exit 1 without ever having run a vCPU;
 * the old process still has the VM. Nothing here touches the old VM: it
 * is only read (guest_memfd copy). After commit a failure to start is a
 * lost VM: said as "error" with "lost":true, and the old process reports
 * it (it never resumes its stale copy).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "vmm/control/server.h"
#include "vmm/resume/resume.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_memfd.h"
#include "vmm/upgrade/incoming.h"
#include "vmm/upgrade/upgrade_devices.h"
#include "vmm/upgrade/upgrade_wire.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "vmm/control/vmm_process.h"

struct handoff {
	int fds[UPGRADE_WIRE_MAX_FDS];
	unsigned int nfds;
	int listen_fd;
	char control_path[108];
	unsigned int verify_timeout_ms;
	unsigned int control_idle_ms;	/* the old process's --control-idle-ms */
	/* The VM, its RAM, disks and taps as the old process's fds, then its state. */
	struct resume_plan plan;
	struct resume_report report;
};

/* fd index from the handoff object; -1 if absent, -EPROTO if bad. */
static int fd_at(const struct handoff *h, json_object *o, const char *key, bool required)
{
	json_object *v;
	int64_t i;

	if (!json_object_object_get_ex(o, key, &v))
		return required ? -EPROTO : -1;
	i = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || i < 0 || i >= (int64_t)h->nfds)
		return -EPROTO;
	return h->fds[i];
}

static int parse_prepare(json_object *o, struct handoff *h, char *err, size_t errlen)
{
	json_object *v, *arr;
	size_t n;

	json_object_object_get_ex(o, "msg", &v);
	if (strcmp(json_object_get_string(v), "prepare"))
		return kvmlu_err(err, errlen, -EPROTO, "expected prepare, got \"%.40s\"",
				 json_object_get_string(v));
	if (!json_object_object_get_ex(o, "name", &v) || !json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) > VM_NAME_MAX)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad name");
	snprintf(h->plan.name, sizeof(h->plan.name), "%s", json_object_get_string(v));
	if (!json_object_object_get_ex(o, "ram_size", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) <= 0)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad ram_size");
	h->plan.ram_size = (uint64_t)json_object_get_int64(v);
	if (!json_object_object_get_ex(o, "nr_vcpus", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) < 1 || json_object_get_int(v) > VM_MAX_VCPUS)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad nr_vcpus");
	h->plan.nr_vcpus = (unsigned int)json_object_get_int(v);
	if (!json_object_object_get_ex(o, "backend", &v) || !json_object_is_type(v, json_type_string) ||
	    guestmem_backend_parse(json_object_get_string(v), &h->plan.backend))
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad backend");
	h->plan.serial_fd = fd_at(h, o, "serial_fd", true);
	h->listen_fd = fd_at(h, o, "listen_fd", false);
	if (h->plan.serial_fd < 0 || h->listen_fd < -1)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad serial/listen fd index");
	if (h->listen_fd >= 0) {
		if (!json_object_object_get_ex(o, "control_path", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    strlen(json_object_get_string(v)) >= sizeof(h->control_path))
			return kvmlu_err(err, errlen, -EPROTO, "prepare: listen_fd without control_path");
		snprintf(h->control_path, sizeof(h->control_path), "%s", json_object_get_string(v));
	}
	if (!json_object_object_get_ex(o, "region_fds", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return kvmlu_err(err, errlen, -EPROTO, "prepare: no region_fds");
	n = json_object_array_length(arr);
	if (n == 0 || n > GUESTMEM_MAX_REGIONS)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: %zu region fds", n);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		int64_t k = json_object_get_int64(e);

		if (!json_object_is_type(e, json_type_int) || k < 0 || k >= (int64_t)h->nfds)
			return kvmlu_err(err, errlen, -EPROTO, "prepare: bad region fd index");
		h->plan.ram_fds[i] = h->fds[k];
	}
	h->plan.nr_ram = (unsigned int)n;
	h->verify_timeout_ms = 10000;
	if (json_object_object_get_ex(o, "verify_timeout_ms", &v) && json_object_get_int(v) > 0)
		h->verify_timeout_ms = (unsigned int)json_object_get_int(v);
	/* Absent from an older VMM: the default, as before. */
	h->control_idle_ms = CONTROL_IDLE_MS_DEFAULT;
	if (json_object_object_get_ex(o, "control_idle_ms", &v)) {
		int64_t ms = json_object_get_int64(v);

		if (!json_object_is_type(v, json_type_int) || ms < CONTROL_IDLE_MS_MIN ||
		    ms > CONTROL_IDLE_MS_MAX)
			return kvmlu_err(err, errlen, -EPROTO, "prepare: control_idle_ms not %d..%d",
					 CONTROL_IDLE_MS_MIN, CONTROL_IDLE_MS_MAX);
		h->control_idle_ms = (unsigned int)ms;
	}
	/* Absent from an older VMM, and from a VM on virtio-mmio. */
	h->plan.transport = VM_VIRTIO_TRANSPORT_MMIO;
	if (json_object_object_get_ex(o, "virtio_transport", &v)) {
		if (!json_object_is_type(v, json_type_string) ||
		    strcmp(json_object_get_string(v), "pci"))
			return kvmlu_err(err, errlen, -EPROTO, "prepare: virtio_transport not \"pci\"");
		h->plan.transport = VM_VIRTIO_TRANSPORT_PCI;
	}
	/* The devices: each type reads its own array (vmm/upgrade/upgrade_devices.h). */
	return upgrade_devices_read(o, h->fds, h->nfds, h->plan.devs, &h->plan.nr_devs,
				    RESUME_MAX_DEVICES, err, errlen);
}

/* lost: after commit, when the old process cannot take the VM back. */
static void send_error(int sock, const char *desc, bool lost)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "msg", json_object_new_string("error"));
	json_object_object_add(o, "desc", json_object_new_string(desc));
	json_object_object_add(o, "lost", json_object_new_boolean(lost));
	(void)upgrade_wire_send(sock, o, NULL, 0, NULL, 0);
}

static void send_simple(int sock, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "msg", json_object_new_string(msg));
	(void)upgrade_wire_send(sock, o, NULL, 0, NULL, 0);
}

/* Step 1, guest still running in the old process: build the VM (resume_build()). */
static int incoming_prepare(int sock, struct handoff *h, struct vm *vm, char *err, size_t errlen)
{
	json_object *o;
	int ret;

	ret = upgrade_wire_recv(sock, &o, h->fds, UPGRADE_WIRE_MAX_FDS, &h->nfds, err, errlen);
	if (ret)
		return ret;
	ret = parse_prepare(o, h, err, errlen);
	json_object_put(o);
	if (ret)
		return ret;
	/*
	 * The old process's files, on the same kernel: disks and taps as its
	 * open fds (the VM takes dups; ours are closed on the way out), RAM
	 * files named by their index in region_fds, guest_memfd copied where
	 * it cannot be linked (the old VM is paused by then), the host TSC
	 * the same one.
	 */
	h->plan.ram_token_base = 0;
	h->plan.ram_copy_ok = true;
	h->plan.new_boot = false;
	ret = resume_build(&h->plan, vm, &h->report, err, errlen);
	if (ret || h->plan.backend != GUESTMEM_MEMFD)
		return ret;
	/* memfd: the VM holds its own fds of the files, ours are done with. */
	for (unsigned int i = 0; i < h->nfds; i++)
		for (unsigned int j = 0; j < h->plan.nr_ram; j++)
			if (h->fds[i] >= 0 && h->fds[i] == h->plan.ram_fds[j]) {
				close(h->fds[i]);
				h->fds[i] = -1;
			}
	for (unsigned int j = 0; j < h->plan.nr_ram; j++)
		h->plan.ram_fds[j] = -1;
	return 0;
}

/*
 * Step 2, guest paused in the old process: state in, memory verified,
 * state applied (resume_verify(), resume_apply()); no vCPU runs yet.
 */
static int incoming_restore(int sock, struct handoff *h, struct vm *vm, char *err, size_t errlen)
{
	struct resume_report *r = &h->report;
	int fds[UPGRADE_WIRE_MAX_FDS], state_fd;
	unsigned int nfds = 0;
	json_object *o, *v;
	void *blob = NULL;
	size_t size;
	int ret;

	ret = upgrade_wire_recv(sock, &o, fds, UPGRADE_WIRE_MAX_FDS, &nfds, err, errlen);
	if (ret)
		return ret;
	json_object_object_get_ex(o, "msg", &v);
	if (strcmp(json_object_get_string(v), "state") || nfds != 1)
		ret = kvmlu_err(err, errlen, -EPROTO, "expected state with 1 fd, got \"%.40s\" with %u",
				json_object_get_string(v), nfds);
	/* Whether the guest ran in the old process: a paused VM stays paused. */
	else if (!json_object_object_get_ex(o, "run", &v) ||
		 !json_object_is_type(v, json_type_boolean))
		ret = kvmlu_err(err, errlen, -EPROTO, "state without \"run\": true or false");
	else
		h->plan.run = json_object_get_boolean(v);
	json_object_put(o);
	state_fd = nfds ? fds[0] : -1;
	for (unsigned int i = 1; i < nfds; i++)
		close(fds[i]);
	if (!ret)
		ret = state_memfd_read(state_fd, STATE_FDT_MAX_SIZE, &blob, &size,
				       err, errlen);
	if (state_fd >= 0)
		close(state_fd);
	if (ret)
		return ret;
	ret = resume_plan_load_state(&h->plan, blob, size, vm->nr_vcpus, err, errlen);
	free(blob);
	if (ret)
		return ret;
	/* The old process took a checksum only if asked: compare it if there is one. */
	h->plan.verify = h->plan.state.has_checksum ? RESUME_VERIFY_FULL : RESUME_VERIFY_NONE;
	ret = resume_verify(&h->plan, vm, r, err, errlen);
	if (ret)
		return ret;
	if (!resume_memory_ok(r))
		return kvmlu_err(err, errlen, -EIO,
				 "memory checksum %s differs from %s taken at pause",
				 r->checksum_now, r->checksum_recorded);
	ret = resume_apply(&h->plan, vm, r, err, errlen);
	if (!ret && r->tsc_khz_saved != r->tsc_khz_now)
		fprintf(stderr, "kvmlu-vmm incoming: %s: guest TSC rate %u kHz in the state, %u kHz now\n",
			vm->name, r->tsc_khz_saved, r->tsc_khz_now);
	return ret;
}

/* Wait for the old process's word; 0 on "commit", anything else refuses. */
static int incoming_wait_commit(int sock, char *err, size_t errlen)
{
	int fds[UPGRADE_WIRE_MAX_FDS];
	unsigned int nfds = 0;
	json_object *o, *v;
	int ret;

	ret = upgrade_wire_recv(sock, &o, fds, UPGRADE_WIRE_MAX_FDS, &nfds, err, errlen);
	if (ret == -ECONNRESET)
		return kvmlu_err(err, errlen, ret, "the old kvmlu-vmm went away before commit");
	if (ret)
		return ret;
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	json_object_object_get_ex(o, "msg", &v);
	if (strcmp(json_object_get_string(v), "commit"))
		ret = kvmlu_err(err, errlen, -EPROTO, "expected commit, got \"%.40s\"",
				json_object_get_string(v));
	json_object_put(o);
	return ret;
}

/* After commit: the VM is ours. Serve the control socket, start the vCPUs. */
static int incoming_commit(struct handoff *h, struct vm *vm, struct control_server *server,
			   struct control_ctx *ctx, char *err, size_t errlen)
{
	int ret;

	ctx->vm = vm;
	ctx->listen_fd = -1;
	ctx->verify_timeout_ms = h->verify_timeout_ms;
	if (h->listen_fd >= 0) {
		control_server_set_idle_ms(h->control_idle_ms);
		ret = control_server_adopt(server, h->listen_fd, h->control_path, ctx, err, errlen);
		if (ret)
			return ret;
		for (unsigned int i = 0; i < h->nfds; i++)
			if (h->fds[i] == h->listen_fd)
				h->fds[i] = -1;
		ctx->listen_fd = h->listen_fd;
		ctx->control_path = h->control_path;
	}
	return resume_start(&h->plan, vm, &h->report, err, errlen);
}

int vmm_incoming_main(int argc, char **argv)
{
	struct control_server server;
	struct control_ctx ctx = { 0 };
	struct handoff h;
	struct vm vm;
	char err[512] = "", *end;
	uint64_t t0;
	double prepare_ms = 0;
	bool committed = false;
	int sock, sig_fd, ret, status = 1;
	long fd;

	memset(&h, 0, sizeof(h));
	resume_plan_init(&h.plan);
	resume_report_init(&h.report);
	memset(&vm, 0, sizeof(vm));
	vm.kvm_fd = vm.vm_fd = vm.stop_efd = -1;
	control_server_init(&server);
	if (argc != 4 || strcmp(argv[2], "--fd")) {
		fprintf(stderr, "kvmlu-vmm incoming: internal subcommand, usage: incoming --fd N\n");
		return 64;
	}
	errno = 0;
	fd = strtol(argv[3], &end, 10);
	if (errno || *end || fd < 0 || fd > 1024) {
		fprintf(stderr, "kvmlu-vmm incoming: --fd %s: not a file descriptor\n", argv[3]);
		return 64;
	}
	sock = (int)fd;
	sig_fd = vmm_signals_setup();
	if (sig_fd < 0) {
		fprintf(stderr, "kvmlu-vmm incoming: signal setup: %s\n", strerror(errno));
		return 1;
	}
	/* The resume pipeline's steps, spread over the hand-over's messages. */
	t0 = kvmlu_mono_ns();
	ret = incoming_prepare(sock, &h, &vm, err, sizeof(err));
	if (!ret) {
		prepare_ms = (double)(kvmlu_mono_ns() - t0) / 1e6;
		send_simple(sock, "ready");
		t0 = kvmlu_mono_ns();
		ret = incoming_restore(sock, &h, &vm, err, sizeof(err));
	}
	if (!ret) {
		send_simple(sock, "restored");
		ret = incoming_wait_commit(sock, err, sizeof(err));
	}
	if (!ret) {
		committed = true;
		ret = incoming_commit(&h, &vm, &server, &ctx, err, sizeof(err));
	}
	if (ret) {
		fprintf(stderr, "kvmlu-vmm incoming: %s: %s%s\n", h.plan.name[0] ? h.plan.name : "upgrade",
			committed ? "VM lost after commit: " : "", err);
		send_error(sock, err, committed);
		/* The socket path stays the old process's: do not remove it on the way out. */
		ctx.handed_off = true;
		goto out;
	}
	{
		json_object *o = json_object_new_object();

		json_object_object_add(o, "msg", json_object_new_string("resumed"));
		json_object_object_add(o, "memory_copied_bytes", json_line_new_u64(h.report.copied_bytes));
		json_object_object_add(o, "memory", json_object_new_string(
			resume_memory_name(h.report.memory)));
		/* From "ready" on: includes the old side's pause, capture and commit. */
		json_object_object_add(o, "restore_ms",
				       json_line_new_ms((double)(kvmlu_mono_ns() - t0) / 1e6));
		json_object_object_add(o, "prepare_ms", json_line_new_ms(prepare_ms));
		/* The build step: KVM_CREATE_VM, irqchip, memslots, vCPUs, devices, the link. */
		json_object_object_add(o, "create_ms", json_line_new_ms((double)h.report.build_ns / 1e6));
		/* Each step of the pipeline, integer ns. */
		resume_report_steps(&h.report, o);
		/* The VM is ours now whatever the old process does with this. */
		(void)upgrade_wire_send(sock, o, NULL, 0, NULL, 0);
	}
	close(sock);
	sock = -1;
	fprintf(stderr, "kvmlu-vmm: %s: %s after live upgrade (pid %d, %llu bytes copied%s)\n",
		vm.name, h.plan.run ? "resumed" : "taken over paused", (int)getpid(),
		(unsigned long long)h.report.copied_bytes,
		h.report.memory == RESUME_MEMORY_LINKED ? ", guest_memfd linked" : "");
	status = vmm_serve(&vm, sig_fd, &server);
out:
	if (vm.nr_threads || vm.state == VM_STATE_RUNNING) {
		vm_request_stop(&vm, VM_STOP_VMM_ERROR, "upgrade failed");
		vm_join(&vm);
	}
	control_server_stop(&server);
	vm_destroy(&vm);
	resume_plan_free(&h.plan);
	for (unsigned int i = 0; i < h.nfds; i++)
		if (h.fds[i] >= 0)
			close(h.fds[i]);
	if (sock >= 0)
		close(sock);
	close(sig_fd);
	return status;
}
