// SPDX-License-Identifier: GPL-2.0
/*
 * `kvmlu-vmm restore --session kvmlu/vm/<name>`: a VM back after a host
 * kexec, from the LUO session its VMM held at the kexec (live_update.h).
 *
 * Happy path: retrieve the session (once per boot) -> the state memfd
 * (token 1) -> state_fdt_load(): the same parse and validation as live
 * upgrade, before KVM sees anything -> the RAM files by the tokens the
 * state names -> vm_create() adopting them (nothing copied; guest_memfd:
 * a VM on fresh files, then the retrieved memory linked in their place
 * with KVM_LINK_GUEST_MEMFD, guestmem/gmem_link.h) -> memory
 * checksum now == checksum recorded at pause -> state_vm_restore() ->
 * TSC offsets moved onto this boot's TSC -> control socket -> vCPUs run ->
 * FINISH the session -> serve the VM like `kvmlu-vmm run`.
 *
 * Unhappy paths:
 *  1. No session (its VMM was gone at the kexec), a bad name, a bad or
 *     hostile state, a guest_memfd on a kernel that cannot link it: exit
 *     1 with the reason; nothing was created. A
 *     retrieved session is closed at exit, which finishes it.
 *  2. Checksum mismatch (or none recorded): the vCPUs never run; the VM
 *     stays built, the control socket answers (update-status says
 *     "checksum-mismatch"), the session stays open so the kernel keeps
 *     its files, until SIGTERM or `shutdown`. Never resumed on memory
 *     that differs from what was paused.
 *  3. FINISH fails after the guest runs: reported; the guest keeps
 *     running (its files are ours already), the kernel finishes the
 *     session when this process exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guestmem/gmem_link.h"
#include "guestmem/guestmem.h"
#include "vmm/control/server.h"
#include "vmm/live_update.h"
#include "vmm/err.h"
#include "vmm/live_update_state_memfd.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/vm_capture.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "vmm/vmm_process.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void close_fds(int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

/* The state memfd of the session, parsed and validated. */
static int restore_read_state(struct live_update_restore *lu, struct state_vm *s,
			      char *err, size_t errlen)
{
	char msg[512] = "";
	void *blob = NULL;
	size_t size = 0;
	int fd = -1, ret;

	ret = luo_session_retrieve_fd(&lu->session, LUO_TOKEN_STATE, "state memfd", &fd,
				      err, errlen);
	if (ret)
		return ret;
	ret = live_update_state_memfd_read(fd, STATE_FDT_MAX_SIZE, &blob, &size, msg, sizeof(msg));
	close(fd);
	if (ret)
		return vmm_err(err, errlen, ret, "session '%s': %s", lu->session.name, msg);
	/* Every check before KVM sees any of it, as on live upgrade. */
	ret = state_fdt_load(blob, size, 0, s, msg, sizeof(msg));
	free(blob);
	if (ret)
		return vmm_err(err, errlen, ret, "session '%s': state refused: %s",
				       lu->session.name, msg);
	lu->state_bytes = size;
	if (strcmp(s->name, lu->vm_name))
		return vmm_err(err, errlen, -EINVAL,
				       "session '%s' holds the state of VM '%s', not '%s'",
				       lu->session.name, s->name, lu->vm_name);
	if (s->backend != STATE_BACKEND_MEMFD && s->backend != STATE_BACKEND_GUEST_MEMFD)
		return vmm_err(err, errlen, -EOPNOTSUPP,
				       "session '%s': %s backend cannot be restored by this VMM",
				       lu->session.name, state_backend_name(s->backend));
	return 0;
}

/*
 * memfd: the VM adopts the retrieved files themselves. On return fds holds
 * -1 for each file the VM owns (or a failed vm_create() closed), and the
 * fds still the caller's otherwise.
 */
static int restore_vm_memfd(struct vm *vm, struct vm_config *cfg, int *fds, uint32_t nr,
			    char *err, size_t errlen)
{
	struct stat st[GUESTMEM_MAX_REGIONS];
	int ret;

	cfg->adopt_fds = fds;
	for (uint32_t i = 0; i < nr; i++)
		if (fstat(fds[i], &st[i]) < 0)
			memset(&st[i], 0, sizeof(st[i]));
	ret = vm_create(vm, cfg, err, errlen);
	if (ret) {
		/*
		 * A failed vm_create() has closed the files if it got as far as
		 * adopting them, else they are still ours: keep only those that
		 * still are the very files retrieved.
		 */
		for (uint32_t i = 0; i < nr; i++) {
			struct stat now;

			if (fstat(fds[i], &now) < 0 || now.st_ino != st[i].st_ino ||
			    now.st_dev != st[i].st_dev)
				fds[i] = -1;
		}
		return ret;
	}
	/* The VM owns the files now; vm_destroy() closes them. */
	for (unsigned int i = 0; i < GUESTMEM_MAX_REGIONS; i++)
		fds[i] = -1;
	return 0;
}

/*
 * guest_memfd: a retrieved file belongs to no VM and no memslot takes it.
 * Build the VM on fresh files, then link the retrieved memory in their
 * place (KVM_LINK_GUEST_MEMFD, the project's kernel patch): same pages, no
 * copy. The retrieved fds stay ours either way; the links hold the memory.
 */
static int restore_vm_guest_memfd(struct vm *vm, const struct vm_config *cfg, const int *fds,
				  char *err, size_t errlen)
{
	char msg[512] = "";
	int ret;

	ret = vm_create(vm, cfg, err, errlen);
	if (ret)
		return ret;
	ret = guestmem_gmem_relink(&vm->mem, vm->vm_fd, fds, msg, sizeof(msg));
	if (ret) {
		vm_destroy(vm);
		return vmm_err(err, errlen, ret, "restore %s: guest_memfd RAM: %s", cfg->name, msg);
	}
	return 0;
}

/* The RAM file of each region, by the fixed token scheme only. */
static int restore_ram_fds(struct live_update_restore *lu, const struct state_vm *s,
			   int *fds, char *err, size_t errlen)
{
	char what[32];
	int ret;

	for (uint32_t i = 0; i < s->nr_regions; i++) {
		if (s->regions[i].token != LUO_TOKEN_RAM(i) || s->regions[i].file_offset)
			return vmm_err(err, errlen, -EINVAL,
					       "session '%s': region %u names token 0x%llx offset 0x%llx, expected token 0x%llx offset 0",
					       lu->session.name, i,
					       (unsigned long long)s->regions[i].token,
					       (unsigned long long)s->regions[i].file_offset,
					       (unsigned long long)LUO_TOKEN_RAM(i));
		snprintf(what, sizeof(what), "RAM region %u", i);
		ret = luo_session_retrieve_fd(&lu->session, LUO_TOKEN_RAM(i), what, &fds[i],
					      err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static int restore_verify(struct vm *vm, const struct state_vm *s,
			  struct live_update_restore *lu, char *err, size_t errlen)
{
	struct guestmem_checksum c = { 0 };
	int ret;

	lu->has_recorded = s->has_checksum;
	if (s->has_checksum) {
		c.hi = s->checksum_hi;
		c.lo = s->checksum_lo;
		guestmem_checksum_format(&c, lu->checksum_recorded);
	}
	ret = guestmem_checksum(&vm->mem, 0, &c);
	if (ret)
		return vmm_err(err, errlen, ret, "restore %s: memory checksum: %s",
				       vm->name, strerror(-ret));
	guestmem_checksum_format(&c, lu->checksum_now);
	lu->checksum_ns = c.nsec;
	lu->memory_verified = s->has_checksum && c.hi == s->checksum_hi && c.lo == s->checksum_lo;
	return 0;
}

int live_update_restore_vm(const char *session_name, int serial_fd, struct vm *vm,
			   struct live_update_restore *lu, char *err, size_t errlen)
{
	int fds[GUESTMEM_MAX_REGIONS];
	struct vm_config cfg = { 0 };
	struct state_vm s = { 0 };
	const char *vm_name;
	uint64_t ram = 0, t0;
	int ret;

	for (unsigned int i = 0; i < GUESTMEM_MAX_REGIONS; i++)
		fds[i] = -1;
	memset(lu, 0, sizeof(*lu));
	luo_session_init(&lu->session);
	lu->started_wall_ns = live_update_wall_ns();
	vm_name = luo_session_vm_name(session_name);
	if (!vm_name) {
		luo_session_name_check(session_name, err, errlen);
		return -EINVAL;
	}
	snprintf(lu->vm_name, sizeof(lu->vm_name), "%s", vm_name);
	ret = luo_session_retrieve(&lu->session, session_name, err, errlen);
	if (ret)
		return ret;
	ret = restore_read_state(lu, &s, err, errlen);
	if (ret)
		goto err_state;
	t0 = mono_ns();
	ret = restore_ram_fds(lu, &s, fds, err, errlen);
	lu->retrieve_ns = mono_ns() - t0;
	if (ret)
		goto err_fds;
	for (uint32_t i = 0; i < s.nr_regions; i++)
		ram += s.regions[i].size;
	cfg.name = s.name;
	cfg.ram_size = ram;
	cfg.nr_vcpus = s.nr_vcpus;
	cfg.serial_fd = serial_fd;
	if (s.backend == STATE_BACKEND_GUEST_MEMFD) {
		cfg.backend = GUESTMEM_GUEST_MEMFD;
		ret = restore_vm_guest_memfd(vm, &cfg, fds, err, errlen);
	} else {
		cfg.backend = GUESTMEM_MEMFD;
		ret = restore_vm_memfd(vm, &cfg, fds, s.nr_regions, err, errlen);
	}
	/* Whatever the VM did not take is still ours (guest_memfd: all of them). */
	close_fds(fds, GUESTMEM_MAX_REGIONS);
	if (ret)
		goto err_state;
	lu->paused_wall_ns = s.devices.clock_wall_ns;
	ret = restore_verify(vm, &s, lu, err, errlen);
	if (ret || !lu->memory_verified)
		goto out_state;
	ret = live_update_tsc_rate_fit(vm, &s, &lu->tsc_khz_saved, &lu->tsc_khz_now, err, errlen);
	if (ret)
		goto err_vm;
	ret = state_vm_restore(vm, &s, err, errlen);
	if (ret)
		goto err_vm;
	ret = live_update_tsc_adjust(vm, &s, &lu->tsc_shift, &lu->tsc_adjusted, err, errlen);
	if (ret)
		goto err_vm;
	lu->restored_wall_ns = live_update_wall_ns();
out_state:
	state_vm_free(&s);
	if (ret)
		goto err_vm_only;
	return 0;

err_vm:
	state_vm_free(&s);
err_vm_only:
	vm_destroy(vm);
	return ret;
err_fds:
	close_fds(fds, GUESTMEM_MAX_REGIONS);
err_state:
	state_vm_free(&s);
	return ret;
}

int live_update_restore_finish(struct live_update_restore *lu, char *err, size_t errlen)
{
	int ret;

	lu->resumed_wall_ns = live_update_wall_ns();
	ret = luo_session_finish(&lu->session, err, errlen);
	live_update_restore_publish(lu);
	return ret;
}

void live_update_restore_release(struct live_update_restore *lu)
{
	luo_session_close(&lu->session);
}

/* -- the `restore` subcommand ------------------------------------------ */

int live_update_restore_main(const char *session, const char *control, const char *serial)
{
	struct live_update_restore lu;
	struct control_server server;
	struct control_ctx ctx = { 0 };
	char err[512] = "";
	int sig_fd, serial_fd = STDOUT_FILENO, ret, status = 1;
	uint64_t t0 = mono_ns();
	struct vm vm;

	memset(&vm, 0, sizeof(vm));
	vm.kvm_fd = vm.vm_fd = vm.stop_efd = -1;
	memset(&server, 0, sizeof(server));
	server.listen_fd = server.wake_fd = -1;
	luo_session_init(&lu.session);
	sig_fd = vmm_signals_setup();
	if (sig_fd < 0) {
		fprintf(stderr, "kvmlu-vmm: restore: signal setup: %s\n", strerror(errno));
		return 1;
	}
	if (serial) {
		serial_fd = open(serial, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
		if (serial_fd < 0) {
			fprintf(stderr, "kvmlu-vmm: restore: --serial %s: %s\n", serial, strerror(errno));
			goto out_sig;
		}
	}
	ret = live_update_restore_vm(session, serial_fd, &vm, &lu, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kvmlu-vmm: restore %s: %s\n", session, err);
		goto out_session;
	}
	live_update_restore_publish(&lu);
	ctx.vm = &vm;
	ctx.listen_fd = -1;
	if (control) {
		ret = control_server_start(&server, control, &ctx, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "kvmlu-vmm: restore %s: control socket: %s\n", session, err);
			goto out_vm;
		}
		ctx.listen_fd = server.listen_fd;
		ctx.control_path = control;
	}
	if (!lu.memory_verified) {
		fprintf(stderr, "kvmlu-vmm: restore %s: MEMORY CHECKSUM MISMATCH: recorded at pause %s, "
			"now %s: VM %s kept paused, never resumed; session kept open (not finished), "
			"its files live until this process (pid %d) exits\n", session,
			lu.has_recorded ? lu.checksum_recorded : "(none)", lu.checksum_now,
			vm.name, (int)getpid());
		ret = vmm_wait_for_stop(&vm, sig_fd);
		status = 2;
		goto out_server;
	}
	ret = vm_start(&vm, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kvmlu-vmm: restore %s: start vCPUs: %s\n", session, err);
		vm_request_stop(&vm, VM_STOP_VMM_ERROR, "start failed");
		vm_join(&vm);
		goto out_server;
	}
	if (live_update_restore_finish(&lu, err, sizeof(err)))
		fprintf(stderr, "kvmlu-vmm: restore %s: guest running, but %s\n", session, err);
	fprintf(stderr, "kvmlu-vmm: %s: resumed from session %s (pid %d): checksum %s verified, "
		"%.1f ms in this process (retrieve %.1f ms, checksum %.1f ms), tsc %s (shift %lld, %u kHz saved, %u kHz now), "
		"paused %.3f s by wall clock\n",
		vm.name, session, (int)getpid(), lu.checksum_now, (double)(mono_ns() - t0) / 1e6,
		(double)lu.retrieve_ns / 1e6, (double)lu.checksum_ns / 1e6, lu.tsc_adjusted ? "adjusted" : "as saved",
		(long long)lu.tsc_shift, lu.tsc_khz_saved, lu.tsc_khz_now,
		lu.resumed_wall_ns > lu.paused_wall_ns ?
		(double)(lu.resumed_wall_ns - lu.paused_wall_ns) / 1e9 : 0.0);
	ret = vmm_wait_for_stop(&vm, sig_fd);
	if (ret)
		vm_request_stop(&vm, VM_STOP_VMM_ERROR, "VMM main loop failed: %s", strerror(-ret));
	vm_join(&vm);
	status = vm.stop_reason == VM_STOP_REQUESTED || vm.stop_reason == VM_STOP_SIGNAL ||
		 vm.stop_reason == VM_STOP_GUEST_POWEROFF ? 0 : 1;
	fprintf(stderr, "kvmlu-vmm: %s: stopped (%s): %s\n", vm.name,
		vm_stop_reason_name(vm.stop_reason), vm.stop_msg);
out_server:
	control_server_stop(&server);
out_vm:
	vm_destroy(&vm);
out_session:
	live_update_restore_release(&lu);
	if (serial_fd != STDOUT_FILENO)
		close(serial_fd);
out_sig:
	close(sig_fd);
	return status;
}
