/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Control commands: tables from name to handler, one handler per command,
 * each table owned and registered by the code the commands drive (the
 * VM's own in vmm/main/vm_commands.c, `upgrade` in vmm/upgrade/upgrade.c,
 * the host-update ones in vmm/live_update/prepare.c). To add a command:
 * write its handler in the file of the concept it drives and add a row
 * to that file's table, naming the args keys it accepts. The dispatcher
 * rejects unknown args keys before calling the handler, so a handler only
 * checks types and values. This folder includes nothing above it.
 *
 * Lifecycle: every table is registered once, from main(), before any
 * control server starts (the registry takes no lock). Short commands run
 * on the control server's thread. A CONTROL_CMD_LONG command runs on a
 * worker thread of its own, one at a time; while it runs, only commands
 * marked CONTROL_CMD_ANYTIME are answered (status, pause, ...), the rest
 * are refused with Busy, so nothing that would race it (a resume during
 * a checksum) runs and no client waits on another's long command.
 */
#ifndef KVMLU_CONTROL_COMMANDS_H
#define KVMLU_CONTROL_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "common/json_line.h"

struct vm;

/* What a handler may act on; grows as commands need more (upgrade state). */
struct control_ctx {
	struct vm *vm;
	unsigned int verify_timeout_ms;	/* guest-verify wait, default 10 s */
	/* Live upgrade (vmm/upgrade/upgrade.c): the socket it hands over, and whether it did. */
	int listen_fd;			/* the control server's, -1 if none */
	const char *control_path;
	bool handed_off;		/* set by upgrade: the server stops at once, keeps the path */
	/*
	 * Optional, asked before each well-formed command: 0 lets the table's
	 * handler run; CONTROL_GATE_ANSWERED means the gate answered (*ret, or
	 * e when it returns CONTROL_GATE_REFUSED). A restore that holds a VM
	 * it cannot run yet answers for it (vmm/live_update/hold.c).
	 */
	int (*gate)(struct control_ctx *ctx, const char *cmd, json_object *args,
		    json_object **ret, struct json_line_error *e);
	void *gate_arg;
};

#define CONTROL_GATE_PASS	0
#define CONTROL_GATE_ANSWERED	1
#define CONTROL_GATE_REFUSED	2

/*
 * 0 with *ret set to the "return" object (or left NULL for {}), or
 * nonzero with e filled.
 */
typedef int (*control_cmd_fn)(struct control_ctx *ctx, json_object *args,
			      json_object **ret, struct json_line_error *e);

struct control_command {
	const char *name;
	control_cmd_fn fn;
	const char *const *args;	/* accepted args keys, NULL-terminated; NULL: none */
	unsigned int flags;
};

#define CONTROL_CMD_LONG	(1u << 0)	/* may take seconds: runs on the worker */
#define CONTROL_CMD_ANYTIME	(1u << 1)	/* answered while a long command runs */
#define CONTROL_CMD_NO_ACCEPT	(1u << 2)	/* no new connection while it runs (upgrade) */
/*
 * Changes whether the guest runs (pause): refused with Busy, although
 * ANYTIME, while a NO_ACCEPT command runs, since an upgrade decides that
 * itself and carries it over to the new process.
 */
#define CONTROL_CMD_RUN_STATE	(1u << 3)

/*
 * Add n commands; the table must outlive every server. 0, also when this
 * table is registered already; -EEXIST if a name is taken by another
 * table; -ENOSPC past the fixed number of tables.
 */
int control_register(const struct control_command *cmds, size_t n);

/* The registered command of that name, or NULL. */
const struct control_command *control_command_find(const char *name);

/*
 * The flags of the command a line asks for, and (if it has one) a new
 * reference to its id for a reply the server makes itself. -EINVAL for a
 * line that is not a request for a known command: control_handle_line()
 * answers that one with the reason.
 */
int control_line_peek(const char *line, size_t len, unsigned int *flags, const char **name,
		      json_object **id);

/*
 * One request line in, one reply line out (malloc'd, newline-terminated;
 * NULL only when out of memory).
 */
char *control_handle_line(struct control_ctx *ctx, const char *line, size_t len,
			  size_t *reply_len);

#endif /* KVMLU_CONTROL_COMMANDS_H */
