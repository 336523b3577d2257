/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON documents `kvmlu host-update --json` and `kvmlu report --json`
 * print: a stable interface for programs (Ansible, a control plane),
 * described in docs/agent.md, "JSON output". Each is one object with
 * "kvmlu" (which document) and "version" (of its form); within a version
 * keys are only ever added, so a reader ignores keys it does not know and
 * refuses a version it does not know.
 */
#ifndef KVMLU_CLI_JSON_H
#define KVMLU_CLI_JSON_H

#include <stdbool.h>
#include <stdio.h>

struct json_object;

#define CLI_JSON_VERSION	1
/* host-update's outcome when the connection ended in the kexec phase. */
#define CLI_JSON_OUTCOME_KEXEC	"kexec"

/*
 * {"kvmlu":"host-update","version":1,"outcome":...,"update_id":...,
 *  "dry_run":...,"report":REPORT or null}. REPORT (a journal's JSON, may
 * be NULL) gains a reference; the caller keeps its own. NULL: no memory.
 */
struct json_object *cli_json_host_update(const char *outcome, const char *update_id,
					 bool dry_run, struct json_object *report);

/* {"kvmlu":"report","version":1,"updates":UPDATES}, UPDATES as above. */
struct json_object *cli_json_report(struct json_object *updates);

/* One document on out, then a newline; drops the caller's reference. */
void cli_json_print(struct json_object *doc, FILE *out);

#endif /* KVMLU_CLI_JSON_H */
