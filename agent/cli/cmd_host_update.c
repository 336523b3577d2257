// SPDX-License-Identifier: GPL-2.0
/*
 * `kvmlu host-update`: asks the agent to replace the host kernel and shows
 * the progress it streams. The paths are made absolute here because the
 * agent does not share the caller's working directory. If the connection
 * ends after the kexec phase started, the host is jumping: that is the
 * expected end of a real update, and the report is read after the boot.
 * --json prints one versioned document (cli_json.h) whenever the agent
 * answered or the host is jumping; otherwise nothing on stdout.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cli/cli_commands.h"
#include "agent/cli/cli_json.h"
#include "agent/cli/progress.h"
#include "agent/journal/journal_json.h"
#include "agent/journal/journal_report.h"
#include "kvmlu/control_wire.h"

static void on_event(void *arg, struct json_object *ev)
{
	progress_event(arg, ev);
}

static int add_path(struct json_object *req, const char *key, const char *path)
{
	char abs[PATH_MAX];

	if (!realpath(path, abs)) {
		fprintf(stderr, "kvmlu: host-update: --%s %s: %s\n", key, path, strerror(errno));
		return -errno;
	}
	json_object_object_add(req, key, json_object_new_string(abs));
	return 0;
}

int cmd_host_update(const struct cli_args *a)
{
	struct json_object *req, *ret = NULL, *rep;
	struct progress prog;
	struct cli_conn c;
	struct journal *j;
	char err[512];
	int rc, status = 3;

	req = json_object_new_object();
	if (add_path(req, KVMLU_ARG_KERNEL, a->kernel) ||
	    (a->initrd && add_path(req, KVMLU_ARG_INITRD, a->initrd))) {
		json_object_put(req);
		return 1;
	}
	if (a->append)
		json_object_object_add(req, KVMLU_ARG_APPEND, json_object_new_string(a->append));
	json_object_object_add(req, KVMLU_ARG_DRY_RUN, json_object_new_boolean(a->dry_run));
	if (cli_conn_open(&c, a->socket)) {
		json_object_put(req);
		return 3;
	}
	/* --json: only the report, as JSON, for programs. */
	progress_init(&prog, a->json ? fopen("/dev/null", "w") : stdout,
		      !a->json && isatty(STDOUT_FILENO));
	rc = cli_conn_call(&c, "host-update", req, on_event, &prog, &ret);
	progress_close(&prog);
	json_object_put(req);
	if (rc == -EPIPE && !strcmp(prog.last_phase, "kexec")) {
		if (a->json)
			cli_json_print(cli_json_host_update(CLI_JSON_OUTCOME_KEXEC, prog.update_id,
							    a->dry_run, NULL), stdout);
		else
			printf("the host is booting the new kernel; after the boot run `kvmlu report`\n");
		status = 0;
		goto out;
	}
	if (rc) {
		status = rc == -EREMOTEIO ? 1 : 3;
		goto out;
	}
	j = calloc(1, sizeof(*j));
	if (!j || !json_object_object_get_ex(ret, KVMLU_KEY_REPORT, &rep) ||
	    journal_from_json(rep, j, err, sizeof(err))) {
		fprintf(stderr, "kvmlu: host-update: the agent's report does not parse: %s\n",
			j ? err : "out of memory");
		free(j);
		goto out;
	}
	if (a->json)
		cli_json_print(cli_json_host_update(update_outcome_name(j->outcome), j->update_id,
						    j->dry_run, rep), stdout);
	else
		report_format_text(j, stdout);
	status = j->outcome == UPDATE_DONE || j->outcome == UPDATE_DRY_RUN ||
		 j->outcome == UPDATE_RUNNING ? 0 : 1;
	free(j);
out:
	if (a->json && prog.out)
		fclose(prog.out);
	json_object_put(ret);
	cli_conn_close(&c);
	return status;
}
