// SPDX-License-Identifier: GPL-2.0
/* The host-update state machine: its steps and unhappy paths are in update_machine.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/update/update_machine.h"
#include "agent/update/vm_pool.h"

struct run {
	struct journal *j;
	const struct update_ops *ops;
	bool kernel_loaded;
	bool journal_preserved;
	unsigned int vms_done;	/* VM events in the current phase (progress) */
	char err[512];
};

/* A step returns 0 to go on, UPDATE_STOP to end early and well, or -errno. */
#define UPDATE_STOP 1

struct step {
	enum update_phase phase;
	int (*run)(struct run *r);
};

static int step_preflight(struct run *r);
static int step_prepare(struct run *r);
static int step_load_kernel(struct run *r);
static int step_store_journal(struct run *r);
static int step_kexec(struct run *r);
static int step_restore(struct run *r);
static int step_verify(struct run *r);

static const struct step before_kexec[] = {
	{ UPDATE_PREFLIGHT, step_preflight },
	{ UPDATE_PREPARE, step_prepare },
	{ UPDATE_LOAD_KERNEL, step_load_kernel },
	{ UPDATE_STORE_JOURNAL, step_store_journal },
	{ UPDATE_KEXEC, step_kexec },
};

static const struct step after_kexec[] = {
	{ UPDATE_RESTORE, step_restore },
	{ UPDATE_VERIFY, step_verify },
};

static int64_t now(const struct run *r)
{
	return r->ops->now_ns(r->ops->ctx);
}

static void save(const struct run *r)
{
	r->ops->journal_save(r->ops->ctx, r->j);
}

static void event(struct run *r, enum update_event ev, enum update_phase p,
		  const struct journal_vm *vm)
{
	if (ev == UPDATE_EV_VM)
		r->vms_done++;
	if (r->ops->event)
		r->ops->event(r->ops->ctx, r->j, ev, p, vm, r->vms_done);
}

static void phase_start(struct run *r, enum update_phase p)
{
	r->j->phase = p;
	r->j->phases[p].start_ns = now(r);
	r->j->phases[p].end_ns = 0;
	r->j->phases[p].failed = false;
	r->vms_done = 0;
	save(r);
	event(r, UPDATE_EV_PHASE_START, p, NULL);
}

static void phase_end(struct run *r, enum update_phase p, bool failed)
{
	r->j->phases[p].end_ns = now(r);
	r->j->phases[p].failed = failed;
	save(r);
	event(r, failed ? UPDATE_EV_PHASE_FAILED : UPDATE_EV_PHASE_END, p, NULL);
}

static int run_steps(struct run *r, const struct step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ret;

		phase_start(r, steps[i].phase);
		ret = steps[i].run(r);
		phase_end(r, steps[i].phase, ret < 0);
		if (ret)
			return ret;
	}
	return 0;
}

static void finish(struct run *r, enum update_outcome o)
{
	r->j->outcome = o;
	r->j->finished_ns = now(r);
	save(r);
}

/* ---- before the kexec ---- */

static int step_preflight(struct run *r)
{
	struct vm_facts vf[JOURNAL_MAX_VMS];
	struct host_facts h;
	char why[256], dwhy[sizeof(r->err)];
	size_t used;
	int ret;

	memset(&h, 0, sizeof(h));
	ret = r->ops->host_facts(r->ops->ctx, r->j, &h, r->err, sizeof(r->err));
	if (ret)
		return ret;
	for (unsigned int i = 0; i < r->j->nr_vms; i++) {
		memset(&vf[i], 0, sizeof(vf[i]));
		r->ops->vm_facts(r->ops->ctx, &r->j->vms[i], &vf[i]);
	}
	ret = preflight_evaluate(&h, vf, r->j, r->ops->cfg, r->err, sizeof(r->err));
	/* Each libvirt domain into the journal, with what would happen to its RAM. */
	if (r->ops->domains_preflight &&
	    r->ops->domains_preflight(r->ops->domains_ctx, r->j, dwhy, sizeof(dwhy))) {
		used = strlen(r->err);
		snprintf(r->err + used, sizeof(r->err) - used, "%s%s", used ? "; " : "", dwhy);
		ret = -EPERM;
	}
	/* A dry run never jumps, so only a real update needs the permission. */
	if (!r->j->dry_run && r->ops->kexec_allowed(r->ops->ctx, why, sizeof(why))) {
		used = strlen(r->err);
		snprintf(r->err + used, sizeof(r->err) - used, "%s%s", used ? "; " : "", why);
		ret = -EPERM;
	}
	if (ret)
		return ret;

	/* Loaded for real, so a kernel that does not load is refused here. */
	ret = r->ops->kexec_load(r->ops->ctx, r->j, why, sizeof(why));
	if (ret) {
		snprintf(r->err, sizeof(r->err), "the new kernel does not load: %s", why);
		return ret;
	}
	if (!r->j->dry_run) {
		r->kernel_loaded = true;
		return 0;
	}
	ret = r->ops->kexec_unload(r->ops->ctx, why, sizeof(why));
	if (ret) {
		snprintf(r->err, sizeof(r->err), "unloading the dry run's kernel: %s", why);
		return ret;
	}
	/* A dry run proves control of the libvirt domains: suspend, resume. */
	if (r->ops->domains_prepare) {
		ret = r->ops->domains_prepare(r->ops->domains_ctx, r->j, r->err, sizeof(r->err));
		if (ret)
			return ret;
	}
	return UPDATE_STOP;
}

/*
 * The VMs' prepare-update in parallel. Each VM's thread works on a copy
 * of its journal entry; the journal itself, its saves and the events are
 * only touched on this thread, in prepare_start and prepare_done.
 */
struct prepare_pool {
	struct run *r;
	struct journal_vm vm[JOURNAL_MAX_VMS];
	char why[JOURNAL_MAX_VMS][JOURNAL_TEXT_MAX];
};

static void prepare_start(void *arg, unsigned int i)
{
	struct prepare_pool *pp = arg;
	struct journal_vm *vm = &pp->r->j->vms[i];

	/* Saved before asking: from now on the VM may be paused. */
	vm->state = JOURNAL_VM_PREPARING;
	vm->paused_ns = now(pp->r);
	save(pp->r);
	pp->vm[i] = *vm;
}

static int prepare_work(void *arg, unsigned int i)
{
	struct prepare_pool *pp = arg;
	const struct update_ops *ops = pp->r->ops;

	return ops->vm_prepare(ops->ctx, &pp->vm[i], pp->why[i], sizeof(pp->why[i]));
}

static void prepare_done(void *arg, unsigned int i, int ret)
{
	struct prepare_pool *pp = arg;
	struct run *r = pp->r;
	struct journal_vm *vm = &r->j->vms[i];

	/* What the VMM answered (session, checksum, its own pause time). */
	*vm = pp->vm[i];
	if (ret) {
		if (!pp->why[i][0])	/* no thread for it: vm_prepare never ran */
			snprintf(pp->why[i], sizeof(pp->why[i]), "%s", strerror(-ret));
		/* Still preparing: the rollback sends it abort-update. */
		snprintf(vm->error, sizeof(vm->error), "prepare-update: %.200s", pp->why[i]);
		if (!r->err[0])
			snprintf(r->err, sizeof(r->err), "VM %s: prepare-update failed: %s",
				 vm->name, pp->why[i]);
		save(r);
		event(r, UPDATE_EV_VM, UPDATE_PREPARE, vm);
		return;
	}
	vm->prepared_ns = now(r);
	vm->state = JOURNAL_VM_PREPARED;
	save(r);
	event(r, UPDATE_EV_VM, UPDATE_PREPARE, vm);
}

static int step_prepare(struct run *r)
{
	static const struct vm_pool_ops pool_ops = {
		.start = prepare_start, .work = prepare_work, .done = prepare_done,
	};
	struct prepare_pool *pp;
	int ret;

	/* First: a managed save takes seconds, the VMs should not wait paused. */
	if (r->ops->domains_prepare) {
		ret = r->ops->domains_prepare(r->ops->domains_ctx, r->j, r->err, sizeof(r->err));
		save(r);
		if (ret)
			return ret;
	}
	if (!r->j->nr_vms)
		return 0;
	pp = calloc(1, sizeof(*pp));
	if (!pp) {
		snprintf(r->err, sizeof(r->err), "prepare: out of memory for %u VMs", r->j->nr_vms);
		return -ENOMEM;
	}
	pp->r = r;
	r->err[0] = 0;
	ret = vm_pool_run(&pool_ops, pp, r->j->nr_vms, r->ops->cfg->prepare_parallel);
	if (ret && !r->err[0])
		snprintf(r->err, sizeof(r->err), "prepare: starting a thread: %s", strerror(-ret));
	free(pp);
	return ret;
}

static int step_load_kernel(struct run *r)
{
	char why[256];
	int ret;

	if (r->ops->kexec_is_loaded(r->ops->ctx))
		return 0;
	/* Unloaded behind our back since preflight (kexec -u): load again. */
	journal_note(r->j, "the kernel loaded in preflight was gone; loaded again");
	ret = r->ops->kexec_load(r->ops->ctx, r->j, why, sizeof(why));
	if (ret) {
		snprintf(r->err, sizeof(r->err), "kexec_file_load: %s", why);
		return ret;
	}
	r->kernel_loaded = true;
	return 0;
}

static int step_store_journal(struct run *r)
{
	struct journal *next = r->j;
	char why[256];
	int ret;

	/* On disk first: if the journal is lost in the jump, the marker still says so. */
	if (r->ops->kexec_marker_write) {
		ret = r->ops->kexec_marker_write(r->ops->ctx, next, why, sizeof(why));
		if (ret) {
			snprintf(r->err, sizeof(r->err), "%s", why);
			return ret;
		}
	}
	/*
	 * What the next kernel reads: the kexec phase already started, so its
	 * end (first thing after the boot) measures the jump and the boot.
	 */
	next->phases[UPDATE_STORE_JOURNAL].end_ns = now(r);
	next->phase = UPDATE_KEXEC;
	next->phases[UPDATE_KEXEC].start_ns = next->phases[UPDATE_STORE_JOURNAL].end_ns;
	ret = r->ops->journal_preserve(r->ops->ctx, next, why, sizeof(why));
	next->phase = UPDATE_STORE_JOURNAL;
	next->phases[UPDATE_KEXEC].start_ns = 0;
	if (ret) {
		snprintf(r->err, sizeof(r->err), "journal into LUO: %s", why);
		return ret;
	}
	r->journal_preserved = true;
	return 0;
}

static int step_kexec(struct run *r)
{
	char why[256];
	int ret;

	ret = r->ops->kexec_allowed(r->ops->ctx, why, sizeof(why));
	if (!ret)
		ret = r->ops->kexec_jump(r->ops->ctx, why, sizeof(why));
	if (ret)
		snprintf(r->err, sizeof(r->err), "kexec: %s", why);
	return ret;
}

/* Every VM that may be paused gets abort-update, newest first. */
static void rollback(struct run *r)
{
	char why[JOURNAL_TEXT_MAX];
	int rc;

	phase_start(r, UPDATE_ROLLBACK);
	for (unsigned int i = r->j->nr_vms; i-- > 0;) {
		struct journal_vm *vm = &r->j->vms[i];

		if (vm->state != JOURNAL_VM_PREPARING && vm->state != JOURNAL_VM_PREPARED)
			continue;
		rc = r->ops->vm_abort(r->ops->ctx, vm, why, sizeof(why));
		if (rc == -ECONNREFUSED || rc == -ENOENT) {
			vm->state = JOURNAL_VM_LOST;
			snprintf(vm->error, sizeof(vm->error), "its VMM is gone: %.200s", why);
		} else if (rc) {
			vm->state = JOURNAL_VM_FAILED;
			snprintf(vm->error, sizeof(vm->error), "abort-update failed: %.200s", why);
		} else {
			vm->state = JOURNAL_VM_ABORTED;
			vm->resumed_ns = now(r);
		}
		save(r);
		event(r, UPDATE_EV_VM, UPDATE_ROLLBACK, vm);
	}
	if (r->ops->domains_rollback &&
	    r->ops->domains_rollback(r->ops->domains_ctx, r->j, why, sizeof(why)))
		journal_note(r->j, "rollback: %.200s", why);
	if (r->journal_preserved)
		r->ops->journal_discard(r->ops->ctx);
	/* No jump: the next kernel must not report this update as lost in one. */
	if (r->ops->kexec_marker_clear)
		r->ops->kexec_marker_clear(r->ops->ctx);
	if (r->kernel_loaded)
		r->ops->kexec_unload(r->ops->ctx, why, sizeof(why));
	phase_end(r, UPDATE_ROLLBACK, false);
}

static bool any_vm_failed(const struct journal *j)
{
	for (unsigned int i = 0; i < j->nr_vms; i++)
		if (j->vms[i].state == JOURNAL_VM_FAILED || j->vms[i].state == JOURNAL_VM_LOST)
			return true;
	return false;
}

int update_machine_run(struct journal *j, const struct update_ops *ops)
{
	struct run r = { .j = j, .ops = ops };
	enum update_phase failed;
	int ret;

	ret = run_steps(&r, before_kexec, sizeof(before_kexec) / sizeof(before_kexec[0]));
	if (ret == UPDATE_STOP) {
		finish(&r, UPDATE_DRY_RUN);
		return 0;
	}
	if (ret == 0)
		return 0;	/* jumped; only a fake jump comes back here */

	failed = j->phase;
	snprintf(j->failed_phase, sizeof(j->failed_phase), "%s", update_phase_name(failed));
	snprintf(j->error, sizeof(j->error), "%s", r.err);
	if (failed == UPDATE_PREFLIGHT) {
		finish(&r, UPDATE_REFUSED);
		return ret;
	}
	rollback(&r);
	if (any_vm_failed(j))
		journal_note(j, "rollback: not every VM resumed, see the VM errors");
	finish(&r, UPDATE_ROLLED_BACK);
	return ret;
}

int update_machine_recover(struct journal *j, const struct update_ops *ops)
{
	struct run r = { .j = j, .ops = ops };

	if (j->outcome != UPDATE_RUNNING)
		return 0;
	snprintf(j->failed_phase, sizeof(j->failed_phase), "%s", update_phase_name(j->phase));
	snprintf(j->error, sizeof(j->error),
		 "the agent stopped during %s; the next agent rolled back",
		 update_phase_name(j->phase));
	/* The dead agent's kernel load (from preflight on) outlives it; its LUO session does not. */
	r.kernel_loaded = !j->dry_run;
	if (j->phase < UPDATE_KEXEC && j->phases[j->phase].start_ns && !j->phases[j->phase].end_ns) {
		j->phases[j->phase].end_ns = now(&r);
		j->phases[j->phase].failed = true;
	}
	rollback(&r);
	/* The dead agent may have left libvirt domains in managed save. */
	if (ops->domains_restore &&
	    ops->domains_restore(ops->domains_ctx, j, r.err, sizeof(r.err)))
		journal_note(j, "recover: %.200s", r.err);
	finish(&r, UPDATE_ROLLED_BACK);
	return any_vm_failed(j) ? -EIO : 0;
}

/* ---- after the kexec ---- */

unsigned int update_domains_pending(const struct journal *j)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < j->nr_domains; i++)
		n += j->domains[i].state == LIBVIRT_DOMAIN_SAVED;
	return n;
}

/* What a VM is after vm_restore(_wait) returned rc. */
static enum journal_vm_state restored_state(int rc)
{
	switch (rc) {
	case 0:
		return JOURNAL_VM_RESTORED;
	case UPDATE_VM_HELD:
		return JOURNAL_VM_HELD;
	case UPDATE_VM_LOST:
		return JOURNAL_VM_LOST;
	case UPDATE_VM_MISSING:
		return JOURNAL_VM_MISSING;
	default:
		return JOURNAL_VM_FAILED;
	}
}

static int step_restore(struct run *r)
{
	char why[JOURNAL_TEXT_MAX];
	unsigned int failed = 0;
	int rc;

	for (unsigned int i = 0; i < r->j->nr_vms; i++) {
		struct journal_vm *vm = &r->j->vms[i];

		if (vm->state != JOURNAL_VM_PREPARED)
			continue;
		if (!r->ops->vm_restore_start)
			break;
		if (r->ops->vm_restore_start(r->ops->ctx, vm, why, sizeof(why))) {
			vm->state = JOURNAL_VM_FAILED;
			snprintf(vm->error, sizeof(vm->error), "restore: %.200s", why);
			failed++;
			save(r);
			event(r, UPDATE_EV_VM, UPDATE_RESTORE, vm);
		}
	}
	for (unsigned int i = 0; i < r->j->nr_vms; i++) {
		struct journal_vm *vm = &r->j->vms[i];

		if (vm->state != JOURNAL_VM_PREPARED)
			continue;
		rc = r->ops->vm_restore_wait ?
		     r->ops->vm_restore_wait(r->ops->ctx, vm, why, sizeof(why)) :
		     r->ops->vm_restore(r->ops->ctx, vm, why, sizeof(why));
		vm->state = restored_state(rc);
		if (rc) {
			snprintf(vm->error, sizeof(vm->error), "restore: %.200s", why);
			failed++;
		} else if (!vm->resumed_ns) {
			vm->resumed_ns = now(r);
		}
		save(r);
		event(r, UPDATE_EV_VM, UPDATE_RESTORE, vm);
	}
	if (failed)
		snprintf(r->err, sizeof(r->err), "%u VM(s) not restored", failed);
	/* The others still get verified: a failed VM does not stop the rest. */
	return 0;
}

static int step_verify(struct run *r)
{
	char why[JOURNAL_TEXT_MAX];

	for (unsigned int i = 0; i < r->j->nr_vms; i++) {
		struct journal_vm *vm = &r->j->vms[i];

		if (vm->state != JOURNAL_VM_RESTORED)
			continue;
		if (r->ops->vm_verify(r->ops->ctx, vm, why, sizeof(why))) {
			vm->state = JOURNAL_VM_FAILED;
			snprintf(vm->error, sizeof(vm->error), "verify: %.200s", why);
		} else if (vm->checksum[0] && strcmp(vm->checksum, vm->checksum_after)) {
			vm->state = JOURNAL_VM_FAILED;
			snprintf(why, sizeof(why), "memory checksum %s at pause, %s after restore",
				 vm->checksum, vm->checksum_after[0] ? vm->checksum_after : "none");
			memcpy(vm->error, why, sizeof(vm->error));
		} else {
			vm->state = JOURNAL_VM_VERIFIED;
		}
		save(r);
		event(r, UPDATE_EV_VM, UPDATE_VERIFY, vm);
	}
	return 0;
}

int update_machine_resume(struct journal *j, const struct update_ops *ops)
{
	struct run r = { .j = j, .ops = ops };
	unsigned int bad = 0, held = 0, missing = 0;
	bool restore_failed = false;
	unsigned int pending = update_domains_pending(j);

	if (j->phase != UPDATE_KEXEC || j->outcome != UPDATE_RUNNING) {
		snprintf(j->error, sizeof(j->error),
			 "journal is in phase %s, outcome %s: not an update across a kexec",
			 update_phase_name(j->phase), update_outcome_name(j->outcome));
		return -EINVAL;
	}
	j->phases[UPDATE_KEXEC].end_ns = now(&r);
	save(&r);
	run_steps(&r, after_kexec, sizeof(after_kexec) / sizeof(after_kexec[0]));
	ops->journal_finish(ops->ctx);
	if (pending)
		journal_note(j, "%u libvirt domain(s) pending: libvirtd does not run yet; kvmlu-agent.service starts them from their managed save once it does",
			     pending);

	for (unsigned int i = 0; i < j->nr_vms; i++)
		if (j->vms[i].state != JOURNAL_VM_VERIFIED) {
			held += j->vms[i].state == JOURNAL_VM_HELD;
			missing += j->vms[i].state == JOURNAL_VM_MISSING;
			if (!bad)
				snprintf(j->error, sizeof(j->error), "VM %s: %s", j->vms[i].name,
					 j->vms[i].error[0] ? j->vms[i].error :
					 journal_vm_state_name(j->vms[i].state));
			bad++;
			restore_failed |= !strncmp(j->vms[i].error, "restore:", 8);
		}
	if (bad) {
		snprintf(j->failed_phase, sizeof(j->failed_phase), "%s",
			 update_phase_name(restore_failed ? UPDATE_RESTORE : UPDATE_VERIFY));
		journal_note(j, "%u of %u VMs not restored and verified", bad, j->nr_vms);
		if (held)
			journal_note(j, "%u VM(s) held, not lost: paused, memory kept; fix the cause named, then resume them",
				     held);
		if (missing)
			journal_note(j, "%u VM(s) missing: the session the journal names was not in this kernel; nothing was restored or started in its place",
				     missing);
		j->phases[UPDATE_VERIFY].failed = true;
		finish(&r, UPDATE_PARTIAL);
		return -EIO;
	}
	/* Not finished while its libvirt domains wait: the outcome stays running. */
	if (pending) {
		save(&r);
		return 0;
	}
	finish(&r, UPDATE_DONE);
	return 0;
}
