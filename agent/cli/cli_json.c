// SPDX-License-Identifier: GPL-2.0
/* The CLI's versioned JSON documents (see cli_json.h). */
#include <json-c/json.h>

#include "agent/cli/cli_json.h"

static struct json_object *doc_new(const char *kind)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "kvmlu", json_object_new_string(kind));
	json_object_object_add(o, "version", json_object_new_int(CLI_JSON_VERSION));
	return o;
}

struct json_object *cli_json_host_update(const char *outcome, const char *update_id,
					 bool dry_run, struct json_object *report)
{
	struct json_object *o = doc_new("host-update");

	if (!o)
		return NULL;
	json_object_object_add(o, "outcome", json_object_new_string(outcome));
	json_object_object_add(o, "update_id", json_object_new_string(update_id));
	json_object_object_add(o, "dry_run", json_object_new_boolean(dry_run));
	json_object_object_add(o, "report", report ? json_object_get(report) : NULL);
	return o;
}

struct json_object *cli_json_report(struct json_object *updates)
{
	struct json_object *o = doc_new("report");

	if (!o)
		return NULL;
	json_object_object_add(o, "updates", updates ? json_object_get(updates) :
			       json_object_new_array());
	return o;
}

void cli_json_print(struct json_object *doc, FILE *out)
{
	if (!doc)
		return;
	fprintf(out, "%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
}
