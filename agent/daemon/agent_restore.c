// SPDX-License-Identifier: GPL-2.0
/*
 * The restore after a kexec, from the journal or from the marker alone,
 * and later the libvirt domains it left pending (agent_restore.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/daemon/agent_restore.h"
#include "agent/journal/journal_report.h"
#include "agent/journal/journal_store.h"
#include "agent/journal/kexec_marker.h"
#include "agent/update/restore_plan.h"

static int report_lost_journal(const struct agent_config *cfg, const struct update_ops *ops,
			       const struct kexec_marker *m, int marker_rc,
			       const char *marker_why, const char *journal_why, FILE *out)
{
	struct journal *j = calloc(1, sizeof(*j));
	char err[512];

	if (!j)
		return 1;
	if (marker_rc && kexec_marker_set_aside(cfg->history_dir))
		fprintf(stderr, "kvmlu-agent: could not set the unreadable kexec marker aside\n");
	restore_plan_lost_report(j, marker_rc ? NULL : m, marker_why, journal_why,
				 ops->now_ns(ops->ctx));
	/* The marker goes only once its report is in the history. */
	if (journal_store_history_add(cfg->history_dir, cfg->history_keep, j, err, sizeof(err)))
		fprintf(stderr, "kvmlu-agent: %s (the kexec marker is kept)\n", err);
	else if (!marker_rc && kexec_marker_remove(cfg->history_dir))
		fprintf(stderr, "kvmlu-agent: could not remove the kexec marker\n");
	/* The same update's copy in state_dir (if that is on disk) is superseded. */
	journal_store_remove(cfg->state_dir);
	report_format_text(j, out);
	fprintf(stderr, "kvmlu-agent: restore: update %s: %s; nothing restored (kvmlu report says what is left and what to do)\n",
		j->update_id, j->error);
	free(j);
	return 1;
}

static int restore_from_journal(const struct agent_config *cfg, const struct update_ops *ops,
				struct journal *j, const struct kexec_marker *m, int marker_rc,
				const char *marker_why, FILE *out)
{
	char err[512];
	int ret;

	if (marker_rc == -ENOENT) {
		/* An agent from before the marker jumped: restore as always. */
	} else if (marker_rc) {
		fprintf(stderr, "kvmlu-agent: %s (set aside; the journal is restored)\n", marker_why);
		journal_note(j, "the kexec marker was unreadable, kept as %s.unreadable: %.150s",
			     KEXEC_MARKER_FILE, marker_why);
		kexec_marker_set_aside(cfg->history_dir);
	} else if (strcmp(m->update_id, j->update_id)) {
		journal_note(j, "a kexec marker of another update (%s) was found and removed",
			     m->update_id);
	}
	ret = update_machine_resume(j, ops) ? 1 : 0;
	if (journal_store_history_add(cfg->history_dir, cfg->history_keep, j, err, sizeof(err)))
		fprintf(stderr, "kvmlu-agent: %s\n", err);
	if (!marker_rc && kexec_marker_remove(cfg->history_dir))
		fprintf(stderr, "kvmlu-agent: could not remove the kexec marker\n");
	journal_store_remove(cfg->state_dir);
	report_format_text(j, out);
	return ret;
}

int agent_restore(const struct agent_config *cfg, const struct update_ops *ops,
		  int journal_rc, struct journal *j, const char *journal_why, FILE *out)
{
	struct kexec_marker *m = calloc(1, sizeof(*m));
	char merr[512] = "";
	int ret, mret;

	if (!m)
		return 1;
	mret = kexec_marker_read(cfg->history_dir, m, merr, sizeof(merr));
	switch (restore_plan_decide(journal_rc, mret)) {
	case RESTORE_NOTHING:
		fprintf(out, "kvmlu-agent: no update journal in LUO and no kexec marker: nothing to restore\n");
		ret = 0;
		break;
	case RESTORE_JOURNAL_UNREADABLE:
		/*
		 * No VM is touched: their sessions stay in the kernel, and each
		 * can still be brought back by hand with `kvmlu-vmm restore`.
		 */
		fprintf(stderr, "kvmlu-agent: restore: %s\n", journal_why);
		ret = 1;
		break;
	case RESTORE_REPORT_LOST:
		if (mret)
			fprintf(stderr, "kvmlu-agent: %s\n", merr);
		ret = report_lost_journal(cfg, ops, m, mret, merr, journal_why, out);
		break;
	case RESTORE_FROM_JOURNAL:
	default:
		ret = restore_from_journal(cfg, ops, j, m, mret, merr, out);
		break;
	}
	free(m);
	return ret;
}

/* The history entries looked through for the update whose domains wait: it is the newest. */
#define PENDING_SCAN	4

static unsigned int domains_failed(const struct journal *j)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < j->nr_domains; i++)
		n += j->domains[i].state == LIBVIRT_DOMAIN_FAILED;
	return n;
}

/* Domains in state st whose RAM was kept in place (a LUO session, not the image). */
static unsigned int domains_in_place(const struct journal *j, enum libvirt_domain_state st)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < j->nr_domains; i++)
		n += j->domains[i].in_place && j->domains[i].state == st;
	return n;
}

static bool vms_all_verified(const struct journal *j)
{
	for (unsigned int i = 0; i < j->nr_vms; i++)
		if (j->vms[i].state != JOURNAL_VM_VERIFIED)
			return false;
	return true;
}

/*
 * The outcome once the domains were tried: an update whose VMs are all
 * verified (running, waiting for them; or partial for them only, at an
 * earlier try) is done or partial by its domains. One with a VM not back
 * stays partial for it.
 */
static void amend_outcome(struct journal *j, const struct update_ops *ops, int ret,
			  const char *why, unsigned int pending, unsigned int failed)
{
	if (j->outcome != UPDATE_RUNNING &&
	    !(j->outcome == UPDATE_PARTIAL && vms_all_verified(j)))
		return;
	j->finished_ns = ops->now_ns(ops->ctx);
	j->phases[UPDATE_RESTORE].failed = false;
	j->failed_phase[0] = 0;
	j->error[0] = 0;
	if (!ret && !pending && !failed) {
		j->outcome = UPDATE_DONE;
		return;
	}
	j->outcome = UPDATE_PARTIAL;
	j->phases[UPDATE_RESTORE].failed = true;
	snprintf(j->failed_phase, sizeof(j->failed_phase), "%s", update_phase_name(UPDATE_RESTORE));
	snprintf(j->error, sizeof(j->error), "libvirt domains not all restored: %u pending, %u failed%s%.400s",
		 pending, failed, why[0] ? ": " : "", why);
}

int agent_restore_domains(const struct agent_config *cfg, const struct update_ops *ops, FILE *out)
{
	unsigned int n = 0, bad = 0, before, pending, failed, restored;
	struct journal *js, *j = NULL;
	char err[512] = "", herr[512];
	bool in_history = true;
	int ret;

	if (!ops->domains_restore || !ops->domains_pending ||
	    !ops->domains_pending(ops->domains_ctx))
		return 0;
	js = calloc(PENDING_SCAN, sizeof(*js));
	if (!js)
		return 1;
	journal_store_history_list(cfg->history_dir, js, PENDING_SCAN, &n, &bad);
	for (unsigned int i = n; i-- > 0 && !j;)
		if (update_domains_pending(&js[i]))
			j = &js[i];
	if (!j) {
		/* Their update is not in the history (a recovered one, or pruned): restored all the same. */
		in_history = false;
		j = &js[0];
		memset(j, 0, sizeof(*j));
		journal_init(j, ops->now_ns(ops->ctx));
		j->outcome = UPDATE_DONE;
	}
	before = update_domains_pending(j);
	ret = ops->domains_restore(ops->domains_ctx, j, err, sizeof(err));
	pending = update_domains_pending(j);
	failed = domains_failed(j);
	restored = before > pending + failed ? before - pending - failed : 0;
	if (restored)
		journal_note(j, "%u libvirt domain(s) started from their managed save by kvmlu-agent.service, libvirtd running (%u with their RAM kept in place)",
			     restored, domains_in_place(j, LIBVIRT_DOMAIN_RESTORED));
	if (pending)
		journal_note(j, "%u libvirt domain(s) still pending (%.120s); their managed save images are kept: `virsh start NAME` restores one, or restart kvmlu-agent.service once libvirtd runs",
			     pending, ret ? err : "not started");
	/* Their image has no RAM: only the agent, from the session, can bring them back. */
	if (domains_in_place(j, LIBVIRT_DOMAIN_SAVED))
		journal_note(j, "%u of them kept their RAM in place: it waits in LUO session kvmlu/lv/<uuid>, untaken until libvirtd answers; restart kvmlu-agent.service once libvirtd runs (not `virsh start`: their managed save has no RAM, and its restore fails cleanly)",
			     domains_in_place(j, LIBVIRT_DOMAIN_SAVED));
	if (failed)
		journal_note(j, "%u libvirt domain(s) failed, see their errors; one whose managed save image remains starts from it with `virsh start NAME`",
			     failed);
	amend_outcome(j, ops, ret, ret ? err : "", pending, failed);
	if (in_history &&
	    journal_store_history_add(cfg->history_dir, cfg->history_keep, j, herr, sizeof(herr)))
		fprintf(stderr, "kvmlu-agent: %s\n", herr);
	fprintf(out, "kvmlu-agent: libvirt domains left by %s: %u pending, %u failed%s%s\n",
		in_history ? j->update_id : "an update not in the history", pending, failed,
		ret ? ": " : "", ret ? err : "");
	if (in_history)
		report_format_text(j, out);
	free(js);
	return ret || pending || failed ? 1 : 0;
}
