// SPDX-License-Identifier: GPL-2.0
/* The agent's listening socket and its connections (see agent_server.h). */
#include <errno.h>
#include <grp.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/daemon/agent_commands.h"
#include "agent/daemon/agent_server.h"
#include "agent/daemon/peer_auth.h"
#include "common/err.h"
#include "common/json_line.h"

struct conn {
	int fd;
	const struct agent_config *cfg;
	bool have_group;
	gid_t gid;
};

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
	/* A socket file left by an agent that died; nobody listens on it. */
	unlink(cfg->socket_path);
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
	if (listen(fd, 16)) {
		ret = kvmlu_err(err, errlen, -errno, "listen %s: %s", cfg->socket_path,
				strerror(errno));
		goto err_unlink;
	}
	return fd;
err_unlink:
	unlink(cfg->socket_path);
err_close:
	close(fd);
	return ret;
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
		ret = json_line_next(r, -1, &line, &len, err, sizeof(err));
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
	free(c);
	return NULL;
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
	bool have_group;
	pthread_attr_t attr;
	gid_t gid = 0;

	have_group = group_gid(cfg->group, &gid);
	if (!have_group)
		fprintf(stderr, "kvmlu-agent: group %s does not exist: only root may connect\n",
			cfg->group);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		struct conn *c;
		pthread_t t;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
				continue;
			fprintf(stderr, "kvmlu-agent: accept: %s\n", strerror(errno));
			pthread_attr_destroy(&attr);
			return -errno;
		}
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		*c = (struct conn){ .fd = fd, .cfg = cfg, .have_group = have_group, .gid = gid };
		if (pthread_create(&t, &attr, serve, c)) {
			close(fd);
			free(c);
		}
	}
}
