/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host-update state machine. Every side effect (VMM requests, kexec,
 * LUO, clocks, progress output) goes through struct update_ops, so the
 * same machine runs in the agent (update_ops_host.c) and against fakes in
 * the unit tests. Its steps, all in update_machine.c:
 *
 *   before the kexec (update_machine_run)
 *     preflight      facts about the host and every VM, judged; then
 *                    kexec_file_load of the new kernel, for real. A dry
 *                    run unloads it and stops here. Nothing paused yet.
 *     prepare        prepare-update of every VM at once (vm_pool.h, at
 *                    most cfg->prepare_parallel at a time, so the first
 *                    VMs do not wait paused for the last): each pauses,
 *                    captures its state, puts its files into its LUO
 *                    session and waits paused. After the first failure no
 *                    further VM is asked; those asked are all rolled back.
 *     load-kernel    the kernel loaded in preflight is still loaded (it
 *                    is loaded again if not): loading it here would add
 *                    its time to every VM's blackout. KHO places kexec
 *                    segments in scratch memory, so loading before the
 *                    sessions exist is safe.
 *     store-journal  the journal into the agent's own LUO session.
 *     kexec          reboot(LINUX_REBOOT_CMD_KEXEC): the point of no return.
 *   after the kexec (update_machine_resume, run by `kvmlu-agent --restore`)
 *     restore        `kvmlu-vmm restore --session` of every prepared VM,
 *                    all started before the first is waited for, so no VM
 *                    waits for another's restore.
 *     verify         every VM runs and its memory checksum is the one
 *                    recorded at pause.
 *   libvirt domains saved before the kexec are not started here: the
 *   restore runs before libvirtd (kvmlu-restore.service), so they stay
 *   pending in the journal and the outcome running, until kvmlu-agent.service
 *   (after libvirtd) starts them and amends the report (agent_restore.h).
 *
 * Unhappy paths:
 *   1. preflight refuses: outcome refused, nothing changed.
 *   2. any step after preflight and before the jump fails (a VM that does
 *      not prepare, a kernel that does not load, the journal not stored, the
 *      jump refused): rollback — abort-update of every VM that may be paused,
 *      newest first, the journal session dropped, the kernel unloaded.
 *      Outcome rolled-back, with the failed phase and its error.
 *   3. the agent dies before the jump: the next agent finds the journal in
 *      state_dir and runs update_machine_recover(), the same rollback.
 *   4. after the kexec a VM does not restore or verify: it is reported
 *      held (its VMM keeps it paused), lost (its VMM died with it), missing
 *      (its session is not in this kernel: nothing is started in its
 *      place, no cause is claimed) or failed; the others go on; outcome
 *      partial.
 *
 * The journal is saved after every change, so at any moment it says which
 * VMs may be paused.
 */
#ifndef KVMLU_UPDATE_MACHINE_H
#define KVMLU_UPDATE_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config/agent_config.h"
#include "agent/journal/journal.h"
#include "agent/update/preflight.h"

enum update_event {
	UPDATE_EV_PHASE_START,
	UPDATE_EV_PHASE_END,
	UPDATE_EV_PHASE_FAILED,
	UPDATE_EV_VM,		/* one VM done within the phase (vm set) */
};

/* What vm_restore and vm_restore_wait return for a held VM, for one
 * whose restoring VMM died (the VM is gone), and for one whose session
 * is not in this kernel (nothing was taken). */
#define UPDATE_VM_HELD		1
#define UPDATE_VM_LOST		2
#define UPDATE_VM_MISSING	3

/* Each op returns 0 or -errno with the message in err. */
struct update_ops {
	void *ctx;
	const struct agent_config *cfg;	/* limits preflight applies */
	int64_t (*now_ns)(void *ctx);	/* CLOCK_REALTIME */
	int (*host_facts)(void *ctx, const struct journal *j, struct host_facts *h,
			  char *err, size_t errlen);
	/* `status` of one VMM; fills vf, returns 0 even if it did not answer. */
	void (*vm_facts)(void *ctx, const struct journal_vm *vm, struct vm_facts *vf);
	/* Belt and braces: may this agent ever jump? (kexec_image.h) */
	int (*kexec_allowed)(void *ctx, char *err, size_t errlen);
	int (*kexec_load)(void *ctx, const struct journal *j, char *err, size_t errlen);
	int (*kexec_unload)(void *ctx, char *err, size_t errlen);
	/* Is a kexec kernel loaded now (/sys/kernel/kexec_loaded)? */
	bool (*kexec_is_loaded)(void *ctx);
	/*
	 * prepare-update: fills vm->session and vm->checksum. Called from
	 * several threads at once, each with its own vm (a copy).
	 */
	int (*vm_prepare)(void *ctx, struct journal_vm *vm, char *err, size_t errlen);
	int (*vm_abort)(void *ctx, struct journal_vm *vm, char *err, size_t errlen);
	/* Copy in state_dir, after every change; failure is reported, not fatal. */
	int (*journal_save)(void *ctx, const struct journal *j);
	/*
	 * The kexec marker (agent/journal/kexec_marker.h): written on disk
	 * before the journal goes into LUO, so that a journal lost in the
	 * kexec is still reported after it; a failure to write it rolls the
	 * update back. Cleared by every rollback. Both NULL: no marker.
	 */
	int (*kexec_marker_write)(void *ctx, const struct journal *j, char *err, size_t errlen);
	void (*kexec_marker_clear)(void *ctx);
	int (*journal_preserve)(void *ctx, const struct journal *j, char *err, size_t errlen);
	void (*journal_discard)(void *ctx);
	/*
	 * vm_abort: -ECONNREFUSED or -ENOENT means the VMM is gone (killed
	 * mid-prepare: the kernel dropped its session with it): reported lost.
	 */
	/* Returns only if the jump failed. */
	int (*kexec_jump)(void *ctx, char *err, size_t errlen);
	/*
	 * New kernel: start `kvmlu-vmm restore`, wait until it answers.
	 * UPDATE_VM_HELD (> 0): the VM is not running but not lost (held by
	 * its VMM, or its session still in the kernel); UPDATE_VM_LOST, its
	 * restoring VMM died; UPDATE_VM_MISSING, no session of that name in
	 * this kernel. err says why.
	 */
	int (*vm_restore)(void *ctx, struct journal_vm *vm, char *err, size_t errlen);
	/*
	 * The same in two halves (both or neither; NULL: vm_restore is used):
	 * every VM's restore is started before the first is waited for, so
	 * no VM's blackout includes another's restore.
	 */
	int (*vm_restore_start)(void *ctx, struct journal_vm *vm, char *err, size_t errlen);
	int (*vm_restore_wait)(void *ctx, struct journal_vm *vm, char *err, size_t errlen);
	/* New kernel: running, checksum_after filled. */
	int (*vm_verify)(void *ctx, struct journal_vm *vm, char *err, size_t errlen);
	/* New kernel: release the agent's own journal session. */
	void (*journal_finish)(void *ctx);
	/*
	 * libvirt domains (libvirt_update.h), with their own context;
	 * NULL: none. prepare runs before the VMs' (a dry run: suspend and
	 * resume at the end of preflight), rollback after the VMs' aborts,
	 * restore in recover and in agent_restore_domains (kvmlu-agent.service
	 * after libvirtd), never in update_machine_resume: that runs before
	 * libvirtd. pending: a kexec left saved domains to restore.
	 */
	void *domains_ctx;
	bool (*domains_pending)(void *dctx);
	/* In preflight: list them, touching nothing; nonzero refuses (libvirt_ram "refuse"). */
	int (*domains_preflight)(void *dctx, struct journal *j, char *err, size_t errlen);
	int (*domains_prepare)(void *dctx, struct journal *j, char *err, size_t errlen);
	int (*domains_rollback)(void *dctx, struct journal *j, char *err, size_t errlen);
	int (*domains_restore)(void *dctx, struct journal *j, char *err, size_t errlen);
	/*
	 * Progress; done counts the VM events of this phase so far (the VMs
	 * finish in any order when they are prepared in parallel).
	 */
	void (*event)(void *ctx, const struct journal *j, enum update_event ev,
		      enum update_phase phase, const struct journal_vm *vm, unsigned int done);
};

/*
 * Before the kexec: preflight → prepare → load-kernel → store-journal →
 * kexec. j holds the plan (kernel, initrd, cmdline, dry_run, VMs). Returns
 * 0 when the jump was made (in the agent it does not return then) or when
 * a dry run passed; -errno when refused or rolled back, with j->outcome,
 * j->failed_phase and j->error saying what happened.
 */
int update_machine_run(struct journal *j, const struct update_ops *ops);

/*
 * After the kexec, with the journal from the LUO session: restore →
 * verify. 0 if every VM came back verified, else -EIO (outcome partial).
 * libvirt domains saved before the kexec are left pending (libvirtd runs
 * later): with every VM verified the outcome stays running, with a note.
 */
int update_machine_resume(struct journal *j, const struct update_ops *ops);

/*
 * An agent that died mid-update before the kexec found j in state_dir:
 * abort every VM that may be paused. Outcome rolled-back.
 */
int update_machine_recover(struct journal *j, const struct update_ops *ops);

/* The journal's libvirt domains still in managed save, waiting to be started. */
unsigned int update_domains_pending(const struct journal *j);

#endif /* KVMLU_UPDATE_MACHINE_H */
