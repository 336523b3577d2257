/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's socket: bound at start (mode 0660, owner root, group the
 * configured one), one thread per connection, every connection checked
 * with peer_auth before its first request is read. Requests are one JSON
 * object a line and go to agent_commands_dispatch(). Runs until the
 * process ends.
 */
#ifndef KVMLU_AGENT_SERVER_H
#define KVMLU_AGENT_SERVER_H

#include <stddef.h>

#include "agent/daemon/agent_config.h"

/* Bind and listen; returns the listening fd or -errno. */
int agent_server_listen(const struct agent_config *cfg, char *err, size_t errlen);

/*
 * One connection on the calling thread, checked and served as those that
 * agent_server_run() accepts, until the peer leaves; fd is closed.
 */
void agent_server_serve(int fd, const struct agent_config *cfg);

/* Accept and serve forever (returns only on a fatal accept error). */
int agent_server_run(int lfd, const struct agent_config *cfg);

#endif /* KVMLU_AGENT_SERVER_H */
