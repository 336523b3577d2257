// SPDX-License-Identifier: GPL-2.0
/*
 * `kvmlu domain-replace-qemu DOMAIN`: the agent restarts a running
 * libvirt domain on a new QEMU process with its RAM kept in place
 * (docs/libvirt.md). Prints what happened, or the agent's error, which
 * says what state the domain is in and how to go on.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>

#include "agent/cli/cli_commands.h"
#include "kvmlu/control_wire.h"

static const char *str(struct json_object *o, const char *key)
{
	const char *s = json_object_get_string(json_object_object_get(o, key));

	return s ? s : "-";
}

int cmd_replace_qemu(const struct cli_args *a)
{
	struct json_object *args, *ret = NULL;
	struct cli_conn c;
	int rc;

	if (cli_conn_open(&c, a->socket))
		return 3;
	args = json_object_new_object();
	json_object_object_add(args, KVMLU_ARG_DOMAIN, json_object_new_string(a->domain));
	rc = cli_conn_call(&c, KVMLU_CMD_REPLACE_QEMU, args, NULL, NULL, &ret);
	json_object_put(args);
	cli_conn_close(&c);
	if (rc)
		return rc == -EREMOTEIO ? 1 : 3;
	if (a->json) {
		printf("%s\n", json_object_to_json_string_ext(ret, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		printf("%s (%s): QEMU %s replaced by %s, RAM kept in place, %s\n",
		       str(ret, KVMLU_ARG_DOMAIN), str(ret, KVMLU_KEY_UUID),
		       str(ret, KVMLU_KEY_OLD_PID), str(ret, KVMLU_KEY_NEW_PID),
		       str(ret, KVMLU_KEY_STATE));
		printf("  RAM checksum %s at the pause, %s on the new QEMU; saved image %s bytes\n",
		       str(ret, KVMLU_KEY_CHECKSUM), str(ret, KVMLU_KEY_CHECKSUM_AFTER),
		       str(ret, KVMLU_KEY_IMAGE_BYTES));
	}
	json_object_put(ret);
	return 0;
}
