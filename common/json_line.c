// SPDX-License-Identifier: GPL-2.0
/*
 * JSON lines (see json_line.h). No lifecycle of its own: a reader lives
 * as long as its connection. This file is also what the request fuzzer
 * (tests/fuzz/fuzz_control_request.c) drives.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "common/json_strict.h"
#include "kvmlu/unix_addr.h"

int json_line_error_set(struct json_line_error *e, const char *class, const char *fmt, ...)
{
	va_list ap;

	e->class = class;
	va_start(ap, fmt);
	vsnprintf(e->desc, sizeof(e->desc), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int json_line_parse(const char *line, size_t len, json_object **out, struct json_line_error *e)
{
	struct json_strict_error se;
	json_object *root;
	int rc;

	*out = NULL;
	if (len > KVMLU_WIRE_LINE_MAX)
		return json_line_error_set(e, KVMLU_ERR_LINE_TOO_LONG, "line of %zu bytes, limit %d",
					   len, KVMLU_WIRE_LINE_MAX);
	if (memchr(line, '\0', len))
		return json_line_error_set(e, KVMLU_ERR_PARSE, "NUL byte in line");
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len)
		return json_line_error_set(e, KVMLU_ERR_PARSE, "empty line");
	rc = json_strict_parse(line, len, KVMLU_WIRE_DEPTH, JSON_STRICT_UTF8, &root, &se);
	if (rc)
		return json_line_error_set(e, rc == -ENOMEM ? KVMLU_ERR_FAILED :
					   se.fault == JSON_STRICT_DUPLICATE ?
					   KVMLU_ERR_DUPLICATE_KEY : KVMLU_ERR_PARSE, "%s", se.desc);
	if (!json_object_is_type(root, json_type_object)) {
		json_line_error_set(e, KVMLU_ERR_INVALID, "line must be a JSON object, not %s",
				    json_type_to_name(json_object_get_type(root)));
		json_object_put(root);
		return -EINVAL;
	}
	*out = root;
	return 0;
}

/*
 * An id goes back exactly as it came: an integer json-c holds as int64
 * (json_strict has refused anything it would clamp), or a string of
 * valid UTF-8 (the line is checked, lone surrogates are refused).
 */
static int check_id(json_object *id, struct json_line_error *e)
{
	switch (json_object_get_type(id)) {
	case json_type_int:
		if (json_object_get_int64(id) != INT64_MAX || json_object_get_uint64(id) == INT64_MAX)
			return 0;
		return json_line_error_set(e, KVMLU_ERR_INVALID,
					   "\"id\": integer beyond 2^63-1 (ids are int64 or strings)");
	case json_type_string:
		if (json_object_get_string_len(id) <= KVMLU_WIRE_ID_STR_MAX)
			return 0;
		return json_line_error_set(e, KVMLU_ERR_INVALID, "\"id\": string longer than %d bytes",
					   KVMLU_WIRE_ID_STR_MAX);
	default:
		return json_line_error_set(e, KVMLU_ERR_INVALID,
					   "\"id\" must be an integer or a string, not %s",
					   json_type_to_name(json_object_get_type(id)));
	}
}

int json_line_request_parse(const char *line, size_t len, struct json_line_request *req,
			    struct json_line_error *e)
{
	json_object *v;
	int rc;

	memset(req, 0, sizeof(*req));
	rc = json_line_parse(line, len, &req->root, e);
	if (rc)
		return rc;
	/* The id first, so that every later error can echo it. */
	if (json_object_object_get_ex(req->root, KVMLU_WIRE_ID, &v)) {
		if (check_id(v, e))
			return -EINVAL;
		req->id = v;
	}
	json_object_object_foreach(req->root, key, val) {
		char shown[68];

		if (strcmp(key, KVMLU_WIRE_CMD) && strcmp(key, KVMLU_WIRE_ID) && strcmp(key, KVMLU_WIRE_ARGS))
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "unknown key \"%s\" (arguments go under \"args\")",
						   json_strict_shorten(key, 64, shown));
		(void)val;
	}
	if (!json_object_object_get_ex(req->root, KVMLU_WIRE_CMD, &v))
		return json_line_error_set(e, KVMLU_ERR_INVALID, "missing \"cmd\"");
	if (!json_object_is_type(v, json_type_string))
		return json_line_error_set(e, KVMLU_ERR_INVALID, "\"cmd\" must be a string, not %s",
					   json_type_to_name(json_object_get_type(v)));
	if (json_object_get_string_len(v) < 1 || json_object_get_string_len(v) > KVMLU_WIRE_CMD_MAX ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return json_line_error_set(e, KVMLU_ERR_INVALID,
					   "\"cmd\" must be 1..%d characters without NUL",
					   KVMLU_WIRE_CMD_MAX);
	req->cmd = json_object_get_string(v);
	if (json_object_object_get_ex(req->root, KVMLU_WIRE_ARGS, &v)) {
		if (!json_object_is_type(v, json_type_object))
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						   "\"args\" must be an object, not %s",
						   json_type_to_name(json_object_get_type(v)));
		req->args = v;
	}
	return 0;
}

void json_line_request_free(struct json_line_request *req)
{
	json_object_put(req->root);
	memset(req, 0, sizeof(*req));
}

json_object *json_line_reply_ok(json_object *ret, json_object *id)
{
	json_object *o = json_object_new_object();

	if (!o) {
		json_object_put(ret);
		return NULL;
	}
	json_object_object_add(o, KVMLU_WIRE_OK, json_object_new_boolean(1));
	json_object_object_add(o, KVMLU_WIRE_RETURN, ret ? ret : json_object_new_object());
	if (id)
		json_object_object_add(o, KVMLU_WIRE_ID, json_object_get(id));
	return o;
}

json_object *json_line_reply_error(const char *class, const char *desc, json_object *id)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();

	if (!o || !e) {
		json_object_put(o);
		json_object_put(e);
		return NULL;
	}
	json_object_object_add(e, KVMLU_WIRE_CLASS,
			       json_object_new_string(class ? class : KVMLU_ERR_FAILED));
	json_object_object_add(e, KVMLU_WIRE_DESC, json_object_new_string(desc ? desc : ""));
	json_object_object_add(o, KVMLU_WIRE_OK, json_object_new_boolean(0));
	json_object_object_add(o, KVMLU_WIRE_ERROR, e);
	if (id)
		json_object_object_add(o, KVMLU_WIRE_ID, json_object_get(id));
	return o;
}

/* Bytes of the valid UTF-8 character at s (at most n bytes), 0 if none. */
static size_t utf8_char(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t want, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		want = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		want = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		want = 4;
	else
		return 0;
	/* No overlong forms, no surrogates, nothing past U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < want || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < want; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return want;
}

char *json_line_format(json_object *obj, size_t *len)
{
	static const char replacement[] = "\xef\xbf\xbd";	/* U+FFFD */
	const unsigned char *s;
	size_t n, i, o, bad = 0, c;
	char *out;

	s = (const unsigned char *)json_object_to_json_string_length(obj,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (!s)
		return NULL;
	/*
	 * json-c copies string bytes as they are. A string from a file name,
	 * a state FDT or a cut message may not be UTF-8, and the peer parses
	 * strictly: every byte that is not part of a valid character goes out
	 * as U+FFFD. Such bytes are only ever inside strings (json-c escapes
	 * everything below 0x20), so the line stays JSON.
	 */
	for (i = 0; i < n; i += c ? c : 1)
		if (!(c = utf8_char(s + i, n - i)))
			bad++;
	out = malloc(n + 2 * bad + 2);
	if (!out)
		return NULL;
	for (i = 0, o = 0; i < n; i += c ? c : 1) {
		c = utf8_char(s + i, n - i);
		if (c) {
			memcpy(out + o, s + i, c);
			o += c;
		} else {
			memcpy(out + o, replacement, 3);
			o += 3;
		}
	}
	out[o] = '\n';
	out[o + 1] = '\0';
	*len = o + 1;
	return out;
}

int json_line_write(int fd, json_object *obj)
{
	size_t len, off = 0;
	char *s = json_line_format(obj, &len);
	int rc = 0;

	if (!s)
		return -ENOMEM;
	while (off < len) {
		ssize_t n = send(fd, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		off += (size_t)n;
	}
	free(s);
	return rc;
}

json_object *json_line_new_ms(double ms)
{
	char text[40];
	double r;

	if (!isfinite(ms))
		ms = 0;
	/* Microseconds are as fine as any duration here means. */
	r = round(ms * 1000.0) / 1000.0;
	snprintf(text, sizeof(text), "%.3f", r);
	/* Trailing zeros say nothing: 12.500 -> 12.5, 3.000 -> 3.0. */
	for (size_t n = strlen(text); n > 2 && text[n - 1] == '0' && text[n - 2] != '.'; n--)
		text[n - 1] = '\0';
	return json_object_new_double_s(r, text);
}

json_object *json_line_new_u64(uint64_t v)
{
	return json_object_new_int64(v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v);
}

void json_line_reader_init(struct json_line_reader *r, int fd)
{
	r->fd = fd;
	r->len = 0;
	r->used = 0;
}

int json_line_next(struct json_line_reader *r, int timeout_ms, const char **line, size_t *len,
		   char *err, size_t errlen)
{
	int64_t deadline = timeout_ms < 0 ? 0 : kvmlu_mono_ms() + timeout_ms;

	/* The line handed out last time, and its newline, are done with now. */
	memmove(r->buf, r->buf + r->used, r->len - r->used);
	r->len -= r->used;
	r->used = 0;
	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);
		struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
		ssize_t n;
		int wait, ret;

		if (nl) {
			*line = r->buf;
			*len = (size_t)(nl - r->buf);
			r->used = *len + 1;
			return 0;
		}
		/* The buffer holds a full line and its newline: without one, too long. */
		if (r->len > KVMLU_WIRE_LINE_MAX)
			return kvmlu_err(err, errlen, -EMSGSIZE, "line longer than %d bytes",
					 KVMLU_WIRE_LINE_MAX);
		wait = -1;
		if (timeout_ms >= 0) {
			int64_t left = deadline - kvmlu_mono_ms();

			if (left <= 0)
				return kvmlu_err(err, errlen, -ETIMEDOUT, "no answer within %d ms",
						 timeout_ms);
			wait = (int)left;
		}
		ret = poll(&pfd, 1, wait);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			return kvmlu_err(err, errlen, -errno, "poll: %s", strerror(errno));
		}
		if (ret == 0)
			continue;
		n = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return kvmlu_err(err, errlen, -errno, "read: %s", strerror(errno));
		}
		if (n == 0)
			return kvmlu_err(err, errlen, -EPIPE, "connection closed%s",
					 r->len ? " in the middle of a line" : "");
		r->len += (size_t)n;
	}
}

int json_line_read(struct json_line_reader *r, int timeout_ms, json_object **out,
		   char *err, size_t errlen)
{
	struct json_line_error e;
	const char *line;
	size_t llen;
	int ret;

	ret = json_line_next(r, timeout_ms, &line, &llen, err, errlen);
	if (ret)
		return ret;
	if (json_line_parse(line, llen, out, &e))
		return kvmlu_err(err, errlen, -EBADMSG, "line of %zu bytes refused: %s", llen,
				 e.desc);
	return 0;
}

int json_line_connect(const char *path, int timeout_ms, char *err, size_t errlen)
{
	int64_t deadline = kvmlu_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, e;

	if (kvmlu_unix_addr(path, &sa, &salen))
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "socket path '%s' empty or too long",
				 path);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return kvmlu_err(err, errlen, -errno, "socket: %s", strerror(errno));
		if (!connect(fd, (struct sockaddr *)&sa, salen))
			return fd;
		e = errno;
		close(fd);
		/* EAGAIN: the listener's backlog is full; worth another try. */
		if (e != EAGAIN || kvmlu_mono_ms() >= deadline)
			return kvmlu_err(err, errlen, -e, "connect %s: %s", path, strerror(e));
		usleep(10000);
	}
}

/* The reply in err for an {"ok":false} line; -EREMOTEIO. */
static int reply_error(json_object *reply, const char *cmd, char *err, size_t errlen)
{
	json_object *e, *cls, *desc = NULL;

	if (json_object_object_get_ex(reply, KVMLU_WIRE_ERROR, &e) &&
	    json_object_object_get_ex(e, KVMLU_WIRE_CLASS, &cls) &&
	    json_object_is_type(cls, json_type_string)) {
		json_object_object_get_ex(e, KVMLU_WIRE_DESC, &desc);
		return kvmlu_err(err, errlen, -EREMOTEIO, "%s: %s", json_object_get_string(cls),
				 desc && json_object_is_type(desc, json_type_string) ?
				 json_object_get_string(desc) : "(no description)");
	}
	return kvmlu_err(err, errlen, -EREMOTEIO, "%s: %s failed (no error class)",
			 KVMLU_ERR_FAILED, cmd);
}

int json_line_call(int fd, struct json_line_reader *r, const char *cmd, json_object *args,
		   int id, int timeout_ms, void (*on_event)(void *arg, json_object *ev),
		   void *arg, json_object **ret, char *err, size_t errlen)
{
	json_object *req, *reply = NULL, *v;
	int rc;

	if (ret)
		*ret = NULL;
	req = json_object_new_object();
	if (!req) {
		json_object_put(args);
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	}
	json_object_object_add(req, KVMLU_WIRE_CMD, json_object_new_string(cmd));
	json_object_object_add(req, KVMLU_WIRE_ID, json_object_new_int(id));
	if (args)
		json_object_object_add(req, KVMLU_WIRE_ARGS, args);
	rc = json_line_write(fd, req);
	json_object_put(req);
	if (rc) {
		/*
		 * A peer that refuses us (PermissionDenied) answers and closes
		 * before reading: its reply is still there to be read.
		 */
		if (json_line_read(r, 200, &reply, NULL, 0))
			return kvmlu_err(err, errlen, rc, "%s: send: %s", cmd, strerror(-rc));
		goto have_reply;
	}
	for (;;) {
		rc = json_line_read(r, timeout_ms, &reply, err, errlen);
		if (rc)
			return rc;
		if (json_object_object_get_ex(reply, KVMLU_KEY_EVENT, NULL)) {
			if (on_event)
				on_event(arg, reply);
			json_object_put(reply);
			continue;
		}
		/* A reply to an earlier request that timed out: not ours. */
		if (json_object_object_get_ex(reply, KVMLU_WIRE_ID, &v) &&
		    json_object_is_type(v, json_type_int) && json_object_get_int(v) != id) {
			json_object_put(reply);
			continue;
		}
		break;
	}
have_reply:
	if (!json_object_object_get_ex(reply, KVMLU_WIRE_OK, &v) ||
	    !json_object_is_type(v, json_type_boolean)) {
		rc = kvmlu_err(err, errlen, -EBADMSG, "%s: reply without \"ok\"", cmd);
	} else if (json_object_get_boolean(v)) {
		if (ret && json_object_object_get_ex(reply, KVMLU_WIRE_RETURN, &v))
			*ret = json_object_get(v);
		rc = 0;
	} else {
		rc = reply_error(reply, cmd, err, errlen);
	}
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
