// SPDX-License-Identifier: GPL-2.0
/*
 * `kvmlu report`: the last host updates from the agent's history, one
 * summary line each, then the newest in full. --json gives the journals,
 * oldest first, in a versioned document (cli_json.h).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/cli/cli_commands.h"
#include "agent/cli/cli_json.h"
#include "agent/journal/journal_json.h"
#include "agent/journal/journal_report.h"
#include "kvmlu/control_wire.h"

int cmd_report(const struct cli_args *a)
{
	struct json_object *ret = NULL, *extra = NULL, *list;
	struct journal *j;
	struct cli_conn c;
	char err[512];
	size_t n;
	int rc, status = 0;

	if (a->last) {
		extra = json_object_new_object();
		json_object_object_add(extra, KVMLU_ARG_LAST, json_object_new_int((int)a->last));
	}
	if (cli_conn_open(&c, a->socket)) {
		json_object_put(extra);
		return 3;
	}
	rc = cli_conn_call(&c, "report", extra, NULL, NULL, &ret);
	cli_conn_close(&c);
	json_object_put(extra);
	if (rc)
		return rc == -EREMOTEIO ? 1 : 3;
	list = json_object_object_get(ret, KVMLU_KEY_UPDATES);
	if (!json_object_is_type(list, json_type_array)) {
		fprintf(stderr, "kvmlu: report: the agent's answer has no \"updates\" list\n");
		json_object_put(ret);
		return 3;
	}
	n = json_object_array_length(list);
	if (a->json) {
		cli_json_print(cli_json_report(list), stdout);
		json_object_put(ret);
		return 0;
	}
	if (!n)
		printf("no host updates in the history\n");
	j = calloc(1, sizeof(*j));
	for (size_t i = 0; j && i < n; i++) {
		if (journal_from_json(json_object_array_get_idx(list, i), j, err, sizeof(err))) {
			fprintf(stderr, "kvmlu: report %zu: %s\n", i, err);
			status = 3;
			continue;
		}
		if (i + 1 < n)
			report_format_summary(j, stdout);
		else
			report_format_text(j, stdout);
	}
	free(j);
	json_object_put(ret);
	return status;
}
