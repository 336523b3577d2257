/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's socket: bound at start (mode 0660, owner root, group the
 * configured one), one thread per connection, every connection checked
 * with peer_auth before its first request is read. Requests are one JSON
 * object a line and go to agent_commands_dispatch(). Runs until the
 * process ends.
 *
 * A live socket at the path (another agent's, a VMM's) is never taken
 * over, and a file that is not a socket is never removed
 * (common/sock_path.h). At most cfg->max_clients connections are served
 * at once; the next gets one Busy error line and is closed. A connection
 * that has not sent a complete request line within
 * cfg->client_idle_ms (counted from its accept or its last reply) gets
 * one Timeout error line and is closed.
 */
#ifndef KVMLU_AGENT_SERVER_H
#define KVMLU_AGENT_SERVER_H

#include <stddef.h>

#include "agent/config/agent_config.h"

/* Bind and listen; returns the listening fd or -errno. */
int agent_server_listen(const struct agent_config *cfg, char *err, size_t errlen);

/*
 * One connection on the calling thread, checked and served as those that
 * agent_server_run() accepts, until the peer leaves; fd is closed.
 */
void agent_server_serve(int fd, const struct agent_config *cfg);

/*
 * On SIGTERM and SIGINT remove the socket file agent_server_listen()
 * bound (if it is still that file), then die of the signal as before.
 */
int agent_server_remove_on_signal(void);

/* Accept and serve forever (returns only on a fatal accept error). */
int agent_server_run(int lfd, const struct agent_config *cfg);

#endif /* KVMLU_AGENT_SERVER_H */
