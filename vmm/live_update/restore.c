// SPDX-License-Identifier: GPL-2.0
/*
 * A VM back after a host kexec, from the LUO session its VMM held at the
 * kexec (live_update.h). Two steps, so that a failure in the second can
 * be retried without losing the first:
 *
 * live_update_restore_take(): retrieve the session (once per boot: after
 *   this the process holds the only copy of the VM).
 * live_update_restore_take_files(): the state memfd (token 1), kept as a
 *   blob and checked by state_fdt_load(), the same parse and validation as
 *   live upgrade -> the RAM files by the tokens the state names. Each file
 *   can be retrieved once, so what was got is kept and a retry asks only
 *   for the rest. Nothing of it reaches KVM yet.
 *
 * live_update_restore_build(): the plan from what was taken (the state
 *   parsed again, the VM's shape, disks and NICs from it) -> the resume
 *   pipeline (vmm/resume/resume.h), the same as a live upgrade's:
 *   resume_build() on the RAM files (memfd: the VM adopts duplicates, so
 *   the taken fds stay for a retry; guest_memfd: the retrieved memory
 *   linked in place of fresh files) -> resume_verify(): the memory
 *   checksum now == checksum recorded at pause, or (lazy, the default
 *   where the kernel allows) RAM registered so that each chunk is
 *   verified before its first access while the guest runs
 *   (lazy_restore.c watches the verdict) -> resume_apply(): vCPU and
 *   device state, TSC moved onto this boot's TSC. The caller starts it
 *   (resume_start()).
 *   Disks (virtio-blk) are reopened by the path the state recorded and
 *   must be the same files (device, inode, size): another disk, or none,
 *   fails the build and the VM is held with that reason. Taps
 *   (virtio-net) are made again by name, up, on the recorded bridge, with
 *   the recorded MAC; a tap that cannot be made holds the VM likewise.
 *   Every failure destroys the VM it built and leaves the taken files as
 *   they were: the caller holds the VM and may build again.
 *
 * restore_main.c drives both and holds the VM, paused and
 * reachable, when anything after the take fails (hold.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "vmm/live_update/live_update.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_memfd.h"
#include "vmm/vm.h"

/*
 * Parse and check the taken state blob into lu->plan.state (freed by
 * resume_plan_free()); parsed again for every build, since applying it
 * changes it (the TSC rate the vCPUs got).
 */
static int restore_parse_state(struct live_update_restore *lu, char *err, size_t errlen)
{
	const struct state_vm *s = &lu->plan.state;
	char msg[512] = "";
	int ret;

	ret = resume_plan_load_state(&lu->plan, lu->state_blob, lu->state_size, 0, msg, sizeof(msg));
	if (ret)
		return kvmlu_err(err, errlen, ret, "session '%s': state refused: %s",
				 lu->session.name, msg);
	if (strcmp(s->name, lu->vm_name))
		ret = kvmlu_err(err, errlen, -EINVAL,
				"session '%s' holds the state of VM '%s', not '%s'",
				lu->session.name, s->name, lu->vm_name);
	else if (s->backend != STATE_BACKEND_MEMFD && s->backend != STATE_BACKEND_GUEST_MEMFD)
		ret = kvmlu_err(err, errlen, -EOPNOTSUPP,
				"session '%s': %s backend cannot be restored by this VMM",
				lu->session.name, state_backend_name(s->backend));
	else if (resume_plan_check_tokens(&lu->plan, msg, sizeof(msg)))
		ret = kvmlu_err(err, errlen, -EINVAL, "session '%s': %s", lu->session.name, msg);
	if (ret)
		resume_plan_free(&lu->plan);
	return ret;
}

void live_update_restore_init(struct live_update_restore *lu)
{
	memset(lu, 0, sizeof(*lu));
	luo_session_init(&lu->session);
	lu->state_fd = -1;
	resume_plan_init(&lu->plan);
	resume_report_init(&lu->report);
	/* After a kexec: the host TSC is another boot's; the RAM names LUO tokens. */
	lu->plan.new_boot = true;
	lu->plan.ram_token_base = LUO_TOKEN_RAM(0);
	lu->plan.verify = RESUME_VERIFY_LAZY;
}

int live_update_restore_take(const char *session_name, struct live_update_restore *lu,
			     char *err, size_t errlen)
{
	const char *vm_name;

	lu->started_wall_ns = kvmlu_wall_ns();
	vm_name = luo_session_vm_name(session_name);
	if (!vm_name) {
		luo_session_name_check(session_name, err, errlen);
		return -EINVAL;
	}
	snprintf(lu->vm_name, sizeof(lu->vm_name), "%s", vm_name);
	return luo_session_retrieve(&lu->session, session_name, err, errlen);
}

bool live_update_restore_have_files(const struct live_update_restore *lu)
{
	if (!lu->state_blob || !lu->plan.nr_ram)
		return false;
	for (uint32_t i = 0; i < lu->plan.nr_ram; i++)
		if (lu->plan.ram_fds[i] < 0)
			return false;
	return true;
}

int live_update_restore_take_files(struct live_update_restore *lu, char *err, size_t errlen)
{
	char msg[512] = "", what[32];
	uint32_t nr;
	uint64_t t0;
	int ret;

	/* Each file can be retrieved once: what was got is kept for a retry. */
	if (lu->state_fd < 0 && !lu->state_blob) {
		ret = luo_session_retrieve_fd(&lu->session, LUO_TOKEN_STATE, "state memfd",
					      &lu->state_fd, err, errlen);
		if (ret)
			return ret;
	}
	if (!lu->state_blob) {
		ret = state_memfd_read(lu->state_fd, STATE_FDT_MAX_SIZE, &lu->state_blob,
				       &lu->state_size, msg, sizeof(msg));
		if (ret)
			return kvmlu_err(err, errlen, ret, "session '%s': %s", lu->session.name, msg);
		close(lu->state_fd);
		lu->state_fd = -1;
	}
	ret = restore_parse_state(lu, err, errlen);
	if (ret)
		return ret;
	lu->paused_wall_ns = lu->plan.state.devices.clock_wall_ns;
	nr = lu->plan.state.nr_regions;
	/* Built from again at every attempt: nothing of it kept until then. */
	resume_plan_free(&lu->plan);
	lu->plan.nr_ram = nr;
	t0 = kvmlu_mono_ns();
	for (uint32_t i = 0; i < nr; i++) {
		if (lu->plan.ram_fds[i] >= 0)
			continue;
		snprintf(what, sizeof(what), "RAM region %u", i);
		ret = luo_session_retrieve_fd(&lu->session, LUO_TOKEN_RAM(i), what,
					      &lu->plan.ram_fds[i], err, errlen);
		if (ret)
			break;
	}
	lu->retrieve_ns += kvmlu_mono_ns() - t0;
	return ret;
}

/* What the memory step chose, said once: the harness reads these lines. */
static void restore_say_verify(const struct vm *vm, const struct resume_report *r)
{
	if (r->verify_mode == RESUME_VERIFY_LAZY)
		fprintf(stderr, "kvmlu-vmm: restore %s: memory verified lazily: the guest resumes now, each 2 MiB chunk is verified before its first access\n",
			vm->name);
	else
		fprintf(stderr, "kvmlu-vmm: restore %s: lazy verification not used (%s): verifying all RAM before the guest runs\n",
			vm->name, r->verify_fallback);
}

int live_update_restore_build(struct live_update_restore *lu, int serial_fd, struct vm *vm,
			      char *err, size_t errlen)
{
	char msg[512] = "";
	int ret;

	/* Nothing verified about a VM not built yet (update-status says so). */
	lu->report.memory_verified = false;
	ret = restore_parse_state(lu, err, errlen);
	if (ret)
		return ret;
	resume_plan_from_state(&lu->plan);
	lu->plan.serial_fd = serial_fd;
	/* The pipeline's order (vmm/resume/resume.h); the start is the caller's. */
	ret = resume_build(&lu->plan, vm, &lu->report, msg, sizeof(msg));
	if (ret) {
		kvmlu_err(err, errlen, ret, "restore %s: %s", lu->plan.name, msg);
		goto out;
	}
	ret = resume_verify(&lu->plan, vm, &lu->report, err, errlen);
	if (!ret) {
		if (lu->report.lazy)
			live_update_lazy_begin(lu);
		restore_say_verify(vm, &lu->report);
	}
	/* A VM on changed memory stays built for inspection but never runs. */
	if (ret || !resume_memory_ok(&lu->report))
		goto out_vm;
	ret = resume_apply(&lu->plan, vm, &lu->report, err, errlen);
	if (!ret)
		lu->restored_wall_ns = kvmlu_wall_ns();
out_vm:
	if (ret) {
		/* No vCPU ran: the verifier can let go before the mapping goes. */
		live_update_lazy_stop(lu);
		vm_destroy(vm);
	}
out:
	resume_plan_free(&lu->plan);
	return ret;
}

int live_update_restore_finish(struct live_update_restore *lu, char *err, size_t errlen)
{
	int ret;

	if (!lu->resumed_wall_ns)
		lu->resumed_wall_ns = kvmlu_wall_ns();
	ret = luo_session_finish(&lu->session, err, errlen);
	live_update_restore_publish(lu);
	return ret;
}

void live_update_restore_release(struct live_update_restore *lu)
{
	for (unsigned int i = 0; i < GUESTMEM_MAX_REGIONS; i++) {
		if (lu->plan.ram_fds[i] >= 0)
			close(lu->plan.ram_fds[i]);
		lu->plan.ram_fds[i] = -1;
	}
	if (lu->state_fd >= 0)
		close(lu->state_fd);
	lu->state_fd = -1;
	free(lu->state_blob);
	lu->state_blob = NULL;
	resume_plan_free(&lu->plan);
	luo_session_close(&lu->session);
}
