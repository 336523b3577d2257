/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control socket of one kvmlu-vmm: a UNIX stream socket (mode 0600)
 * served by one event-loop thread. Only root and the socket's owner (the
 * VMM's effective uid) may talk to it: the file mode keeps others out of
 * connect(), SO_PEERCRED is checked again on every accepted connection.
 *
 * Lifecycle: control_server_start() binds (replacing a stale socket file
 * left by a dead VMM, refusing a live one) and starts the thread;
 * requests are handled by control_handle_line(), short ones on that
 * thread, a long one (checksum, guest-verify, upgrade, prepare-update ...)
 * on a worker thread while status and pause are still answered;
 * control_server_stop() wakes and joins the thread, closes every client
 * and removes the socket file if it is still ours. After a live upgrade
 * the new VMM binds the same path again.
 */
#ifndef KVMLU_CONTROL_SERVER_H
#define KVMLU_CONTROL_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/accept_spare.h"
#include "kvmlu/control_wire.h"
#include "vmm/control/commands.h"

#define CONTROL_MAX_CLIENTS 16
/* Out of fds even with the spare: how long the listener is left unpolled. */
#define CONTROL_ACCEPT_BACKOFF_MS 100

struct control_client;
struct control_work;

struct control_server {
	int listen_fd;
	struct accept_spare spare;	/* to answer clients when out of fds */
	int64_t accept_paused_until;	/* ms: out of fds even with the spare */
	int wake_fd;		/* eventfd: stop the loop */
	pthread_t thread;
	bool started;
	char path[108];
	dev_t dev;		/* the socket file we bound, to unlink only ours */
	ino_t ino;
	uid_t owner;
	unsigned int idle_ms;	/* see CONTROL_IDLE_MS_DEFAULT */
	struct control_ctx *ctx;
	struct control_client *clients[CONTROL_MAX_CLIENTS];
	unsigned long refused;	/* connections turned away (credentials, full) */
	unsigned long next_client_id;
	/* The one long command running (server.c), on its own thread. */
	struct control_work *work;	/* NULL: none */
	int done_fd;		/* eventfd: the worker has its reply */
};

/*
 * The idle time of every server this process starts from now on
 * (kvmlu-vmm --control-idle-ms; default CONTROL_IDLE_MS_DEFAULT). Call
 * before any server starts: it is read by control_server_init().
 */
void control_server_set_idle_ms(unsigned int ms);
/* That idle time: a live upgrade hands it to the new process. */
unsigned int control_server_idle_ms(void);

/* A server that holds nothing: control_server_stop() on it does nothing. */
void control_server_init(struct control_server *s);

int control_server_start(struct control_server *s, const char *path,
			 struct control_ctx *ctx, char *err, size_t errlen);
/*
 * Live upgrade, new process: serve listen_fd (received from the old VMM,
 * already bound to path and listening) instead of binding. On error
 * listen_fd stays the caller's.
 */
int control_server_adopt(struct control_server *s, int listen_fd, const char *path,
			 struct control_ctx *ctx, char *err, size_t errlen);
/* Safe on a zeroed server and if start failed. */
void control_server_stop(struct control_server *s);

#endif /* KVMLU_CONTROL_SERVER_H */
