// SPDX-License-Identifier: GPL-2.0
/*
 * Control socket server (see server.h). One thread polls the listening
 * socket, the wake eventfd and every client. Each client has an input
 * buffer of KVMLU_WIRE_LINE_MAX bytes and a newline; a complete line is
 * one request.
 *
 * Unhappy paths, none of which disturbs the VM or other clients:
 * 1. Line over KVMLU_WIRE_LINE_MAX: one LineTooLong error reply, the rest of
 *    that line is discarded up to its newline, the connection goes on.
 * 2. Peer not root and not the owner: PermissionDenied reply, closed.
 * 3. More than CONTROL_MAX_CLIENTS: Busy reply, closed.
 * 3a. No complete request line within the idle time (from the accept or
 *    the last reply; a client waiting for its long command's reply is
 *    not idle): Timeout reply, closed, so idle or half-sent connections
 *    never hold every slot.
 * 4. A client that does not read its replies (send would block): closed,
 *    so a stuck client never stalls the loop.
 * 5. EOF with a partial line: it is handled as a request, then closed.
 * 6. A request while another client's long command runs: answered at once
 *    if the command is CONTROL_CMD_ANYTIME (and, during an upgrade, not
 *    CONTROL_CMD_RUN_STATE), else Busy naming the one running. A long command's reply goes to its client when it is done;
 *    a client gone by then just does not get it.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/accept_spare.h"
#include "common/clock.h"
#include "common/err.h"
#include "kvmlu/unix_addr.h"
#include "vmm/control/server.h"
#include "vmm/control/server_listen.h"

struct control_client {
	unsigned long id;	/* for the reply of a long command */
	int fd;
	int64_t deadline;	/* mono ms: closed if no complete line by then */
	size_t len;		/* bytes in buf */
	bool discarding;	/* inside an oversized line */
	bool eof;		/* peer done sending; closed once its long reply is out */
	char buf[KVMLU_WIRE_LINE_MAX + 1];
};

/* Best effort: a reply that does not fit the socket buffer closes the client. */
static int control_send(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void control_send_error(int fd, const char *class, const char *desc)
{
	json_object *o = json_line_reply_error(class, desc, NULL);
	size_t len;
	char *r = o ? json_line_format(o, &len) : NULL;

	if (r)
		(void)control_send(fd, r, len);
	free(r);
	json_object_put(o);
}

/* A long command on the worker thread; only the server thread sends. */
struct control_work {
	struct control_server *s;
	pthread_t thread;
	unsigned long client;	/* id of the client that asked */
	unsigned int flags;
	char cmd[KVMLU_WIRE_CMD_MAX + 1];
	char *line;
	size_t len;
	char *reply;
	size_t reply_len;
};

/* Set once in main() before any server starts (control_server_set_idle_ms). */
static unsigned int control_idle_ms = CONTROL_IDLE_MS_DEFAULT;

void control_server_set_idle_ms(unsigned int ms)
{
	control_idle_ms = ms;
}

unsigned int control_server_idle_ms(void)
{
	return control_idle_ms;
}

static void control_client_touch(struct control_server *s, struct control_client *c)
{
	c->deadline = kvmlu_mono_ms() + s->idle_ms;
}

static void control_client_close(struct control_server *s, unsigned int i)
{
	close(s->clients[i]->fd);
	free(s->clients[i]);
	s->clients[i] = NULL;
}

/* One pending connection: served, or answered and closed. false: none pending. */
static bool control_accept_one(struct control_server *s)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	unsigned int i;
	char msg[128];
	int fd;

	bool out_of_fds;

	fd = accept_spare_accept(&s->spare, s->listen_fd, SOCK_CLOEXEC | SOCK_NONBLOCK,
				 &out_of_fds);
	if (fd == -EMFILE || fd == -ENFILE) {
		/* The client stays in the backlog; polling it again at once would spin. */
		s->accept_paused_until = kvmlu_mono_ms() + CONTROL_ACCEPT_BACKOFF_MS;
		return false;
	}
	if (fd < 0)
		return fd == -ECONNABORTED || fd == -EINTR;
	if (out_of_fds) {
		control_send_error(fd, KVMLU_ERR_BUSY, ACCEPT_SPARE_BUSY_MSG);
		s->refused++;
		close(fd);
		accept_spare_refill(&s->spare);
		return true;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		s->refused++;
		close(fd);
		return true;
	}
	if (cred.uid != 0 && cred.uid != s->owner) {
		snprintf(msg, sizeof(msg), "uid %u may not use this socket (only root and uid %u)",
			 (unsigned int)cred.uid, (unsigned int)s->owner);
		control_send_error(fd, KVMLU_ERR_PERMISSION, msg);
		s->refused++;
		close(fd);
		return true;
	}
	for (i = 0; i < CONTROL_MAX_CLIENTS && s->clients[i]; i++)
		;
	if (i == CONTROL_MAX_CLIENTS || !(s->clients[i] = malloc(sizeof(struct control_client)))) {
		snprintf(msg, sizeof(msg), "too many control clients (limit %d)", CONTROL_MAX_CLIENTS);
		control_send_error(fd, KVMLU_ERR_BUSY, msg);
		s->refused++;
		close(fd);
		return true;
	}
	s->clients[i]->id = ++s->next_client_id;
	s->clients[i]->fd = fd;
	s->clients[i]->len = 0;
	s->clients[i]->discarding = false;
	s->clients[i]->eof = false;
	control_client_touch(s, s->clients[i]);
	return true;
}

/*
 * Drain the backlog (a bounded batch: clients with requests get their
 * turn too), so a flood of connections is answered Busy at once instead
 * of queueing behind one another.
 */
static void control_accept(struct control_server *s)
{
	for (unsigned int n = 0; n < 4 * CONTROL_MAX_CLIENTS && control_accept_one(s); n++)
		;
}

static void *control_worker(void *arg)
{
	struct control_work *w = arg;
	uint64_t one = 1;

	w->reply = control_handle_line(w->s->ctx, w->line, w->len, &w->reply_len);
	if (write(w->s->done_fd, &one, sizeof(one)) < 0) {
		/* only fails if already signalled */
	}
	return NULL;
}

/* Run a long command on the worker; its reply is sent by control_work_done(). */
static int control_work_start(struct control_server *s, struct control_client *c,
			      const char *line, size_t len, unsigned int flags, const char *name)
{
	struct control_work *w = calloc(1, sizeof(*w));

	if (!w || !(w->line = malloc(len + 1))) {
		free(w);
		return -ENOMEM;
	}
	memcpy(w->line, line, len);
	w->line[len] = '\0';
	w->len = len;
	w->s = s;
	w->client = c->id;
	w->flags = flags;
	snprintf(w->cmd, sizeof(w->cmd), "%s", name);
	if (pthread_create(&w->thread, NULL, control_worker, w)) {
		free(w->line);
		free(w);
		return -EAGAIN;
	}
	s->work = w;
	return 0;
}

/* The worker is done (or about to be): join it, hand its reply to its client if still there. */
static void control_work_finish(struct control_server *s)
{
	struct control_work *w = s->work;

	if (!w)
		return;
	pthread_join(w->thread, NULL);
	for (unsigned int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		if (!s->clients[i] || s->clients[i]->id != w->client)
			continue;
		if ((w->reply && control_send(s->clients[i]->fd, w->reply, w->reply_len)) ||
		    s->clients[i]->eof)
			control_client_close(s, i);
		else
			control_client_touch(s, s->clients[i]);
	}
	free(w->reply);
	free(w->line);
	free(w);
	s->work = NULL;
}

static void control_work_done(struct control_server *s)
{
	uint64_t n;

	if (read(s->done_fd, &n, sizeof(n)) < 0) {
		/* nothing to read: spurious */
	}
	control_work_finish(s);
}

static int control_handle(struct control_server *s, struct control_client *c,
			  const char *line, size_t len)
{
	unsigned int flags = 0;
	const char *name = "";
	json_object *id = NULL, *o;
	size_t rlen;
	char *reply, msg[160];
	int rc;

	if (!control_line_peek(line, len, &flags, &name, &id)) {
		if (s->work && (!(flags & CONTROL_CMD_ANYTIME) ||
				((flags & CONTROL_CMD_RUN_STATE) &&
				 (s->work->flags & CONTROL_CMD_NO_ACCEPT)))) {
			snprintf(msg, sizeof(msg), "%s waits: %s from another request is running",
				 name, s->work->cmd);
			o = json_line_reply_error(KVMLU_ERR_BUSY, msg, id);
			json_object_put(id);
			reply = o ? json_line_format(o, &rlen) : NULL;
			json_object_put(o);
			goto send;
		}
		json_object_put(id);
		if (flags & CONTROL_CMD_LONG)
			return control_work_start(s, c, line, len, flags, name);
	}
	reply = control_handle_line(s->ctx, line, len, &rlen);
send:
	if (!reply)
		return -ENOMEM;
	rc = control_send(c->fd, reply, rlen);
	free(reply);
	return rc;
}

/* Handle every complete line in c->buf; 0, or <0 to close the client. */
static int control_consume(struct control_server *s, struct control_client *c)
{
	size_t start = 0, i;
	int rc;

	for (i = 0; i < c->len; i++) {
		if (c->buf[i] != '\n')
			continue;
		if (c->discarding) {
			c->discarding = false;
		} else {
			rc = control_handle(s, c, c->buf + start, i - start);
			if (rc)
				return rc;
		}
		control_client_touch(s, c);
		start = i + 1;
	}
	memmove(c->buf, c->buf + start, c->len - start);
	c->len -= start;
	if (c->len > KVMLU_WIRE_LINE_MAX) {
		/*
		 * Full without a newline: longer than a line may be (the last
		 * byte would have been its newline). Say so once, drop the rest.
		 */
		if (!c->discarding) {
			char msg[96];

			snprintf(msg, sizeof(msg), "request line longer than %d bytes", KVMLU_WIRE_LINE_MAX);
			control_send_error(c->fd, KVMLU_ERR_LINE_TOO_LONG, msg);
		}
		c->discarding = true;
		c->len = 0;
	}
	return 0;
}

static void control_client_io(struct control_server *s, unsigned int idx)
{
	struct control_client *c = s->clients[idx];
	ssize_t n;

	n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (n == 0 && c->len && !c->discarding)
			(void)control_handle(s, c, c->buf, c->len);
		/* A client that sent its request and shut down writing still gets the reply. */
		if (n == 0 && s->work && s->work->client == c->id) {
			c->eof = true;
			return;
		}
		control_client_close(s, idx);
		return;
	}
	c->len += (size_t)n;
	if (control_consume(s, c))
		control_client_close(s, idx);
}

/* A client waiting for its long command's reply is not idle. */
static bool control_client_waits(const struct control_server *s, const struct control_client *c)
{
	return c->eof || (s->work && s->work->client == c->id);
}

/*
 * Close every client past its deadline; return the poll timeout until
 * the next deadline (-1: none).
 */
static int control_expire(struct control_server *s)
{
	int64_t now = kvmlu_mono_ms(), next = -1;
	char msg[96];

	for (unsigned int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *c = s->clients[i];

		if (!c || control_client_waits(s, c))
			continue;
		if (c->deadline <= now) {
			snprintf(msg, sizeof(msg), "no complete request line within %u ms: closing",
				 s->idle_ms);
			control_send_error(c->fd, KVMLU_ERR_TIMEOUT, msg);
			control_client_close(s, i);
			continue;
		}
		if (next < 0 || c->deadline - now < next)
			next = c->deadline - now;
	}
	return next < 0 ? -1 : (int)next;
}

static void *control_server_thread(void *arg)
{
	struct control_server *s = arg;
	struct pollfd pfd[CONTROL_MAX_CLIENTS + 3];
	unsigned int map[CONTROL_MAX_CLIENTS];
	unsigned int i, n;
	int timeout;

	pthread_setname_np(pthread_self(), "control");
	for (;;) {
		int64_t paused = s->accept_paused_until - kvmlu_mono_ms();

		timeout = control_expire(s);
		if (paused > 0 && (timeout < 0 || paused < timeout))
			timeout = (int)paused;
		pfd[0] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->done_fd, .events = POLLIN };
		/* An upgrade in flight: new clients wait in the backlog for the new process. */
		pfd[2] = (struct pollfd){ .fd = paused > 0 || (s->work &&
					  (s->work->flags & CONTROL_CMD_NO_ACCEPT)) ?
					  -1 : s->listen_fd, .events = POLLIN };
		n = 3;
		for (i = 0; i < CONTROL_MAX_CLIENTS; i++) {
			if (!s->clients[i])
				continue;
			map[n - 3] = i;
			pfd[n++] = (struct pollfd){ .fd = s->clients[i]->eof ? -1 : s->clients[i]->fd,
						    .events = POLLIN };
		}
		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* A reply that is ready goes out even when the server is told to stop. */
		if (pfd[1].revents)
			control_work_done(s);
		if (pfd[0].revents)
			break;
		/* Upgraded: the new VMM serves the socket now; accept nothing more. */
		if (s->ctx && s->ctx->handed_off && !s->work)
			break;
		for (i = 3; i < n; i++)
			if (pfd[i].revents && s->clients[map[i - 3]])
				control_client_io(s, map[i - 3]);
		if (pfd[2].revents & POLLIN)
			control_accept(s);
	}
	return NULL;
}

void control_server_init(struct control_server *s)
{
	memset(s, 0, sizeof(*s));
	s->listen_fd = s->wake_fd = s->done_fd = -1;
	s->spare.fd = -1;
	s->idle_ms = control_idle_ms;
}

int control_server_start(struct control_server *s, const char *path,
			 struct control_ctx *ctx, char *err, size_t errlen)
{
	int rc;

	control_server_init(s);
	s->ctx = ctx;
	s->owner = geteuid();
	snprintf(s->path, sizeof(s->path), "%s", path);
	rc = control_listen_bind(path, CONTROL_MAX_CLIENTS, &s->listen_fd, &s->dev, &s->ino,
				 err, errlen);
	if (rc)
		return rc;
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0 || s->done_fd < 0) {
		rc = kvmlu_err(err, errlen, -errno, "eventfd: %s", strerror(errno));
		goto err_unbind;
	}
	accept_spare_init(&s->spare);	/* without it, such clients wait for a free fd */
	rc = pthread_create(&s->thread, NULL, control_server_thread, s);
	if (rc) {
		rc = kvmlu_err(err, errlen, -rc, "control thread: pthread_create: %s", strerror(rc));
		goto err_wake;
	}
	s->started = true;
	return 0;
err_wake:
	accept_spare_fini(&s->spare);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->done_fd >= 0)
		close(s->done_fd);
	s->wake_fd = s->done_fd = -1;
err_unbind:
	if (!kvmlu_unix_is_abstract(path))
		unlink(path);
	close(s->listen_fd);
	s->listen_fd = -1;
	return rc;
}

int control_server_adopt(struct control_server *s, int listen_fd, const char *path,
			 struct control_ctx *ctx, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	control_server_init(s);
	s->ctx = ctx;
	s->owner = geteuid();
	snprintf(s->path, sizeof(s->path), "%s", path);
	/* The file is the one the old VMM bound: ours to remove at the end now. */
	if (stat(path, &st) < 0)
		return kvmlu_err(err, errlen, -errno, "control %s: %s", path, strerror(errno));
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0 || s->done_fd < 0) {
		rc = -errno;
		if (s->wake_fd >= 0)
			close(s->wake_fd);
		if (s->done_fd >= 0)
			close(s->done_fd);
		s->wake_fd = s->done_fd = -1;
		return kvmlu_err(err, errlen, rc, "eventfd: %s", strerror(-rc));
	}
	s->listen_fd = listen_fd;
	accept_spare_init(&s->spare);	/* without it, such clients wait for a free fd */
	rc = pthread_create(&s->thread, NULL, control_server_thread, s);
	if (rc) {
		accept_spare_fini(&s->spare);
		close(s->wake_fd);
		close(s->done_fd);
		s->wake_fd = s->done_fd = -1;
		s->listen_fd = -1;
		return kvmlu_err(err, errlen, -rc, "control thread: pthread_create: %s", strerror(rc));
	}
	s->started = true;
	return 0;
}

void control_server_stop(struct control_server *s)
{
	uint64_t one = 1;
	struct stat st;
	unsigned int i;

	if (s->started) {
		if (write(s->wake_fd, &one, sizeof(one)) < 0) {
			/* only fails if already signalled */
		}
		pthread_join(s->thread, NULL);
		s->started = false;
	}
	/*
	 * A long command still running finishes first (it may touch the VM),
	 * and its client gets the reply: an upgrade's old process is stopped
	 * by the very command whose answer is still to be sent.
	 */
	control_work_finish(s);
	for (i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (s->clients[i])
			control_client_close(s, i);
	if (s->listen_fd >= 0) {
		/* A new VMM may already have bound the path (upgrade): leave its file alone. */
		if (!(s->ctx && s->ctx->handed_off) && !kvmlu_unix_is_abstract(s->path) &&
		    lstat(s->path, &st) == 0 &&
		    st.st_dev == s->dev && st.st_ino == s->ino)
			unlink(s->path);
		close(s->listen_fd);
		s->listen_fd = -1;
	}
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->done_fd >= 0)
		close(s->done_fd);
	s->wake_fd = s->done_fd = -1;
	accept_spare_fini(&s->spare);
}
