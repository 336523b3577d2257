// SPDX-License-Identifier: GPL-2.0
/* The CLI's connection to kvmlu-agent (see cli_commands.h). */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/cli/cli_commands.h"

int cli_conn_open(struct cli_conn *c, const char *socket)
{
	char err[256];
	int fd = json_line_connect(socket, 1000, err, sizeof(err));

	if (fd == -EACCES || fd == -EPERM) {
		fprintf(stderr, "kvmlu: %s: permission denied (root and the agent's group only)\n",
			socket);
		return fd;
	}
	if (fd == -ENOENT || fd == -ECONNREFUSED) {
		fprintf(stderr, "kvmlu: the agent is not running (%s)\n", err);
		return fd;
	}
	if (fd < 0) {
		fprintf(stderr, "kvmlu: %s\n", err);
		return fd;
	}
	c->fd = fd;
	json_line_reader_init(&c->r, fd);
	return 0;
}

void cli_conn_close(struct cli_conn *c)
{
	close(c->fd);
}

int cli_conn_call(struct cli_conn *c, const char *cmd, struct json_object *args,
		  void (*on_event)(void *arg, struct json_object *ev), void *arg,
		  struct json_object **ret)
{
	char err[512];
	int rc;

	/* host-update takes as long as preparing every VM: no timeout. */
	rc = json_line_call(c->fd, &c->r, cmd, args ? json_object_get(args) : NULL, 1, -1,
			    on_event, arg, ret, err, sizeof(err));
	if (rc)
		fprintf(stderr, "kvmlu: %s: %s\n", cmd, err);
	return rc;
}
