/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The human-readable report of a host update, from its journal: outcome,
 * what failed, time per phase, blackout and checksums per VM, the libvirt domains with
 * their action, downtime and result, notes. The
 * JSON form is journal_to_json(). Used by `kvmlu report`, at the end of
 * `kvmlu host-update`, and by `kvmlu-agent --restore` for the journal it
 * finishes (agent/daemon/agent_restore.c), hence here with the journal,
 * below both.
 */
#ifndef KVMLU_JOURNAL_REPORT_H
#define KVMLU_JOURNAL_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "agent/journal/journal.h"

/* "12.3 ms", "1.25 s", "-" for a negative time. */
void report_duration(int64_t ns, char *buf, size_t len);

/* One line: id, outcome, VMs, total time (for lists of updates). */
void report_format_summary(const struct journal *j, FILE *out);

/* The full report. */
void report_format_text(const struct journal *j, FILE *out);

#endif /* KVMLU_JOURNAL_REPORT_H */
