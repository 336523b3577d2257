/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verbs of `kvmlu`, one file each (cmd_*.c), and the connection to the
 * agent they share (cli_conn.c). Each returns the process exit status:
 * 0 success, 1 the operation failed or was refused, 2 usage, 3 the agent
 * could not be reached or answered nonsense.
 */
#ifndef KVMLU_CLI_COMMANDS_H
#define KVMLU_CLI_COMMANDS_H

#include "agent/cli/cli_args.h"
#include "common/json_line.h"

struct json_object;

struct cli_conn {
	int fd;
	struct json_line_reader r;
};

/* Connect to the agent; prints why not (and returns -errno) on failure. */
int cli_conn_open(struct cli_conn *c, const char *socket);
void cli_conn_close(struct cli_conn *c);
/*
 * One request, args (NULL: none; the caller keeps its reference) under
 * "args"; prints the agent's error. *ret as json_line_call.
 */
int cli_conn_call(struct cli_conn *c, const char *cmd, struct json_object *args,
		  void (*on_event)(void *arg, struct json_object *ev), void *arg,
		  struct json_object **ret);

int cmd_host_update(const struct cli_args *a);
int cmd_status(const struct cli_args *a);
int cmd_vms(const struct cli_args *a);
int cmd_report(const struct cli_args *a);
int cmd_replace_qemu(const struct cli_args *a);

#endif /* KVMLU_CLI_COMMANDS_H */
