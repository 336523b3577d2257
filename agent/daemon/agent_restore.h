/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `kvmlu-agent --restore` after the journal was looked for in LUO: reads
 * the kexec marker, decides (restore_plan.h), restores or reports, writes
 * the history and removes the marker whatever the outcome (an unreadable
 * one is set aside). The caller retrieved the journal, so that tests can
 * run this with any retrieval result and fake operations.
 */
#ifndef KVMLU_AGENT_RESTORE_H
#define KVMLU_AGENT_RESTORE_H

#include <stdio.h>

#include "agent/config/agent_config.h"
#include "agent/journal/journal.h"
#include "agent/update/update_machine.h"

/*
 * journal_rc: 0 (j holds the journal), -ENOENT (none in LUO) or another
 * -errno (journal_why says why). The report goes to out, errors to
 * stderr. Returns the exit status: 0 nothing to restore or every VM
 * back, 1 otherwise (a VM not back, a journal lost or unreadable).
 */
int agent_restore(const struct agent_config *cfg, const struct update_ops *ops,
		  int journal_rc, struct journal *j, const char *journal_why, FILE *out);

/*
 * kvmlu-agent.service at start, ordered after libvirtd: the libvirt
 * domains a kexec left in managed save, which `--restore` (run before
 * libvirtd) reported pending. If the domains provider has some
 * (ops->domains_pending), they are started (ops->domains_restore, which
 * waits for libvirtd) and the history entry of their update (the newest
 * with a pending domain) is rewritten: each domain restored, failed with
 * why, or still pending with how to bring it back; the outcome done, or
 * partial. Returns 0 when none was pending or every one runs, else 1.
 */
int agent_restore_domains(const struct agent_config *cfg, const struct update_ops *ops, FILE *out);

#endif /* KVMLU_AGENT_RESTORE_H */
