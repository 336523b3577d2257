// SPDX-License-Identifier: GPL-2.0
/*
 * `kvmlu vms`: every VM the agent found, as its VMM reports it, and the
 * libvirt domains the hook reported (kind column; their "control" column
 * shows the domain UUID).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "agent/cli/cli_commands.h"
#include "kvmlu/control_wire.h"

int cmd_vms(const struct cli_args *a)
{
	struct json_object *ret = NULL, *list;
	struct cli_conn c;
	int rc;

	if (cli_conn_open(&c, a->socket))
		return 3;
	rc = cli_conn_call(&c, "vms", NULL, NULL, NULL, &ret);
	cli_conn_close(&c);
	if (rc)
		return rc == -EREMOTEIO ? 1 : 3;
	if (a->json) {
		printf("%s\n", json_object_to_json_string_ext(ret, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(ret);
		return 0;
	}
	list = json_object_object_get(ret, KVMLU_KEY_VMS);
	printf("%-20s %-10s %-12s %10s %5s %-12s %s\n", "NAME", "KIND", "STATE", "MEMORY", "CPUS",
	       "BACKEND", "CONTROL/UUID");
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		struct json_object *vm = json_object_array_get_idx(list, i);
		long long mem = json_object_get_int64(json_object_object_get(vm, KVMLU_KEY_MEMORY_BYTES));
		long long cpus = json_object_get_int64(json_object_object_get(vm, KVMLU_KEY_CPUS));
		struct json_object *e = json_object_object_get(vm, KVMLU_KEY_ERROR);
		const char *kind = json_object_get_string(json_object_object_get(vm, KVMLU_KEY_KIND));
		char m[32] = "-", cp[24] = "-";

		if (kind && !strcmp(kind, "libvirt")) {
			printf("%-20s %-10s %-12s %10s %5s %-12s %s\n",
			       json_object_get_string(json_object_object_get(vm, KVMLU_KEY_NAME)), kind,
			       json_object_get_string(json_object_object_get(vm, KVMLU_KEY_STATE)), "-", "-",
			       "-", json_object_get_string(json_object_object_get(vm, KVMLU_KEY_UUID)));
			continue;
		}
		if (mem > 0)
			snprintf(m, sizeof(m), "%lldM", mem >> 20);
		if (cpus > 0)
			snprintf(cp, sizeof(cp), "%lld", cpus);
		printf("%-20s %-10s %-12s %10s %5s %-12s %s\n",
		       json_object_get_string(json_object_object_get(vm, KVMLU_KEY_NAME)), "kvmlu-vmm",
		       json_object_get_string(json_object_object_get(vm, KVMLU_KEY_STATE)), m, cp,
		       e ? "-" : json_object_get_string(json_object_object_get(vm, KVMLU_KEY_BACKEND)),
		       json_object_get_string(json_object_object_get(vm, KVMLU_KEY_CONTROL)));
		if (e)
			printf("  %s\n", json_object_get_string(e));
	}
	json_object_put(ret);
	return 0;
}
