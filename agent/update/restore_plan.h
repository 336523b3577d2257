/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `kvmlu-agent --restore` does, from what it found: the journal in
 * the agent's LUO session (the only thing that vouches for a VM's session)
 * and the kexec marker on disk (kexec_marker.h, which says an update was
 * jumping):
 *
 *   journal   marker            plan
 *   read      any               RESTORE_FROM_JOURNAL (no marker: an older agent)
 *   none      none              RESTORE_NOTHING: no update came
 *   none/bad  there/unreadable  RESTORE_REPORT_LOST: a failed update in the
 *                               history, nothing restored, exit nonzero
 *   bad       none              RESTORE_JOURNAL_UNREADABLE: error, nothing
 *                               touched, no history (nothing names the update)
 */
#ifndef KVMLU_RESTORE_PLAN_H
#define KVMLU_RESTORE_PLAN_H

#include <stdint.h>

#include "agent/journal/journal.h"
#include "agent/journal/kexec_marker.h"

enum restore_plan {
	RESTORE_NOTHING,
	RESTORE_FROM_JOURNAL,
	RESTORE_REPORT_LOST,
	RESTORE_JOURNAL_UNREADABLE,
};

/* journal_rc, marker_rc: 0 read, -ENOENT none, other -errno unreadable. */
enum restore_plan restore_plan_decide(int journal_rc, int marker_rc);

/*
 * The report of an update whose journal did not come through: the
 * marker's id, kernel and VMs (each unrestored, its error saying what is
 * left and how to bring it back), outcome failed in phase kexec. m is
 * NULL when the marker did not parse; then the update gets a new id and
 * marker_why says why. journal_why: what retrieving the journal said.
 */
void restore_plan_lost_report(struct journal *j, const struct kexec_marker *m,
			      const char *marker_why, const char *journal_why, int64_t now_ns);

#endif /* KVMLU_RESTORE_PLAN_H */
