// SPDX-License-Identifier: GPL-2.0
/*
 * The control command table and the dispatcher (see commands.h). The
 * table is filled once, before any control server starts, by the owners
 * of the commands (vmm/main/vm_commands.c, vmm/upgrade/upgrade.c,
 * vmm/live_update/prepare.c), so this folder names nothing above it.
 *
 * Unhappy paths of one request, each answered with a class and nothing
 * run: a line that is not one JSON request (ParseError, InvalidRequest,
 * LineTooLong: common/json_line.c), a name no owner registered
 * (UnknownCommand), an args key the command does not accept
 * (InvalidRequest); then the gate, if any, may answer instead of the
 * handler (a held restore).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/json_line.h"
#include "vmm/control/commands.h"

/* Owners register a handful of tables; a fixed array keeps it lock-free. */
#define CONTROL_MAX_TABLES 8

static struct {
	const struct control_command *cmds;
	size_t n;
} control_tables[CONTROL_MAX_TABLES];
static size_t control_nr_tables;

const struct control_command *control_command_find(const char *name)
{
	size_t t, i;

	for (t = 0; t < control_nr_tables; t++)
		for (i = 0; i < control_tables[t].n; i++)
			if (!strcmp(control_tables[t].cmds[i].name, name))
				return &control_tables[t].cmds[i];
	return NULL;
}

int control_register(const struct control_command *cmds, size_t n)
{
	size_t t, i;

	for (t = 0; t < control_nr_tables; t++)
		if (control_tables[t].cmds == cmds)
			return 0;
	for (i = 0; i < n; i++)
		if (control_command_find(cmds[i].name))
			return -EEXIST;
	if (control_nr_tables == CONTROL_MAX_TABLES)
		return -ENOSPC;
	control_tables[control_nr_tables].cmds = cmds;
	control_tables[control_nr_tables].n = n;
	control_nr_tables++;
	return 0;
}

static int control_check_args(const struct control_command *c, json_object *args,
			      struct json_line_error *e)
{
	const char *const *k;
	bool known;

	if (!args)
		return 0;
	json_object_object_foreach(args, key, val) {
		known = false;
		for (k = c->args; k && *k; k++)
			if (!strcmp(*k, key))
				known = true;
		if (!known)
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "%s: unknown argument \"%.64s\"", c->name, key);
		(void)val;
	}
	return 0;
}

int control_line_peek(const char *line, size_t len, unsigned int *flags, const char **name,
		      json_object **id)
{
	struct json_line_request req;
	struct json_line_error e;
	const struct control_command *c;

	*id = NULL;
	if (json_line_request_parse(line, len, &req, &e)) {
		json_line_request_free(&req);
		return -EINVAL;
	}
	c = control_command_find(req.cmd);
	if (c) {
		*flags = c->flags;
		*name = c->name;
		*id = json_object_get(req.id);
	}
	json_line_request_free(&req);
	return c ? 0 : -EINVAL;
}

char *control_handle_line(struct control_ctx *ctx, const char *line, size_t len,
			  size_t *reply_len)
{
	struct json_line_request req;
	struct json_line_error e = { NULL, "" };
	const struct control_command *c;
	json_object *ret = NULL, *obj;
	char *reply;

	if (json_line_request_parse(line, len, &req, &e))
		goto err_reply;
	c = control_command_find(req.cmd);
	if (!c) {
		json_line_error_set(&e, KVMLU_ERR_UNKNOWN_CMD, "unknown command \"%s\"", req.cmd);
		goto err_reply;
	}
	if (control_check_args(c, req.args, &e))
		goto err_reply;
	switch (ctx->gate ? ctx->gate(ctx, c->name, req.args, &ret, &e) : CONTROL_GATE_PASS) {
	case CONTROL_GATE_PASS:
		break;
	case CONTROL_GATE_ANSWERED:
		goto ok_reply;
	default:
		json_object_put(ret);
		goto err_reply;
	}
	if (c->fn(ctx, req.args, &ret, &e)) {
		json_object_put(ret);
		goto err_reply;
	}
ok_reply:
	obj = json_line_reply_ok(ret, req.id);
	goto format;
err_reply:
	if (!e.class)
		json_line_error_set(&e, KVMLU_ERR_FAILED, "command failed");
	obj = json_line_reply_error(e.class, e.desc, req.id);
format:
	reply = obj ? json_line_format(obj, reply_len) : NULL;
	json_object_put(obj);
	json_line_request_free(&req);
	return reply;
}
