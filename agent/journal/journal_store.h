/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where journals are kept:
 *   state_dir/journal.json    the update in progress, rewritten after every
 *                             change (atomic rename); gone when it ends.
 *   LUO session AGENT_JOURNAL_SESSION, token JOURNAL_STORE_TOKEN: a memfd
 *                             with the journal, preserved just before the
 *                             kexec; retrieved once by `kvmlu-agent
 *                             --restore` and finished when it is done.
 *   history_dir/<id>.json     every finished update, newest history_keep.
 * All three hold the checksummed envelope of journal_serialize().
 */
#ifndef KVMLU_JOURNAL_STORE_H
#define KVMLU_JOURNAL_STORE_H

#include <stddef.h>

#include "agent/journal/journal.h"
#include "common/luo_session.h"

/*
 * The agent's own session. luo_session_create() accepts only names
 * "kvmlu/vm/<VM name>", so the journal takes a VM name that the agent
 * reserves (journal_add_vm refuses a VM called so).
 */
#define AGENT_JOURNAL_SESSION	LUO_SESSION_VM_PREFIX JOURNAL_RESERVED_VM
#define JOURNAL_STORE_TOKEN	0x1ULL

int journal_store_save(const char *state_dir, const struct journal *j);
/* -ENOENT when there is none. */
int journal_store_load(const char *state_dir, struct journal *j, char *err, size_t errlen);
void journal_store_remove(const char *state_dir);

/* Outgoing: create the session, preserve a memfd holding j. s keeps it. */
int journal_store_preserve(struct luo_session *s, const struct journal *j,
			   char *err, size_t errlen);
/* Incoming: retrieve the session and read j. -ENOENT: no update came. */
int journal_store_retrieve(struct luo_session *s, struct journal *j,
			   char *err, size_t errlen);

int journal_store_history_add(const char *history_dir, unsigned int keep,
			      const struct journal *j, char *err, size_t errlen);
/*
 * The newest up to max journals, oldest first, into js (caller's array).
 * Files that do not parse are skipped and counted in *bad.
 */
int journal_store_history_list(const char *history_dir, struct journal *js,
			       unsigned int max, unsigned int *n, unsigned int *bad);


#endif /* KVMLU_JOURNAL_STORE_H */
