// SPDX-License-Identifier: GPL-2.0
/* The restore's decision and the report of a lost journal (see restore_plan.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/update/restore_plan.h"

enum restore_plan restore_plan_decide(int journal_rc, int marker_rc)
{
	if (!journal_rc)
		return RESTORE_FROM_JOURNAL;
	if (marker_rc != -ENOENT)
		return RESTORE_REPORT_LOST;
	return journal_rc == -ENOENT ? RESTORE_NOTHING : RESTORE_JOURNAL_UNREADABLE;
}

static void add_unrestored(struct journal *j, const struct kexec_marker_vm *mv)
{
	struct journal_vm *vm = &j->vms[j->nr_vms++];

	memset(vm, 0, sizeof(*vm));
	memcpy(vm->name, mv->name, sizeof(vm->name));
	memcpy(vm->session, mv->session, sizeof(vm->session));
	memcpy(vm->control, mv->control, sizeof(vm->control));
	vm->state = JOURNAL_VM_UNRESTORED;
	/* The command that brings it back, if its session is there (the notes say more). */
	snprintf(vm->error, sizeof(vm->error),
		 "not restored (no journal); by hand: kvmlu-vmm restore --session %s --control %s",
		 mv->session, mv->control);
}

void restore_plan_lost_report(struct journal *j, const struct kexec_marker *m,
			      const char *marker_why, const char *journal_why, int64_t now_ns)
{
	struct journal_phase_time *kexec = &j->phases[UPDATE_KEXEC];

	journal_init(j, m && m->started_ns ? m->started_ns : now_ns);
	j->phase = UPDATE_KEXEC;
	kexec->start_ns = m ? m->marked_ns : 0;
	kexec->end_ns = now_ns;
	kexec->failed = true;
	snprintf(j->failed_phase, sizeof(j->failed_phase), "%s", update_phase_name(UPDATE_KEXEC));
	if (m) {
		memcpy(j->update_id, m->update_id, sizeof(j->update_id));
		memcpy(j->kernel, m->kernel, sizeof(j->kernel));
		for (unsigned int i = 0; i < m->nr_vms && i < JOURNAL_MAX_VMS; i++)
			add_unrestored(j, &m->vms[i]);
		snprintf(j->error, sizeof(j->error),
			 "the journal did not survive the kexec (%.380s): its %u VM(s) were not restored",
			 journal_why, m->nr_vms);
	} else {
		snprintf(j->error, sizeof(j->error),
			 "the journal did not survive the kexec (%.120s) and the kexec marker is unreadable (%.250s): which VMs the update had is not known",
			 journal_why, marker_why);
		journal_note(j, "the unreadable marker is kept as " KEXEC_MARKER_FILE ".unreadable in the history directory");
	}
	journal_note(j, "nothing restored, nothing started: only the journal vouches for a VM's session, and the agent does not guess");
	journal_note(j, "sessions the kernel kept (kvmlu/vm/<name>) stay held, memory included, until retrieved or the next reboot; none was checked: LUO cannot list them without taking them");
	journal_note(j, "to bring a VM back: kvmlu-vmm restore --session kvmlu/vm/<name> --control <its socket> (it checks the memory checksum); to let it go: reboot");
	j->outcome = UPDATE_FAILED;
	j->finished_ns = now_ns;
}
