// SPDX-License-Identifier: GPL-2.0
/*
 * JSON line protocol helpers (see json_line.h). No lifecycle of its own:
 * a reader lives as long as its connection.
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_err.h"
#include "agent/json_line.h"
#include "kvmlu/unix_addr.h"

void json_line_reader_init(struct json_line_reader *r, int fd)
{
	r->fd = fd;
	r->len = 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_line(char *line, size_t len, struct json_object **out,
		      char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;
	size_t end;

	if (!tok)
		return agent_err(err, errlen, -ENOMEM, "out of memory");
	o = json_tokener_parse_ex(tok, line, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(o, json_type_object) ||
	    strspn(line + end, " \t\r") != len - end) {
		json_object_put(o);
		json_tokener_free(tok);
		return agent_err(err, errlen, -EBADMSG, "line of %zu bytes is not one JSON object",
				 len);
	}
	json_tokener_free(tok);
	*out = o;
	return 0;
}

int json_line_read(struct json_line_reader *r, int timeout_ms,
		   struct json_object **out, char *err, size_t errlen)
{
	int64_t deadline = timeout_ms < 0 ? 0 : mono_ms() + timeout_ms;

	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);
		struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
		ssize_t n;
		int wait, ret;

		if (nl) {
			size_t llen = (size_t)(nl - r->buf);

			*nl = 0;
			ret = parse_line(r->buf, llen, out, err, errlen);
			memmove(r->buf, nl + 1, r->len - llen - 1);
			r->len -= llen + 1;
			return ret;
		}
		if (r->len >= JSON_LINE_MAX)
			return agent_err(err, errlen, -EMSGSIZE, "line longer than %d bytes",
					 JSON_LINE_MAX);
		wait = -1;
		if (timeout_ms >= 0) {
			int64_t left = deadline - mono_ms();

			if (left <= 0)
				return agent_err(err, errlen, -ETIMEDOUT,
						 "no answer within %d ms", timeout_ms);
			wait = (int)left;
		}
		ret = poll(&pfd, 1, wait);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			return agent_err(err, errlen, -errno, "poll: %s", strerror(errno));
		}
		if (ret == 0)
			continue;
		n = read(r->fd, r->buf + r->len, JSON_LINE_MAX - r->len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return agent_err(err, errlen, -errno, "read: %s", strerror(errno));
		}
		if (n == 0)
			return agent_err(err, errlen, -EPIPE, "connection closed%s",
					 r->len ? " in the middle of a line" : "");
		r->len += (size_t)n;
	}
}

int json_line_write(int fd, struct json_object *obj)
{
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(s), off = 0;
	char nl = '\n';

	while (off < len) {
		ssize_t n = send(fd, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
	}
	while (send(fd, &nl, 1, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int json_line_connect(const char *path, int timeout_ms, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int64_t deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int fd, e;

	if (kvmlu_unix_addr(path, &sa, &salen))
		return agent_err(err, errlen, -ENAMETOOLONG, "socket path '%s' empty or too long", path);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return agent_err(err, errlen, -errno, "socket: %s", strerror(errno));
		if (!connect(fd, (struct sockaddr *)&sa, salen))
			return fd;
		e = errno;
		close(fd);
		/* EAGAIN: the listener's backlog is full; worth another try. */
		if (e != EAGAIN || mono_ms() >= deadline)
			return agent_err(err, errlen, -e, "connect %s: %s", path, strerror(e));
		usleep(10000);
	}
}

int json_line_call(int fd, struct json_line_reader *r, const char *cmd,
		   struct json_object *extra, int id, int timeout_ms,
		   void (*on_event)(void *arg, struct json_object *ev), void *arg,
		   struct json_object **ret, char *err, size_t errlen)
{
	struct json_object *req, *reply = NULL, *v, *e, *cls, *desc;
	int rc;

	if (ret)
		*ret = NULL;
	req = json_object_new_object();
	if (!req)
		return agent_err(err, errlen, -ENOMEM, "out of memory");
	json_object_object_add(req, "cmd", json_object_new_string(cmd));
	if (extra) {
		json_object_object_foreach(extra, k, val)
			json_object_object_add(req, k, json_object_get(val));
	}
	json_object_object_add(req, "id", json_object_new_int(id));
	rc = json_line_write(fd, req);
	json_object_put(req);
	if (rc) {
		/*
		 * A peer that refuses us (PermissionDenied) answers and closes
		 * before reading: its reply is still there to be read.
		 */
		if (json_line_read(r, 200, &reply, NULL, 0))
			return agent_err(err, errlen, rc, "%s: send: %s", cmd, strerror(-rc));
		goto have_reply;
	}

	for (;;) {
		rc = json_line_read(r, timeout_ms, &reply, err, errlen);
		if (rc)
			return rc;
		if (json_object_object_get_ex(reply, "event", NULL)) {
			if (on_event)
				on_event(arg, reply);
			json_object_put(reply);
			continue;
		}
		/* A reply to an earlier request that timed out: not ours. */
		if (json_object_object_get_ex(reply, "id", &v) &&
		    json_object_is_type(v, json_type_int) && json_object_get_int(v) != id) {
			json_object_put(reply);
			continue;
		}
		break;
	}
have_reply:
	if (!json_object_object_get_ex(reply, "ok", &v) ||
	    !json_object_is_type(v, json_type_boolean)) {
		rc = agent_err(err, errlen, -EBADMSG, "%s: reply without \"ok\"", cmd);
		goto out;
	}
	if (json_object_get_boolean(v)) {
		if (ret && json_object_object_get_ex(reply, "return", &v))
			*ret = json_object_get(v);
		rc = 0;
		goto out;
	}
	if (json_object_object_get_ex(reply, "error", &e) &&
	    json_object_object_get_ex(e, "class", &cls) &&
	    json_object_is_type(cls, json_type_string)) {
		json_object_object_get_ex(e, "desc", &desc);
		rc = agent_err(err, errlen, -EREMOTEIO, "%s: %s", json_object_get_string(cls),
			       desc && json_object_is_type(desc, json_type_string) ?
			       json_object_get_string(desc) : "(no description)");
	} else {
		rc = agent_err(err, errlen, -EREMOTEIO, "Error: %s failed (no error class)", cmd);
	}
out:
	json_object_put(reply);
	return rc;
}

int json_line_error_class(const char *err, char out[JSON_LINE_CLASS_MAX])
{
	size_t n = strcspn(err, ":");

	if (!err[n] || n == 0 || n >= JSON_LINE_CLASS_MAX)
		return -EINVAL;
	memcpy(out, err, n);
	out[n] = 0;
	return 0;
}

struct json_object *json_line_reply_ok(struct json_object *ret, struct json_object *id)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "return", ret ? ret : json_object_new_object());
	if (id)
		json_object_object_add(o, "id", json_object_get(id));
	return o;
}

struct json_object *json_line_reply_error(const char *cls, const char *desc,
					  struct json_object *id)
{
	struct json_object *o = json_object_new_object(), *e = json_object_new_object();

	json_object_object_add(e, "class", json_object_new_string(cls));
	json_object_object_add(e, "desc", json_object_new_string(desc));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", e);
	if (id)
		json_object_object_add(o, "id", json_object_get(id));
	return o;
}
