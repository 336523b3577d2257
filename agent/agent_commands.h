/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's commands, one handler each: status, vms, report,
 * host-update. A handler gets the validated request and the connection
 * (host-update streams {"event":...} lines on it before its reply) and
 * returns the reply object. Only one host-update runs at a time; a second
 * gets the error class "Busy".
 */
#ifndef KVMLU_AGENT_COMMANDS_H
#define KVMLU_AGENT_COMMANDS_H

#include "agent/agent_config.h"

struct json_object;
struct json_line_request;

/* The reply to one request (a new object; NULL only when out of memory). */
struct json_object *agent_commands_dispatch(const struct agent_config *cfg, int fd,
					    const struct json_line_request *rq);

/* At start: finish an update a previous agent left in state_dir. */
void agent_commands_recover(const struct agent_config *cfg);

#endif /* KVMLU_AGENT_COMMANDS_H */
