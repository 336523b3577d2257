/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The phases of a host update, in the order they run (update_machine.c
 * drives them), and the outcome an update ends with. The names are what
 * the CLI prints, the journal stores and the report shows: keep them
 * stable. Here, with the journal that records them, so that every layer
 * of the agent can name them (update/ is above journal/).
 */
#ifndef KVMLU_UPDATE_PHASE_H
#define KVMLU_UPDATE_PHASE_H

enum update_phase {
	UPDATE_PREFLIGHT,	/* checks; nothing paused, nothing loaded */
	UPDATE_PREPARE,		/* prepare-update of every VM */
	UPDATE_LOAD_KERNEL,	/* the kernel preflight loaded is still loaded */
	UPDATE_STORE_JOURNAL,	/* journal into the agent's LUO session */
	UPDATE_KEXEC,		/* reboot(LINUX_REBOOT_CMD_KEXEC) */
	UPDATE_RESTORE,		/* new kernel: kvmlu-vmm restore per VM */
	UPDATE_VERIFY,		/* new kernel: every VM runs, checksums match */
	UPDATE_ROLLBACK,	/* abort-update of prepared VMs, unload */
	UPDATE_NR_PHASES,
};

enum update_outcome {
	UPDATE_RUNNING,		/* not finished (or the agent died) */
	UPDATE_DONE,		/* every VM restored and verified */
	UPDATE_DRY_RUN,		/* preflight passed, nothing changed */
	UPDATE_REFUSED,		/* preflight refused, nothing changed */
	UPDATE_ROLLED_BACK,	/* failed before kexec, every VM resumed */
	UPDATE_PARTIAL,		/* after kexec, some VM not restored */
	/*
	 * After kexec, nothing restored: the journal did not come through
	 * (restore_plan.h). Kept last: the values before it are stable.
	 */
	UPDATE_FAILED,
	UPDATE_NR_OUTCOMES,
};

const char *update_phase_name(enum update_phase p);
/* -EINVAL for a name that is not a phase. */
int update_phase_parse(const char *name, enum update_phase *out);

const char *update_outcome_name(enum update_outcome o);
int update_outcome_parse(const char *name, enum update_outcome *out);

#endif /* KVMLU_UPDATE_PHASE_H */
