// SPDX-License-Identifier: GPL-2.0
/* The agent's listening socket and its connections (see agent_server.h). */
#include <errno.h>
#include <grp.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/daemon/agent_commands.h"
#include "agent/daemon/agent_server.h"
#include "agent/daemon/peer_auth.h"
#include "common/accept_spare.h"
#include "common/err.h"
#include "common/json_line.h"
#include "common/sock_path.h"

struct conn {
	int fd;
	const struct agent_config *cfg;
	bool have_group;
	gid_t gid;
	atomic_uint *live;	/* NULL, or the count this connection is in */
};

/* The socket file this process bound: removed on SIGTERM/SIGINT if still ours. */
static struct {
	char path[AGENT_SOCK_PATH_MAX];
	dev_t dev;
	ino_t ino;
} bound;

static bool group_gid(const char *name, gid_t *gid)
{
	struct group *g = getgrnam(name);

	if (!g)
		return false;
	*gid = g->gr_gid;
	return true;
}

static int mkdir_parent(const char *path)
{
	char dir[AGENT_SOCK_PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(dir, 0755);
		*p = '/';
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int agent_server_listen(const struct agent_config *cfg, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	gid_t gid = 0;
	int fd, ret;

	ret = mkdir_parent(cfg->socket_path);
	if (ret)
		return kvmlu_err(err, errlen, ret, "socket directory of %s: %s",
				 cfg->socket_path, strerror(-ret));
	memcpy(sa.sun_path, cfg->socket_path, strlen(cfg->socket_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "socket: %s", strerror(errno));
	/* A live socket (another agent's, a VMM's) is never taken over. */
	ret = sock_path_claim(cfg->socket_path, err, errlen);
	if (ret)
		goto err_close;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = kvmlu_err(err, errlen, -errno, "bind %s: %s", cfg->socket_path,
				strerror(errno));
		goto err_close;
	}
	if (chmod(cfg->socket_path, 0660)) {
		ret = kvmlu_err(err, errlen, -errno, "chmod 0660 %s: %s", cfg->socket_path,
				strerror(errno));
		goto err_unlink;
	}
	if (group_gid(cfg->group, &gid) && chown(cfg->socket_path, 0, gid)) {
		ret = kvmlu_err(err, errlen, -errno, "chown root:%s %s: %s", cfg->group,
				cfg->socket_path, strerror(errno));
		goto err_unlink;
	}
	if (listen(fd, 64) || lstat(cfg->socket_path, &st)) {
		ret = kvmlu_err(err, errlen, -errno, "listen %s: %s", cfg->socket_path,
				strerror(errno));
		goto err_unlink;
	}
	snprintf(bound.path, sizeof(bound.path), "%s", cfg->socket_path);
	bound.dev = st.st_dev;
	bound.ino = st.st_ino;
	return fd;
err_unlink:
	unlink(cfg->socket_path);
err_close:
	close(fd);
	return ret;
}

/* Async-signal-safe only: lstat, unlink, signal, raise. */
static void remove_socket_and_die(int sig)
{
	struct stat st;

	/* Another agent may have bound the path since (ours was stale to it): leave its file. */
	if (bound.path[0] && !lstat(bound.path, &st) && st.st_dev == bound.dev &&
	    st.st_ino == bound.ino)
		unlink(bound.path);
	signal(sig, SIG_DFL);
	raise(sig);
}

int agent_server_remove_on_signal(void)
{
	struct sigaction sa = { .sa_handler = remove_socket_and_die };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		return -errno;
	return 0;
}

/*
 * One line, as it came, into a request and its reply. The request's
 * shape ({"cmd","id","args"}, no other key) and the strict parse (a
 * duplicate key is DuplicateKey, not a silent last-one-wins) are
 * json_line_request_parse's, the one place that knows them.
 */
static struct json_object *answer(struct conn *c, const char *line, size_t len)
{
	struct json_line_request rq;
	struct json_line_error e;
	struct json_object *reply;

	if (json_line_request_parse(line, len, &rq, &e))
		reply = json_line_reply_error(e.class, e.desc, rq.id);
	else
		reply = agent_commands_dispatch(c->cfg, c->fd, &rq);
	json_line_request_free(&rq);
	return reply;
}

static int send_reply(int fd, struct json_object *reply)
{
	int ret = reply ? json_line_write(fd, reply) : -ENOMEM;

	json_object_put(reply);
	return ret;
}

static void *serve(void *arg)
{
	struct conn *c = arg;
	struct json_line_reader *r = malloc(sizeof(*r));
	const char *line;
	/* 0 only in a config not from agent_config_defaults(): no limit. */
	int idle_ms = c->cfg->client_idle_ms ? (int)c->cfg->client_idle_ms : -1;
	char err[256];
	size_t len;
	int ret;

	if (!r)
		goto out;
	if (peer_auth_check(c->fd, c->have_group, c->gid, err, sizeof(err))) {
		fprintf(stderr, "kvmlu-agent: refused connection: %s\n", err);
		send_reply(c->fd, json_line_reply_error(KVMLU_ERR_PERMISSION, err, NULL));
		goto out;
	}
	json_line_reader_init(r, c->fd);
	for (;;) {
		ret = json_line_next(r, idle_ms, &line, &len, err, sizeof(err));
		/* Idle or half a line: the slot goes to a client that talks. */
		if (ret == -ETIMEDOUT) {
			snprintf(err, sizeof(err), "no complete request line within %d ms: closing",
				 idle_ms);
			send_reply(c->fd, json_line_reply_error(KVMLU_ERR_TIMEOUT, err, NULL));
			break;
		}
		/* The rest of an overlong line cannot be told from the next: close. */
		if (ret == -EMSGSIZE)
			send_reply(c->fd, json_line_reply_error(KVMLU_ERR_LINE_TOO_LONG, err, NULL));
		if (ret)
			break;
		if (send_reply(c->fd, answer(c, line, len)))
			break;
	}
out:
	free(r);
	close(c->fd);
	if (c->live)
		atomic_fetch_sub(c->live, 1);
	free(c);
	return NULL;
}

/* One line, without waiting: a client that does not read does not get it. */
static void refuse_busy(int fd, const char *msg)
{
	json_object *o;
	size_t len;
	char *text;

	o = json_line_reply_error(KVMLU_ERR_BUSY, msg, NULL);
	text = o ? json_line_format(o, &len) : NULL;
	if (text && send(fd, text, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* the client is gone or not reading: nothing more to tell it */
	}
	free(text);
	json_object_put(o);
	close(fd);
}

void agent_server_serve(int fd, const struct agent_config *cfg)
{
	struct conn *c = malloc(sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	*c = (struct conn){ .fd = fd, .cfg = cfg };
	c->have_group = group_gid(cfg->group, &c->gid);
	serve(c);
}

int agent_server_run(int lfd, const struct agent_config *cfg)
{
	static atomic_uint live;
	struct accept_spare spare;
	bool have_group;
	pthread_attr_t attr;
	gid_t gid = 0;

	have_group = group_gid(cfg->group, &gid);
	if (!have_group)
		fprintf(stderr, "kvmlu-agent: group %s does not exist: only root may connect\n",
			cfg->group);
	if (accept_spare_init(&spare) < 0)
		fprintf(stderr, "kvmlu-agent: no spare descriptor: a client arriving when "
			"the agent is out of descriptors waits until one is free\n");
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		const struct timespec backoff = { .tv_nsec = 100 * 1000 * 1000 };
		char msg[96];
		struct conn *c;
		bool out_of_fds;
		pthread_t t;
		int fd = accept_spare_accept(&spare, lfd, SOCK_CLOEXEC, &out_of_fds);

		if (fd == -EMFILE || fd == -ENFILE) {
			/* still waiting in the backlog: retrying at once would spin */
			nanosleep(&backoff, NULL);
			continue;
		}
		if (fd < 0) {
			if (fd == -EINTR || fd == -ECONNABORTED)
				continue;
			fprintf(stderr, "kvmlu-agent: accept: %s\n", strerror(-fd));
			pthread_attr_destroy(&attr);
			accept_spare_fini(&spare);
			return fd;
		}
		if (out_of_fds) {
			refuse_busy(fd, ACCEPT_SPARE_BUSY_MSG);
			accept_spare_refill(&spare);
			continue;
		}
		/* Only this thread adds: a count below the cap stays below until it adds. */
		if (atomic_load(&live) >= cfg->max_clients) {
			snprintf(msg, sizeof(msg), "too many agent clients (limit %u): try again",
				 cfg->max_clients);
			refuse_busy(fd, msg);
			continue;
		}
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		*c = (struct conn){ .fd = fd, .cfg = cfg, .have_group = have_group, .gid = gid,
				    .live = &live };
		atomic_fetch_add(&live, 1);
		if (pthread_create(&t, &attr, serve, c)) {
			atomic_fetch_sub(&live, 1);
			close(fd);
			free(c);
		}
	}
}
