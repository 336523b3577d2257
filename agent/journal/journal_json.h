/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The journal (journal.h) as JSON: the object `kvmlu report` shows and
 * the history keeps, and the envelope that crosses the kexec in the
 * agent's LUO session: {"kvmlu-journal":1,"xxh64":H,"body":"<JSON text>"},
 * H the XXH64 of the body text. Reading is strict: every key known, every
 * value of its type and in range, and the whole journal refused on the
 * first fault, because after a kexec it decides which VMs are restored.
 */
#ifndef KVMLU_JOURNAL_JSON_H
#define KVMLU_JOURNAL_JSON_H

#include <stddef.h>

#include "agent/journal/journal.h"

struct json_object;

/* The journal as a JSON object (a new reference), or NULL on ENOMEM. */
struct json_object *journal_to_json(const struct journal *j);

/* A JSON object back into a journal, every field checked; j untouched on error. */
int journal_from_json(struct json_object *obj, struct journal *j,
		      char *err, size_t errlen);

/* The envelope text (malloc'd, *len without the NUL). */
int journal_serialize(const struct journal *j, char **out, size_t *len);

/* Check the envelope and its XXH64, then the body; j untouched on error. */
int journal_parse(const char *buf, size_t len, struct journal *j,
		  char *err, size_t errlen);

#endif /* KVMLU_JOURNAL_JSON_H */
