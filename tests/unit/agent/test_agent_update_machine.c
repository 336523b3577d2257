// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the host-update state machine (agent/update/update_machine.c)
 * and its preflight rules (agent/update/preflight.c), with every VMM, kernel and
 * LUO operation faked behind struct update_ops.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "agent/update/update_machine.h"

#define T0 1764763200000000000LL
#define MIB (1ULL << 20)
#define NVM 3

struct fake {
	int64_t t;
	struct host_facts host;
	int host_err;
	bool unreachable[NVM], unpreservable[NVM];
	uint64_t resident[NVM];		/* status memory_resident */
	bool resident_unknown[NVM];	/* a VMM that does not report it */
	bool small_pages[NVM];		/* status memory_folio "4K", else "2M" */
	int allowed_err, load_err_trial, load_err_real, preserve_err, jump_err;
	int prepare_fail_at, restore_fail_at, abort_fail_at, held_at, gone_at, lost_at;
	int missing_at;		/* its session not in the new kernel */
	int marker_err, markers, marker_vms, marker_clears;
	bool bad_sum_after[NVM];
	int loads, unloads, preserves, discards, jumps, finishes;
	int prepared[NVM], aborts[NVM], restores[NVM];
	bool loaded;
	bool unloaded_behind;	/* someone ran kexec -u after preflight */
	bool disk_gone[3];	/* vm_facts: a disk the restore could not reopen */
	struct journal saved;	/* the last journal_save */
	int saves;
	char log[4096];
	/* vm_prepare runs on pool threads: what they share is under lock. */
	pthread_mutex_t lock;
	pthread_cond_t entered_cond;
	bool rendezvous;	/* each prepare waits until all NVM are in prepare */
	int entered, in_flight, max_in_flight;
	bool rendezvous_missed;	/* a prepare waited 10 s in vain: not parallel */
	bool saved_not_preparing;	/* a VM asked before the journal said so */
	unsigned int prepare_done[NVM + 1];	/* "done" of each prepare VM event */
	int nr_prepare_events;
};

static void logf_(struct fake *f, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	pthread_mutex_lock(&f->lock);
	n = strlen(f->log);
	va_start(ap, fmt);
	vsnprintf(f->log + n, sizeof(f->log) - n, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&f->lock);
}

static int idx(const struct fake *f, const struct journal_vm *vm)
{
	(void)f;
	return vm->name[2] - '0';	/* "vm0".."vm2" */
}

static int64_t f_now(void *c)
{
	struct fake *f = c;

	return f->t += MIB;	/* about a millisecond a call */
}

static int f_host_facts(void *c, const struct journal *j, struct host_facts *h,
			char *err, size_t len)
{
	struct fake *f = c;

	(void)j;
	logf_(f, "facts ");
	*h = f->host;
	if (f->host_err)
		snprintf(err, len, "initrd /boot/missing: No such file or directory");
	return f->host_err;
}

static void f_vm_facts(void *c, const struct journal_vm *vm, struct vm_facts *vf)
{
	struct fake *f = c;
	int i = idx(f, vm);

	if (f->unreachable[i]) {
		snprintf(vf->why, sizeof(vf->why), "connect: Connection refused");
		return;
	}
	vf->answered = true;
	if (f->disk_gone[i])
		snprintf(vf->disk_why, sizeof(vf->disk_why),
			 "disk /var/lib/kvmlu/vm%d.raw cannot be identified: No such file or directory", i);
	vf->preservable = !f->unpreservable[i];
	if (!vf->preservable)
		snprintf(vf->why, sizeof(vf->why), "memory backend hugetlb");
	vf->memory_bytes = 256 * MIB;
	vf->resident_known = !f->resident_unknown[i];
	vf->memory_resident = f->resident[i];
	snprintf(vf->folio, sizeof(vf->folio), "%s", f->small_pages[i] ? "4K" : "2M");
	snprintf(vf->state, sizeof(vf->state), "running");
}

static int f_allowed(void *c, char *err, size_t len)
{
	struct fake *f = c;

	logf_(f, "allowed ");
	if (f->allowed_err)
		snprintf(err, len, "kexec not allowed on this host");
	return f->allowed_err;
}

static int f_load(void *c, const struct journal *j, char *err, size_t len)
{
	struct fake *f = c;
	int e = f->loads++ == 0 ? f->load_err_trial : f->load_err_real;

	(void)j;
	logf_(f, "load ");
	if (e) {
		snprintf(err, len, "kexec_file_load: Exec format error");
		return e;
	}
	f->loaded = true;
	return 0;
}

static int f_unload(void *c, char *err, size_t len)
{
	struct fake *f = c;

	(void)err;
	(void)len;
	logf_(f, "unload ");
	f->unloads++;
	f->loaded = false;
	return 0;
}

static bool f_is_loaded(void *c)
{
	struct fake *f = c;

	logf_(f, "loaded? ");
	if (f->unloaded_behind)
		f->loaded = false;
	return f->loaded;
}

static int f_prepare(void *c, struct journal_vm *vm, char *err, size_t len)
{
	struct fake *f = c;
	int i = idx(f, vm);

	logf_(f, "prepare:%s ", vm->name);
	pthread_mutex_lock(&f->lock);
	/* Crash safety: the saved journal already says this VM may be paused. */
	if (f->saved.vms[i].state != JOURNAL_VM_PREPARING)
		f->saved_not_preparing = true;
	f->entered++;
	if (++f->in_flight > f->max_in_flight)
		f->max_in_flight = f->in_flight;
	pthread_cond_broadcast(&f->entered_cond);
	if (f->rendezvous) {
		struct timespec until;

		/* Not a timing assertion: 10 s only ends a wait that would never end. */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 10;
		while (f->entered < NVM && !f->rendezvous_missed)
			if (pthread_cond_timedwait(&f->entered_cond, &f->lock, &until))
				f->rendezvous_missed = true;
	}
	f->in_flight--;
	pthread_mutex_unlock(&f->lock);
	if (i == f->prepare_fail_at) {
		snprintf(err, len, "Timeout: vCPU 0 not stopped after 500 ms");
		return -EREMOTEIO;
	}
	f->prepared[i]++;
	snprintf(vm->session, sizeof(vm->session), "kvmlu/vm/%.50s", vm->name);
	snprintf(vm->checksum, sizeof(vm->checksum), "%032d", i + 1);
	return 0;
}

static int f_abort(void *c, struct journal_vm *vm, char *err, size_t len)
{
	struct fake *f = c;
	int i = idx(f, vm);

	logf_(f, "abort:%s ", vm->name);
	f->aborts[i]++;
	if (i == f->abort_fail_at) {
		snprintf(err, len, "Failed: resume: vCPU 0 did not start");
		return -EREMOTEIO;
	}
	if (i == f->gone_at) {
		snprintf(err, len, "connect /run/vm.sock: Connection refused");
		return -ECONNREFUSED;
	}
	return 0;
}

static int f_save(void *c, const struct journal *j)
{
	struct fake *f = c;

	pthread_mutex_lock(&f->lock);
	f->saved = *j;
	f->saves++;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static int f_preserve(void *c, const struct journal *j, char *err, size_t len)
{
	struct fake *f = c;

	logf_(f, "preserve ");
	/* The journal the next kernel reads is already in the kexec phase. */
	assert_int_equal(j->phase, UPDATE_KEXEC);
	for (unsigned int i = 0; i < j->nr_vms; i++)
		assert_int_equal(j->vms[i].state, JOURNAL_VM_PREPARED);
	f->preserves++;
	if (f->preserve_err)
		snprintf(err, len, "LUO CREATE_SESSION: No such device");
	return f->preserve_err;
}

static int f_marker_write(void *c, const struct journal *j, char *err, size_t len)
{
	struct fake *f = c;

	logf_(f, "mark ");
	f->markers++;
	for (unsigned int i = 0; i < j->nr_vms; i++)
		f->marker_vms += j->vms[i].state == JOURNAL_VM_PREPARED;
	if (f->marker_err)
		snprintf(err, len, "kexec marker /var/lib/kvmlu/history/kexec-pending: Read-only file system");
	return f->marker_err;
}

static void f_marker_clear(void *c)
{
	struct fake *f = c;

	logf_(f, "unmark ");
	f->marker_clears++;
}

static void f_discard(void *c)
{
	struct fake *f = c;

	logf_(f, "discard ");
	f->discards++;
}

static int f_jump(void *c, char *err, size_t len)
{
	struct fake *f = c;

	logf_(f, "jump ");
	f->jumps++;
	if (f->jump_err)
		snprintf(err, len, "reboot: Operation not permitted");
	return f->jump_err;
}

static int f_restore_wait(void *c, struct journal_vm *vm, char *err, size_t len)
{
	struct fake *f = c;

	logf_(f, "wait:%s ", vm->name);
	if (idx(f, vm) == f->lost_at) {
		snprintf(err, len, "kvmlu-vmm restore exited with signal 9: (log x)");
		return UPDATE_VM_LOST;
	}
	if (idx(f, vm) == f->missing_at) {
		snprintf(err, len, "session kvmlu/vm/%s is not in this kernel: nothing restored, nothing started in its place (log x)",
			 vm->name);
		return UPDATE_VM_MISSING;
	}
	if (idx(f, vm) == f->held_at) {
		snprintf(err, len, "held by kvmlu-vmm pid 42 (held): --serial /x/y: No such file");
		return UPDATE_VM_HELD;
	}
	return 0;
}

static int f_restore(void *c, struct journal_vm *vm, char *err, size_t len)
{
	struct fake *f = c;
	int i = idx(f, vm);

	logf_(f, "restore:%s ", vm->name);
	f->restores[i]++;
	if (i == f->restore_fail_at) {
		snprintf(err, len, "kvmlu-vmm restore exited with status 1");
		return -ECHILD;
	}
	return 0;
}

static int f_verify(void *c, struct journal_vm *vm, char *err, size_t len)
{
	struct fake *f = c;
	int i = idx(f, vm);

	(void)err;
	(void)len;
	logf_(f, "verify:%s ", vm->name);
	memcpy(vm->checksum_after, vm->checksum, sizeof(vm->checksum));
	if (f->bad_sum_after[i])
		vm->checksum_after[0] = 'f';
	return 0;
}

static void f_finish(void *c)
{
	struct fake *f = c;

	logf_(f, "finish ");
	f->finishes++;
}

static void f_event(void *c, const struct journal *j, enum update_event ev,
		    enum update_phase phase, const struct journal_vm *vm, unsigned int done)
{
	struct fake *f = c;

	(void)j;
	(void)vm;
	if (ev == UPDATE_EV_VM && phase == UPDATE_PREPARE && f->nr_prepare_events < NVM + 1)
		f->prepare_done[f->nr_prepare_events++] = done;
}

static struct agent_config cfg;

static struct update_ops ops_for(struct fake *f)
{
	return (struct update_ops){
		.ctx = f, .cfg = &cfg, .now_ns = f_now, .host_facts = f_host_facts,
		.vm_facts = f_vm_facts, .kexec_allowed = f_allowed, .kexec_load = f_load,
		.kexec_unload = f_unload, .kexec_is_loaded = f_is_loaded, .vm_prepare = f_prepare, .vm_abort = f_abort,
		.journal_save = f_save, .journal_preserve = f_preserve,
		.journal_discard = f_discard, .kexec_jump = f_jump, .vm_restore = f_restore,
		.vm_restore_start = f_restore, .vm_restore_wait = f_restore_wait,
		.vm_verify = f_verify, .journal_finish = f_finish, .event = f_event,
	};
}

struct tcase {
	struct fake f;
	struct journal j;
	struct update_ops ops;
};

static int setup(void **state)
{
	struct tcase *t = calloc(1, sizeof(*t));
	char err[128];

	agent_config_defaults(&cfg);
	t->f.t = T0;
	pthread_mutex_init(&t->f.lock, NULL);
	pthread_cond_init(&t->f.entered_cond, NULL);
	t->f.prepare_fail_at = t->f.restore_fail_at = t->f.abort_fail_at = t->f.held_at = -1;
	t->f.gone_at = t->f.lost_at = t->f.missing_at = -1;
	t->f.host = (struct host_facts){
		.liveupdate_dev = true, .kho_enabled = true, .scratch_bytes = 4096 * MIB,
		.mem_total = 8192 * MIB, .mem_available = 4096 * MIB,
		.kernel_bytes = 12 * MIB, .initrd_bytes = 30 * MIB,
	};
	journal_init(&t->j, T0);
	snprintf(t->j.kernel, sizeof(t->j.kernel), "/boot/vmlinuz");
	snprintf(t->j.cmdline, sizeof(t->j.cmdline), "console=ttyS0 kho=on liveupdate=on");
	for (int i = 0; i < NVM; i++) {
		char name[16], path[48];

		snprintf(name, sizeof(name), "vm%d", i);
		snprintf(path, sizeof(path), "/run/kvmlu/vms/%s.sock", name);
		assert_int_equal(journal_add_vm(&t->j, name, path, err, sizeof(err)), 0);
		t->f.resident[i] = 256 * MIB;	/* all of its RAM in memory */
	}
	t->ops = ops_for(&t->f);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tcase *t = *state;

	/* Checked for every test: no VM was asked before the journal said preparing. */
	assert_false(t->f.saved_not_preparing);
	pthread_cond_destroy(&t->f.entered_cond);
	pthread_mutex_destroy(&t->f.lock);
	free(*state);
	return 0;
}

static void assert_contains(const char *s, const char *needle)
{
	if (!strstr(s, needle))
		fail_msg("\"%s\" does not contain \"%s\"", s, needle);
}

static void assert_note(const struct tcase *t, const char *needle)
{
	for (unsigned int i = 0; i < t->j.nr_notes; i++)
		if (strstr(t->j.notes[i], needle))
			return;
	fail_msg("no note contains \"%s\"", needle);
}

static void assert_no_vm_touched(const struct tcase *t)
{
	for (int i = 0; i < NVM; i++) {
		assert_int_equal(t->f.prepared[i], 0);
		assert_int_equal(t->f.aborts[i], 0);
		assert_int_equal(t->j.vms[i].state, JOURNAL_VM_LISTED);
	}
	assert_false(t->f.loaded);
	assert_int_equal(t->f.jumps, 0);
}

static void test_machine_runs_phases_in_order_to_the_jump(void **state)
{
	struct tcase *t = *state;

	assert_int_equal(update_machine_run(&t->j, &t->ops), 0);
	/* The VMs are prepared in parallel: in any order, all between load and loaded?. */
	assert_int_equal(strncmp(t->f.log, "facts allowed load prepare:", 27), 0);
	assert_contains(t->f.log, "prepare:vm0 ");
	assert_contains(t->f.log, "prepare:vm1 ");
	assert_contains(t->f.log, "prepare:vm2 ");
	assert_int_equal(strlen(t->f.log),
			 strlen("facts allowed load ") + 3 * strlen("prepare:vm0 ") +
			 strlen("loaded? preserve allowed jump "));
	assert_string_equal(t->f.log + strlen(t->f.log) - strlen("loaded? preserve allowed jump "),
			    "loaded? preserve allowed jump ");
	/* Loaded once, in preflight, outside every VM's blackout. */
	assert_int_equal(t->f.loads, 1);
	assert_int_equal(t->f.unloads, 0);
	/* The scratch estimate is in the report even when it is ample. */
	assert_int_equal(t->j.nr_notes, 1);
	assert_contains(t->j.notes[0], "KHO scratch 4096 MiB, estimated need 193 MiB");
	assert_int_equal(t->j.outcome, UPDATE_RUNNING);
	assert_int_equal(t->j.phase, UPDATE_KEXEC);
	for (int i = 0; i < NVM; i++) {
		assert_int_equal(t->j.vms[i].state, JOURNAL_VM_PREPARED);
		assert_true(t->j.vms[i].prepared_ns > t->j.vms[i].paused_ns);
	}
	for (int p = UPDATE_PREFLIGHT; p < UPDATE_KEXEC; p++) {
		assert_true(t->j.phases[p].start_ns > 0);
		assert_true(t->j.phases[p].end_ns > t->j.phases[p].start_ns);
		assert_false(t->j.phases[p].failed);
	}
	assert_int_equal(t->j.phases[UPDATE_ROLLBACK].start_ns, 0);
	assert_true(t->f.loaded);
}

static void test_machine_dry_run_changes_nothing(void **state)
{
	struct tcase *t = *state;

	t->j.dry_run = true;
	/* A dry run never needs the permission to jump. */
	t->f.allowed_err = -EPERM;
	assert_int_equal(update_machine_run(&t->j, &t->ops), 0);
	assert_string_equal(t->f.log, "facts load unload ");
	assert_int_equal(t->j.outcome, UPDATE_DRY_RUN);
	assert_no_vm_touched(t);
	assert_int_equal(t->f.saved.outcome, UPDATE_DRY_RUN);
}

static void test_preflight_refuses_without_liveupdate_before_pausing(void **state)
{
	struct tcase *t = *state;

	t->f.host.liveupdate_dev = false;
	t->f.host.kho_enabled = false;
	snprintf(t->f.host.kho_why, sizeof(t->f.host.kho_why), "no kho=on");
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	assert_int_equal(t->j.outcome, UPDATE_REFUSED);
	assert_string_equal(t->j.failed_phase, "preflight");
	assert_contains(t->j.error, "no /dev/liveupdate");
	assert_contains(t->j.error, "KHO is off");
	assert_true(t->j.phases[UPDATE_PREFLIGHT].failed);
	/* Refused on the facts: not even the trial load happened. */
	assert_int_equal(t->f.loads, 0);
	assert_no_vm_touched(t);
}

static void test_preflight_refuses_cmdline_without_kho_and_liveupdate(void **state)
{
	struct tcase *t = *state;

	snprintf(t->j.cmdline, sizeof(t->j.cmdline), "console=ttyS0 xkho=on liveupdate=off");
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	assert_contains(t->j.error, "lacks kho=on");
	assert_contains(t->j.error, "lacks liveupdate=on");
	assert_no_vm_touched(t);
}

static void test_preflight_refuses_unreachable_and_unpreservable_vms(void **state)
{
	struct tcase *t = *state;

	t->f.unreachable[1] = true;
	t->f.unpreservable[2] = true;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	assert_contains(t->j.error, "VM vm1: its VMM (/run/kvmlu/vms/vm1.sock) does not answer");
	assert_contains(t->j.error, "VM vm2: cannot be preserved: memory backend hugetlb");
	assert_no_vm_touched(t);
}

static void test_preflight_refuses_a_vm_whose_disk_it_cannot_identify(void **state)
{
	struct tcase *t = *state;

	t->f.disk_gone[1] = true;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	assert_contains(t->j.error, "VM vm1: disk /var/lib/kvmlu/vm1.raw cannot be identified");
	assert_no_vm_touched(t);
}

static void test_preflight_refuses_small_scratch_with_numbers(void **state)
{
	struct tcase *t = *state;

	t->f.host.scratch_bytes = 64 * MIB;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	/* 8 GiB/64 + 768 MiB/512 + 4 * 12 MiB + 16 MiB = 193 MiB */
	assert_contains(t->j.error, "KHO scratch too small: 64 MiB");
	assert_contains(t->j.error, "estimated to need 193 MiB");
	assert_no_vm_touched(t);
}

static void test_preflight_warns_when_scratch_is_close(void **state)
{
	struct tcase *t = *state;

	t->f.host.scratch_bytes = 300 * MIB;
	t->j.dry_run = true;
	assert_int_equal(update_machine_run(&t->j, &t->ops), 0);
	assert_int_equal(t->j.nr_notes, 1);
	assert_contains(t->j.notes[0], "300 MiB is less than twice the estimated 193 MiB");
}

static void test_preflight_notes_vms_with_ram_in_small_pages(void **state)
{
	struct tcase *t = *state;

	t->f.small_pages[0] = t->f.small_pages[2] = true;
	t->j.dry_run = true;
	assert_int_equal(update_machine_run(&t->j, &t->ops), 0);
	/* A note, not a refusal: the scratch note, then this one, naming both. */
	assert_int_equal(t->j.nr_notes, 2);
	assert_contains(t->j.notes[1], "guest RAM in 4 KiB pages (vm0, vm2)");
	assert_contains(t->j.notes[1], "configs/kvmlu-thp.conf");
	assert_null(strstr(t->j.notes[1], "vm1"));
}

static void test_preflight_refuses_low_free_memory(void **state)
{
	struct tcase *t = *state;

	t->f.host.mem_available = 100 * MIB;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	/* kernel 12 + initrd 30 + 3 VM states + 64 min_free */
	assert_contains(t->j.error, "100 MiB available, 109 MiB needed");
	assert_no_vm_touched(t);
}

static void test_preflight_counts_guest_ram_not_in_memory_against_free_memory(void **state)
{
	struct tcase *t = *state;

	/* Preserving allocates the holes: 200 MiB of vm1's RAM, 56 of vm2's. */
	t->f.resident[1] = 56 * MIB;
	t->f.resident[2] = 200 * MIB;
	t->f.host.mem_available = 300 * MIB;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	/* kernel 12 + initrd 30 + 3 VM states + 64 min_free + 256 not in memory */
	assert_contains(t->j.error, "300 MiB available, 365 MiB needed: preserving allocates "
			"256 MiB of guest RAM not in memory now");
	assert_note(t, "preserving allocates guest RAM not in memory now: vm1 200 MiB, vm2 56 MiB");
	assert_no_vm_touched(t);
}

static void test_preflight_passes_when_free_memory_covers_ram_not_in_memory(void **state)
{
	struct tcase *t = *state;

	t->f.resident[1] = 56 * MIB;
	t->f.resident[2] = 200 * MIB;
	t->f.host.mem_available = 365 * MIB;
	t->j.dry_run = true;
	assert_int_equal(update_machine_run(&t->j, &t->ops), 0);
	assert_int_equal(t->j.outcome, UPDATE_DRY_RUN);
}

static void test_preflight_counts_all_ram_of_a_vm_that_does_not_report_residency(void **state)
{
	struct tcase *t = *state;

	t->f.resident_unknown[0] = true;
	t->f.resident[0] = 0;
	t->f.host.mem_available = 300 * MIB;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	assert_contains(t->j.error, "300 MiB available, 365 MiB needed: preserving allocates "
			"256 MiB");
	assert_note(t, "1 VM(s) did not report memory_resident: counting all 256 MiB");
	assert_no_vm_touched(t);
}

static void test_preflight_refuses_kernel_that_does_not_load(void **state)
{
	struct tcase *t = *state;

	t->f.load_err_trial = -ENOEXEC;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -ENOEXEC);
	assert_int_equal(t->j.outcome, UPDATE_REFUSED);
	assert_contains(t->j.error, "the new kernel does not load");
	assert_no_vm_touched(t);
}

static void test_preflight_refuses_missing_initrd(void **state)
{
	struct tcase *t = *state;

	t->f.host_err = -ENOENT;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -ENOENT);
	assert_int_equal(t->j.outcome, UPDATE_REFUSED);
	assert_contains(t->j.error, "initrd /boot/missing");
	assert_no_vm_touched(t);
}

static void test_preflight_refuses_when_kexec_not_allowed(void **state)
{
	struct tcase *t = *state;

	t->f.allowed_err = -EPERM;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	assert_contains(t->j.error, "kexec not allowed");
	assert_no_vm_touched(t);
}

static void assert_rolled_back(const struct tcase *t, const char *phase)
{
	assert_int_equal(t->j.outcome, UPDATE_ROLLED_BACK);
	assert_string_equal(t->j.failed_phase, phase);
	assert_int_equal(t->f.saved.outcome, UPDATE_ROLLED_BACK);
	assert_true(t->j.phases[UPDATE_ROLLBACK].end_ns > 0);
	assert_false(t->f.loaded);
	assert_int_equal(t->f.discards, t->f.preserves - (t->f.preserve_err ? 1 : 0));
}

static void test_prepare_failure_aborts_prepared_vms_newest_first(void **state)
{
	struct tcase *t = *state;

	/* One at a time: after vm1 fails, vm2 is never asked. */
	cfg.prepare_parallel = 1;
	t->f.prepare_fail_at = 1;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EREMOTEIO);
	assert_rolled_back(t, "prepare");
	assert_contains(t->j.error, "VM vm1: prepare-update failed: Timeout");
	/* vm1 may be half paused: it gets abort-update too; vm2 was never asked. */
	assert_contains(t->f.log, "prepare:vm1 abort:vm1 abort:vm0 ");
	assert_int_equal(t->f.aborts[0], 1);
	assert_int_equal(t->f.aborts[1], 1);
	assert_int_equal(t->f.aborts[2], 0);
	assert_int_equal(t->j.vms[0].state, JOURNAL_VM_ABORTED);
	assert_int_equal(t->j.vms[1].state, JOURNAL_VM_ABORTED);
	assert_int_equal(t->j.vms[2].state, JOURNAL_VM_LISTED);
	assert_true(journal_vm_blackout_ns(&t->j.vms[0]) > 0);
	assert_contains(t->j.vms[1].error, "prepare-update: Timeout");
	/* Only preflight's load happened, and the rollback undid it. */
	assert_int_equal(t->f.loads, 1);
	assert_int_equal(t->f.unloads, 1);
	assert_int_equal(t->f.jumps, 0);
}

static void test_prepare_runs_vms_at_once_and_one_failure_aborts_all(void **state)
{
	struct tcase *t = *state;

	/*
	 * Every prepare waits until all three are in prepare: one after the
	 * other would never get there (rendezvous_missed).
	 */
	t->f.rendezvous = true;
	t->f.prepare_fail_at = 1;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EREMOTEIO);
	assert_false(t->f.rendezvous_missed);
	assert_int_equal(t->f.max_in_flight, NVM);
	assert_rolled_back(t, "prepare");
	assert_contains(t->j.error, "VM vm1: prepare-update failed: Timeout");
	assert_int_equal(t->f.prepared[0], 1);
	assert_int_equal(t->f.prepared[2], 1);
	/* All three may be paused: all get abort-update, all run again. */
	for (int i = 0; i < NVM; i++) {
		assert_int_equal(t->f.aborts[i], 1);
		assert_int_equal(t->j.vms[i].state, JOURNAL_VM_ABORTED);
		assert_true(journal_vm_blackout_ns(&t->j.vms[i]) > 0);
		assert_int_equal(t->f.saved.vms[i].state, JOURNAL_VM_ABORTED);
	}
	assert_contains(t->f.log, "abort:vm2 abort:vm1 abort:vm0 ");
	/* What the VMs answered came back into the journal. */
	assert_string_equal(t->j.vms[2].session, "kvmlu/vm/vm2");
	assert_contains(t->j.vms[1].error, "prepare-update: Timeout");
	/* Progress counts finished VMs, whatever order they finish in. */
	assert_int_equal(t->f.nr_prepare_events, NVM);
	for (int i = 0; i < NVM; i++)
		assert_int_equal(t->f.prepare_done[i], (unsigned int)i + 1);
	assert_int_equal(t->f.jumps, 0);
}

static void test_prepare_parallel_is_bounded(void **state)
{
	struct tcase *t = *state;

	cfg.prepare_parallel = 2;
	assert_int_equal(update_machine_run(&t->j, &t->ops), 0);
	assert_true(t->f.max_in_flight <= 2);
	assert_int_equal(t->f.entered, NVM);
	for (int i = 0; i < NVM; i++)
		assert_int_equal(t->j.vms[i].state, JOURNAL_VM_PREPARED);
	assert_int_equal(t->f.nr_prepare_events, NVM);
	assert_int_equal(t->f.prepare_done[NVM - 1], NVM);
}

static void test_kernel_unloaded_behind_our_back_is_loaded_again(void **state)
{
	struct tcase *t = *state;

	t->f.unloaded_behind = true;
	assert_int_equal(update_machine_run(&t->j, &t->ops), 0);
	assert_contains(t->f.log, "loaded? load preserve");
	assert_int_equal(t->f.loads, 2);
	assert_contains(t->j.notes[t->j.nr_notes - 1], "loaded again");
}

static void test_load_failure_rolls_back_every_vm(void **state)
{
	struct tcase *t = *state;

	t->f.unloaded_behind = true;
	t->f.load_err_real = -ENOMEM;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -ENOMEM);
	assert_rolled_back(t, "load-kernel");
	for (int i = 0; i < NVM; i++)
		assert_int_equal(t->j.vms[i].state, JOURNAL_VM_ABORTED);
	assert_contains(t->f.log, "abort:vm2 abort:vm1 abort:vm0 ");
	assert_int_equal(t->f.preserves, 0);
}

static void test_journal_failure_rolls_back_and_unloads(void **state)
{
	struct tcase *t = *state;

	t->f.preserve_err = -ENODEV;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -ENODEV);
	assert_rolled_back(t, "store-journal");
	assert_contains(t->j.error, "journal into LUO: LUO CREATE_SESSION");
	assert_int_equal(t->f.discards, 0);
	assert_int_equal(t->f.unloads, 1);
	assert_int_equal(t->f.jumps, 0);
}

static void test_failed_jump_rolls_back_everything(void **state)
{
	struct tcase *t = *state;

	t->f.jump_err = -EPERM;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	assert_rolled_back(t, "kexec");
	assert_contains(t->f.log, "jump abort:vm2 abort:vm1 abort:vm0 discard unload ");
}

static void with_marker(struct tcase *t)
{
	t->ops.kexec_marker_write = f_marker_write;
	t->ops.kexec_marker_clear = f_marker_clear;
}

/* On disk before the journal goes into LUO, with every VM prepared; kept for the jump. */
static void test_marker_written_before_the_journal_and_kept_at_the_jump(void **state)
{
	struct tcase *t = *state;

	with_marker(t);
	assert_int_equal(update_machine_run(&t->j, &t->ops), 0);
	assert_contains(t->f.log, "loaded? mark preserve allowed jump ");
	assert_int_equal(t->f.markers, 1);
	assert_int_equal(t->f.marker_vms, NVM);
	assert_int_equal(t->f.marker_clears, 0);
}

/* No marker, no jump: nothing goes into LUO, every VM resumes. */
static void test_marker_not_written_rolls_back_before_the_journal(void **state)
{
	struct tcase *t = *state;

	with_marker(t);
	t->f.marker_err = -EROFS;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EROFS);
	assert_rolled_back(t, "store-journal");
	assert_contains(t->j.error, "kexec marker /var/lib/kvmlu/history/kexec-pending: Read-only");
	assert_int_equal(t->f.preserves, 0);
	assert_int_equal(t->f.jumps, 0);
	for (int i = 0; i < NVM; i++)
		assert_int_equal(t->j.vms[i].state, JOURNAL_VM_ABORTED);
}

static void test_failed_jump_clears_the_marker(void **state)
{
	struct tcase *t = *state;

	with_marker(t);
	t->f.jump_err = -EPERM;
	assert_int_equal(update_machine_run(&t->j, &t->ops), -EPERM);
	assert_rolled_back(t, "kexec");
	assert_contains(t->f.log, "mark preserve allowed jump abort:vm2 abort:vm1 abort:vm0 discard unmark unload ");
}

static void test_rollback_reports_vm_that_did_not_resume(void **state)
{
	struct tcase *t = *state;

	t->f.unloaded_behind = true;
	t->f.load_err_real = -ENOMEM;
	t->f.abort_fail_at = 0;
	update_machine_run(&t->j, &t->ops);
	assert_int_equal(t->j.outcome, UPDATE_ROLLED_BACK);
	assert_int_equal(t->j.vms[0].state, JOURNAL_VM_FAILED);
	assert_contains(t->j.vms[0].error, "abort-update failed");
	assert_int_equal(t->j.vms[1].state, JOURNAL_VM_ABORTED);
	assert_contains(t->j.notes[t->j.nr_notes - 1], "not every VM resumed");
}

/* A VMM killed mid-prepare took its VM with it: lost, and the others run on. */
static void test_rollback_reports_killed_vmm_lost(void **state)
{
	struct tcase *t = *state;

	t->f.unloaded_behind = true;
	t->f.load_err_real = -ENOMEM;
	t->f.gone_at = 1;
	update_machine_run(&t->j, &t->ops);
	assert_int_equal(t->j.outcome, UPDATE_ROLLED_BACK);
	assert_int_equal(t->j.vms[1].state, JOURNAL_VM_LOST);
	assert_string_equal(journal_vm_state_name(t->j.vms[1].state), "lost");
	assert_contains(t->j.vms[1].error, "its VMM is gone");
	assert_int_equal(t->j.vms[0].state, JOURNAL_VM_ABORTED);
	assert_int_equal(t->j.vms[2].state, JOURNAL_VM_ABORTED);
	assert_contains(t->j.notes[t->j.nr_notes - 1], "not every VM resumed");
}

static void test_recover_aborts_vms_a_dead_agent_paused(void **state)
{
	struct tcase *t = *state;

	t->j.phase = UPDATE_PREPARE;
	t->j.phases[UPDATE_PREPARE].start_ns = T0 + 5;
	t->j.vms[0].state = JOURNAL_VM_PREPARED;
	t->j.vms[1].state = JOURNAL_VM_PREPARING;
	assert_int_equal(update_machine_recover(&t->j, &t->ops), 0);
	assert_string_equal(t->f.log, "abort:vm1 abort:vm0 unload ");
	assert_int_equal(t->j.outcome, UPDATE_ROLLED_BACK);
	assert_string_equal(t->j.failed_phase, "prepare");
	assert_contains(t->j.error, "agent stopped during prepare");
	assert_true(t->j.phases[UPDATE_PREPARE].failed);
	assert_int_equal(t->j.vms[2].state, JOURNAL_VM_LISTED);
	/* Preflight loaded the kernel: the dead agent's load is undone too. */
	assert_int_equal(t->f.unloads, 1);
}

/* A dead agent's marker goes with its rollback: no jump followed it. */
static void test_recover_clears_a_dead_agents_marker(void **state)
{
	struct tcase *t = *state;

	with_marker(t);
	t->j.phase = UPDATE_KEXEC;
	t->j.phases[UPDATE_KEXEC].start_ns = T0 + 5;
	for (int i = 0; i < NVM; i++)
		t->j.vms[i].state = JOURNAL_VM_PREPARED;
	assert_int_equal(update_machine_recover(&t->j, &t->ops), 0);
	assert_string_equal(t->f.log, "abort:vm2 abort:vm1 abort:vm0 unmark unload ");
	assert_int_equal(t->j.outcome, UPDATE_ROLLED_BACK);
}

static void test_recover_leaves_finished_updates_alone(void **state)
{
	struct tcase *t = *state;

	t->j.outcome = UPDATE_DRY_RUN;
	assert_int_equal(update_machine_recover(&t->j, &t->ops), 0);
	assert_string_equal(t->f.log, "");
}

/* The journal as the next kernel reads it, from a real run to the jump. */
static void run_to_jump(struct tcase *t)
{
	assert_int_equal(update_machine_run(&t->j, &t->ops), 0);
	t->j = t->f.saved;
	t->j.phase = UPDATE_KEXEC;
	t->j.phases[UPDATE_KEXEC].start_ns = t->f.t;
	t->f.t += 4000 * MIB;	/* kexec and boot */
	t->f.log[0] = 0;
}

static void test_resume_restores_and_verifies_every_vm(void **state)
{
	struct tcase *t = *state;

	run_to_jump(t);
	assert_int_equal(update_machine_resume(&t->j, &t->ops), 0);
	/* Every restore starts before the first is waited for. */
	assert_string_equal(t->f.log, "restore:vm0 restore:vm1 restore:vm2 "
			    "wait:vm0 wait:vm1 wait:vm2 verify:vm0 verify:vm1 verify:vm2 finish ");
	assert_int_equal(t->j.outcome, UPDATE_DONE);
	for (int i = 0; i < NVM; i++) {
		assert_int_equal(t->j.vms[i].state, JOURNAL_VM_VERIFIED);
		/* The blackout spans the kexec and boot. */
		assert_true(journal_vm_blackout_ns(&t->j.vms[i]) > 4000 * (int64_t)MIB);
	}
	assert_true(t->j.phases[UPDATE_KEXEC].end_ns - t->j.phases[UPDATE_KEXEC].start_ns >=
		    4000 * (int64_t)MIB);
	assert_true(t->j.phases[UPDATE_VERIFY].end_ns > 0);
	assert_true(t->j.finished_ns > 0);
}

static void test_resume_without_split_restore_uses_vm_restore(void **state)
{
	struct tcase *t = *state;

	run_to_jump(t);
	t->ops.vm_restore_start = NULL;
	t->ops.vm_restore_wait = NULL;
	assert_int_equal(update_machine_resume(&t->j, &t->ops), 0);
	assert_string_equal(t->f.log, "restore:vm0 restore:vm1 restore:vm2 "
			    "verify:vm0 verify:vm1 verify:vm2 finish ");
}

static void test_resume_reports_checksum_mismatch_and_goes_on(void **state)
{
	struct tcase *t = *state;

	run_to_jump(t);
	t->f.bad_sum_after[1] = true;
	assert_int_equal(update_machine_resume(&t->j, &t->ops), -EIO);
	assert_int_equal(t->j.outcome, UPDATE_PARTIAL);
	assert_string_equal(t->j.failed_phase, "verify");
	assert_int_equal(t->j.vms[0].state, JOURNAL_VM_VERIFIED);
	assert_int_equal(t->j.vms[1].state, JOURNAL_VM_FAILED);
	assert_int_equal(t->j.vms[2].state, JOURNAL_VM_VERIFIED);
	assert_contains(t->j.vms[1].error, "memory checksum");
	assert_contains(t->j.error, "VM vm1");
	assert_int_equal(t->f.finishes, 1);
}

static void test_resume_reports_vm_that_does_not_restore(void **state)
{
	struct tcase *t = *state;

	run_to_jump(t);
	t->f.restore_fail_at = 0;
	assert_int_equal(update_machine_resume(&t->j, &t->ops), -EIO);
	assert_string_equal(t->j.failed_phase, "restore");
	assert_int_equal(t->j.vms[0].state, JOURNAL_VM_FAILED);
	assert_contains(t->j.vms[0].error, "restore: kvmlu-vmm restore exited");
	assert_int_equal(t->j.vms[1].state, JOURNAL_VM_VERIFIED);
	assert_int_equal(t->f.restores[2], 1);
	/* The VM that did not start is not waited for. */
	assert_null(strstr(t->f.log, "wait:vm0"));
}

static void test_resume_reports_held_vm_as_held_not_failed(void **state)
{
	struct tcase *t = *state;
	bool noted = false;

	run_to_jump(t);
	t->f.held_at = 1;
	assert_int_equal(update_machine_resume(&t->j, &t->ops), -EIO);
	assert_int_equal(t->j.outcome, UPDATE_PARTIAL);
	assert_string_equal(t->j.failed_phase, "restore");
	assert_int_equal(t->j.vms[1].state, JOURNAL_VM_HELD);
	assert_string_equal(journal_vm_state_name(t->j.vms[1].state), "held");
	assert_contains(t->j.vms[1].error, "restore: held by kvmlu-vmm");
	/* The held VM is not verified; the others are. */
	assert_null(strstr(t->f.log, "verify:vm1"));
	assert_int_equal(t->j.vms[0].state, JOURNAL_VM_VERIFIED);
	assert_int_equal(t->j.vms[2].state, JOURNAL_VM_VERIFIED);
	for (unsigned int i = 0; i < t->j.nr_notes; i++)
		noted |= strstr(t->j.notes[i], "1 VM(s) held, not lost") != NULL;
	assert_true(noted);
}

/* A restore that died after the kexec: that VM lost, the others verified. */
static void test_resume_reports_dead_restore_lost(void **state)
{
	struct tcase *t = *state;

	run_to_jump(t);
	t->f.lost_at = 2;
	assert_int_equal(update_machine_resume(&t->j, &t->ops), -EIO);
	assert_int_equal(t->j.outcome, UPDATE_PARTIAL);
	assert_int_equal(t->j.vms[2].state, JOURNAL_VM_LOST);
	assert_contains(t->j.vms[2].error, "restore: kvmlu-vmm restore exited with signal 9");
	assert_int_equal(t->j.vms[0].state, JOURNAL_VM_VERIFIED);
	assert_int_equal(t->j.vms[1].state, JOURNAL_VM_VERIFIED);
}

/*
 * A session the journal names that is not in the new kernel: that VM is
 * missing, with its session named; nothing else is tried for it (no
 * second restore, no verify, nothing started in its place), the outcome
 * is partial, not done, and the other VMs are restored and verified.
 */
static void test_resume_reports_missing_session_and_does_not_guess(void **state)
{
	struct tcase *t = *state;
	bool noted = false;

	run_to_jump(t);
	t->f.missing_at = 0;
	assert_int_equal(update_machine_resume(&t->j, &t->ops), -EIO);
	assert_int_equal(t->j.outcome, UPDATE_PARTIAL);
	assert_string_equal(t->j.failed_phase, "restore");
	assert_int_equal(t->j.vms[0].state, JOURNAL_VM_MISSING);
	assert_string_equal(journal_vm_state_name(t->j.vms[0].state), "missing");
	assert_contains(t->j.vms[0].error, "restore: session kvmlu/vm/vm0 is not in this kernel");
	assert_contains(t->j.error, "VM vm0: restore: session kvmlu/vm/vm0");
	/* One restore started for it, then nothing more: no retry, no verify. */
	assert_int_equal(t->f.restores[0], 1);
	assert_null(strstr(t->f.log, "verify:vm0"));
	assert_int_equal(journal_vm_blackout_ns(&t->j.vms[0]), -1);
	assert_int_equal(t->j.vms[0].checksum_after[0], 0);
	assert_int_equal(t->j.vms[1].state, JOURNAL_VM_VERIFIED);
	assert_int_equal(t->j.vms[2].state, JOURNAL_VM_VERIFIED);
	for (unsigned int i = 0; i < t->j.nr_notes; i++)
		noted |= strstr(t->j.notes[i], "1 VM(s) missing") != NULL;
	assert_true(noted);
	/* The agent's journal session is still released. */
	assert_int_equal(t->f.finishes, 1);
}

static void test_resume_refuses_journal_not_across_a_kexec(void **state)
{
	struct tcase *t = *state;

	t->j.phase = UPDATE_PREPARE;
	assert_int_equal(update_machine_resume(&t->j, &t->ops), -EINVAL);
	assert_string_equal(t->f.log, "");
}

static void test_cmdline_tokens(void **state)
{
	(void)state;
	assert_true(preflight_cmdline_has("a kho=on b", "kho"));
	assert_true(preflight_cmdline_has("kho=1", "kho"));
	assert_true(preflight_cmdline_has("x\tliveupdate=y\n", "liveupdate"));
	assert_false(preflight_cmdline_has("xkho=on", "kho"));
	assert_false(preflight_cmdline_has("kho=off", "kho"));
	assert_false(preflight_cmdline_has("kho=onn", "kho"));
	assert_false(preflight_cmdline_has("kho", "kho"));
	assert_false(preflight_cmdline_has("", "kho"));
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_machine_runs_phases_in_order_to_the_jump),
		T(test_machine_dry_run_changes_nothing),
		T(test_preflight_refuses_without_liveupdate_before_pausing),
		T(test_preflight_refuses_cmdline_without_kho_and_liveupdate),
		T(test_preflight_refuses_unreachable_and_unpreservable_vms),
		T(test_preflight_refuses_a_vm_whose_disk_it_cannot_identify),
		T(test_preflight_refuses_small_scratch_with_numbers),
		T(test_preflight_warns_when_scratch_is_close),
		T(test_preflight_notes_vms_with_ram_in_small_pages),
		T(test_preflight_refuses_low_free_memory),
		T(test_preflight_counts_guest_ram_not_in_memory_against_free_memory),
		T(test_preflight_passes_when_free_memory_covers_ram_not_in_memory),
		T(test_preflight_counts_all_ram_of_a_vm_that_does_not_report_residency),
		T(test_preflight_refuses_kernel_that_does_not_load),
		T(test_preflight_refuses_missing_initrd),
		T(test_preflight_refuses_when_kexec_not_allowed),
		T(test_prepare_failure_aborts_prepared_vms_newest_first),
		T(test_prepare_runs_vms_at_once_and_one_failure_aborts_all),
		T(test_prepare_parallel_is_bounded),
		T(test_kernel_unloaded_behind_our_back_is_loaded_again),
		T(test_load_failure_rolls_back_every_vm),
		T(test_journal_failure_rolls_back_and_unloads),
		T(test_failed_jump_rolls_back_everything),
		T(test_marker_written_before_the_journal_and_kept_at_the_jump),
		T(test_marker_not_written_rolls_back_before_the_journal),
		T(test_failed_jump_clears_the_marker),
		T(test_rollback_reports_vm_that_did_not_resume),
		T(test_rollback_reports_killed_vmm_lost),
		T(test_resume_reports_dead_restore_lost),
		T(test_recover_aborts_vms_a_dead_agent_paused),
		T(test_recover_clears_a_dead_agents_marker),
		T(test_recover_leaves_finished_updates_alone),
		T(test_resume_restores_and_verifies_every_vm),
		T(test_resume_without_split_restore_uses_vm_restore),
		T(test_resume_reports_checksum_mismatch_and_goes_on),
		T(test_resume_reports_vm_that_does_not_restore),
		T(test_resume_reports_held_vm_as_held_not_failed),
		T(test_resume_reports_missing_session_and_does_not_guess),
		T(test_resume_refuses_journal_not_across_a_kexec),
		cmocka_unit_test(test_cmdline_tokens),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
