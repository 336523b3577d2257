// SPDX-License-Identifier: GPL-2.0
/* `kvmlu status`: the agent, its configuration and any update running. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>

#include "agent/cli/cli_commands.h"
#include "kvmlu/control_wire.h"

static const char *s(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && v ? json_object_get_string(v) : "-";
}

int cmd_status(const struct cli_args *a)
{
	struct json_object *ret = NULL, *u;
	struct cli_conn c;
	int rc;

	if (cli_conn_open(&c, a->socket))
		return 3;
	rc = cli_conn_call(&c, "status", NULL, NULL, NULL, &ret);
	cli_conn_close(&c);
	if (rc)
		return rc == -EREMOTEIO ? 1 : 3;
	if (a->json) {
		printf("%s\n", json_object_to_json_string_ext(ret, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		printf("kvmlu-agent %s (pid %s) on %s\n", s(ret, KVMLU_KEY_VERSION), s(ret, KVMLU_KEY_PID),
		       s(ret, KVMLU_KEY_SOCKET));
		printf("  VMs: %s in %s\n", s(ret, KVMLU_KEY_VMS), s(ret, KVMLU_KEY_RUN_DIR));
		printf("  libvirt domains: %s reported by the hook, %s not stopped\n",
		       s(ret, KVMLU_KEY_LIBVIRT_DOMAINS), s(ret, KVMLU_KEY_LIBVIRT_ACTIVE));
		printf("  /dev/liveupdate: %s   kexec allowed: %s\n",
		       json_object_get_boolean(json_object_object_get(ret, KVMLU_KEY_LIVEUPDATE)) ? "yes" : "no",
		       json_object_get_boolean(json_object_object_get(ret, KVMLU_KEY_ALLOW_KEXEC)) ? "yes" : "no");
		u = json_object_object_get(ret, KVMLU_KEY_UPDATE);
		if (u)
			printf("  update %s running, phase %s\n", s(u, KVMLU_KEY_UPDATE_ID), s(u, KVMLU_KEY_PHASE));
		else
			printf("  no update running\n");
	}
	json_object_put(ret);
	return 0;
}
