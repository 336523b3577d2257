// SPDX-License-Identifier: GPL-2.0
/*
 * The journal of one host update in memory (see journal.h): its id, its
 * VMs, notes and libvirt domains. Its JSON form is journal_json.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/journal/journal.h"
#include "common/err.h"
#include "common/luo_session.h"

static const char *const vm_state_names[JOURNAL_VM_NR_STATES] = {
	[JOURNAL_VM_LISTED] = "listed",
	[JOURNAL_VM_PREPARING] = "preparing",
	[JOURNAL_VM_PREPARED] = "prepared",
	[JOURNAL_VM_ABORTED] = "aborted",
	[JOURNAL_VM_RESTORED] = "restored",
	[JOURNAL_VM_VERIFIED] = "verified",
	[JOURNAL_VM_FAILED] = "failed",
	[JOURNAL_VM_HELD] = "held",
	[JOURNAL_VM_LOST] = "lost",
	[JOURNAL_VM_MISSING] = "missing",
	[JOURNAL_VM_UNRESTORED] = "unrestored",
};

const char *journal_vm_state_name(enum journal_vm_state s)
{
	return (unsigned int)s < JOURNAL_VM_NR_STATES ? vm_state_names[s] : "?";
}

int journal_vm_state_parse(const char *s, enum journal_vm_state *out)
{
	for (unsigned int i = 0; i < JOURNAL_VM_NR_STATES; i++)
		if (!strcmp(s, vm_state_names[i])) {
			*out = (enum journal_vm_state)i;
			return 0;
		}
	return -EINVAL;
}

void journal_init(struct journal *j, int64_t now_ns)
{
	time_t secs = (time_t)(now_ns / 1000000000);
	struct tm tm;

	static atomic_uint seq;

	memset(j, 0, sizeof(*j));
	gmtime_r(&secs, &tm);
	/*
	 * Sorts by time as text: the history is listed by file name. The
	 * sequence number keeps two updates in the same second apart (a
	 * refused one takes milliseconds); it would otherwise overwrite the
	 * other's report.
	 */
	snprintf(j->update_id, sizeof(j->update_id), "%04d%02d%02dT%02d%02d%02dZ-%d-%04u",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (int)getpid(), atomic_fetch_add(&seq, 1) % 10000);
	j->started_ns = now_ns;
	j->phase = UPDATE_PREFLIGHT;
	j->outcome = UPDATE_RUNNING;
}

int journal_add_vm(struct journal *j, const char *name, const char *control,
		   char *err, size_t errlen)
{
	char session[LUO_SESSION_NAME_SIZE];
	struct journal_vm *vm;
	int ret;

	if (j->nr_vms >= JOURNAL_MAX_VMS)
		return kvmlu_err(err, errlen, -ENOSPC, "VM %s: more than %d VMs",
				 name, JOURNAL_MAX_VMS);
	ret = luo_session_name_for_vm(name, session, err, errlen);
	if (ret)
		return ret;
	if (!strcmp(name, JOURNAL_RESERVED_VM))
		return kvmlu_err(err, errlen, -EINVAL,
				 "VM name '%s' is reserved for the agent's journal session", name);
	if (strlen(control) >= sizeof(vm->control))
		return kvmlu_err(err, errlen, -ENAMETOOLONG,
				 "VM %s: control socket path longer than %zu", name,
				 sizeof(vm->control) - 1);
	for (unsigned int i = 0; i < j->nr_vms; i++)
		if (!strcmp(j->vms[i].name, name))
			return kvmlu_err(err, errlen, -EEXIST,
					 "VM %s: two control sockets (%s, %s)", name,
					 j->vms[i].control, control);
	vm = &j->vms[j->nr_vms++];
	memset(vm, 0, sizeof(*vm));
	snprintf(vm->name, sizeof(vm->name), "%s", name);
	snprintf(vm->control, sizeof(vm->control), "%s", control);
	vm->state = JOURNAL_VM_LISTED;
	return 0;
}

void journal_note(struct journal *j, const char *fmt, ...)
{
	va_list ap;

	if (j->nr_notes >= JOURNAL_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(j->notes[j->nr_notes++], JOURNAL_TEXT_MAX, fmt, ap);
	va_end(ap);
}

void journal_set_domains(struct journal *j, const struct libvirt_domain_report *d,
			 unsigned int nr)
{
	if (nr > DOMAIN_REPORTS_MAX)
		nr = DOMAIN_REPORTS_MAX;
	memcpy(j->domains, d, nr * sizeof(*d));
	j->nr_domains = nr;
}

int64_t journal_vm_to_verified_ns(const struct journal_vm *vm)
{
	if (!vm->paused_ns || !vm->verified_ns || vm->verified_ns < vm->paused_ns)
		return -1;
	return vm->verified_ns - vm->paused_ns;
}

int64_t journal_vm_blackout_ns(const struct journal_vm *vm)
{
	if (!vm->paused_ns || !vm->resumed_ns || vm->resumed_ns < vm->paused_ns)
		return -1;
	return vm->resumed_ns - vm->paused_ns;
}
