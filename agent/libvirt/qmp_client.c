// SPDX-License-Identifier: GPL-2.0
/* kvmlu's QMP client (see qmp_client.h); lines read by common/json_line.c's reader. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/libvirt/qmp_client.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"

/* The next line that is not an event, by the deadline; l filled on success. */
static int next_answer(struct qmp_client *c, int64_t deadline, struct qmp_line *l,
		       char *err, size_t errlen)
{
	unsigned int events = 0;

	for (;;) {
		int64_t left = deadline - kvmlu_mono_ms();
		const char *line;
		size_t len;
		int rc;

		if (left <= 0)
			return kvmlu_err(err, errlen, -ETIMEDOUT, "no answer within %d ms",
					 c->timeout_ms);
		rc = json_line_next(c->r, (int)left, &line, &len, err, errlen);
		if (rc == -ETIMEDOUT)
			return kvmlu_err(err, errlen, rc, "no answer within %d ms", c->timeout_ms);
		if (rc)
			return rc;
		rc = qmp_line_parse(line, len, l, err, errlen);
		if (rc)
			return rc;
		if (l->kind != QMP_LINE_EVENT)
			return 0;
		qmp_line_free(l);
		c->events_skipped++;
		if (++events > QMP_EVENTS_MAX)
			return kvmlu_err(err, errlen, -EPROTO, "more than %d events, no answer",
					 QMP_EVENTS_MAX);
	}
}

static int send_command(struct qmp_client *c, const char *cmd, json_object *args, int64_t id)
{
	json_object *req = json_object_new_object();
	int rc = -ENOMEM;

	if (!req) {
		json_object_put(args);
		return rc;
	}
	if (json_object_object_add(req, "execute", json_object_new_string(cmd)))
		goto out;
	if (args && json_object_object_add(req, "arguments", args))
		goto out;
	args = NULL;	/* req holds it now */
	if (json_object_object_add(req, "id", json_object_new_int64(id)))
		goto out;
	rc = json_line_write(c->fd, req);
out:
	json_object_put(args);
	json_object_put(req);
	return rc;
}

int qmp_execute(struct qmp_client *c, const char *cmd, json_object *args, json_object **ret,
		char *err, size_t errlen)
{
	int64_t deadline = kvmlu_mono_ms() + c->timeout_ms, id;
	struct qmp_line l;
	char why[256];
	int rc;

	if (ret)
		*ret = NULL;
	if (c->broken) {
		json_object_put(args);
		return kvmlu_err(err, errlen, -EPIPE, "%s: QMP connection unusable after an error",
				 cmd);
	}
	id = c->next_id++;
	rc = send_command(c, cmd, args, id);
	if (rc) {
		c->broken = true;
		return kvmlu_err(err, errlen, rc, "%s: send: %s", cmd, strerror(-rc));
	}
	rc = next_answer(c, deadline, &l, why, sizeof(why));
	if (rc) {
		c->broken = true;
		return kvmlu_err(err, errlen, rc, "%s: %s", cmd, why);
	}
	/* One command at a time: the answer is ours or the stream is lost. */
	if (l.kind == QMP_LINE_GREETING || (l.kind == QMP_LINE_RETURN && !l.has_id) ||
	    (l.has_id && l.id != id)) {
		c->broken = true;
		rc = kvmlu_err(err, errlen, -EPROTO, "%s: answer %s, id %lld expected", cmd,
			       l.kind == QMP_LINE_GREETING ? "is a second greeting" :
			       l.has_id ? "for another id" : "without an id", (long long)id);
	} else if (l.kind == QMP_LINE_ERROR) {
		rc = kvmlu_err(err, errlen, -EREMOTEIO, "%s: %s", cmd, l.error);
	} else if (ret) {
		*ret = json_object_get(l.ret);
	}
	qmp_line_free(&l);
	return rc;
}

int qmp_client_open(struct qmp_client *c, int fd, int timeout_ms, char *err, size_t errlen)
{
	struct qmp_line l;
	char why[256];
	int rc;

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
	c->next_id = 1;
	c->r = malloc(sizeof(*c->r));
	if (!c->r) {
		rc = kvmlu_err(err, errlen, -ENOMEM, "out of memory");
		goto err_close;
	}
	json_line_reader_init(c->r, fd);
	rc = next_answer(c, kvmlu_mono_ms() + c->timeout_ms, &l, why, sizeof(why));
	if (rc) {
		rc = kvmlu_err(err, errlen, rc, "QMP greeting: %s", why);
		goto err_close;
	}
	rc = qmp_greeting_version(&l, &c->version, why, sizeof(why));
	qmp_line_free(&l);
	if (rc) {
		rc = kvmlu_err(err, errlen, rc, "QMP greeting: %s", why);
		goto err_close;
	}
	rc = qmp_execute(c, "qmp_capabilities", NULL, NULL, err, errlen);
	if (rc)
		goto err_close;
	return 0;
err_close:
	qmp_client_close(c);
	return rc;
}

int qmp_client_connect(struct qmp_client *c, const char *path, int timeout_ms,
		       char *err, size_t errlen)
{
	int fd = json_line_connect(path, timeout_ms, err, errlen);

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (fd < 0)
		return fd;
	return qmp_client_open(c, fd, timeout_ms, err, errlen);
}

void qmp_client_close(struct qmp_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->r);
	c->fd = -1;
	c->r = NULL;
	c->broken = true;
}

/* How a query's return is read (qmp_reply.c), with its output. */
typedef int (*qmp_read_fn)(json_object *ret, void *out, char *err, size_t errlen);

/*
 * A query: its return must have the shape read wants, or the client is
 * broken (QEMU said something kvmlu does not understand). -ENOENT from
 * read (a capability QEMU lacks) is an answer, not a fault.
 */
static int query(struct qmp_client *c, const char *cmd, qmp_read_fn read, void *out,
		 char *err, size_t errlen)
{
	json_object *ret;
	char why[256];
	int rc;

	rc = qmp_execute(c, cmd, NULL, &ret, err, errlen);
	if (rc)
		return rc;
	rc = read(ret, out, why, sizeof(why));
	json_object_put(ret);
	if (rc) {
		if (rc != -ENOENT)
			c->broken = true;
		return kvmlu_err(err, errlen, rc, "%s: %s", cmd, why);
	}
	return 0;
}

static int read_version(json_object *ret, void *out, char *err, size_t errlen)
{
	return qmp_version_read(ret, out, err, errlen);
}

int qmp_query_version(struct qmp_client *c, struct qmp_version *v, char *err, size_t errlen)
{
	return query(c, "query-version", read_version, v, err, errlen);
}

static int read_status(json_object *ret, void *out, char *err, size_t errlen)
{
	return qmp_status_read(ret, out, err, errlen);
}

int qmp_query_status(struct qmp_client *c, struct qmp_status *s, char *err, size_t errlen)
{
	return query(c, "query-status", read_status, s, err, errlen);
}

struct cap_out {
	const char *cap;
	bool *on;
};

static int read_cap(json_object *ret, void *out, char *err, size_t errlen)
{
	struct cap_out *o = out;

	return qmp_capability_read(ret, o->cap, o->on, err, errlen);
}

int qmp_query_migrate_capability(struct qmp_client *c, const char *cap, bool *on,
				 char *err, size_t errlen)
{
	struct cap_out o = { cap, on };

	return query(c, "query-migrate-capabilities", read_cap, &o, err, errlen);
}

struct memdev_out {
	struct qmp_memdev *devs;
	size_t max, *nr;
};

static int read_memdev(json_object *ret, void *out, char *err, size_t errlen)
{
	struct memdev_out *o = out;

	return qmp_memdev_read(ret, o->devs, o->max, o->nr, err, errlen);
}

int qmp_query_memdev(struct qmp_client *c, struct qmp_memdev *devs, size_t max, size_t *nr,
		     char *err, size_t errlen)
{
	struct memdev_out o = { devs, max, nr };

	*nr = 0;
	return query(c, "query-memdev", read_memdev, &o, err, errlen);
}

int qmp_migrate_set_capability(struct qmp_client *c, const char *cap, bool on,
			       char *err, size_t errlen)
{
	json_object *args = json_object_new_object(), *list = json_object_new_array(),
		    *one = json_object_new_object();

	if (!args || !list || !one ||
	    json_object_object_add(one, "capability", json_object_new_string(cap)) ||
	    json_object_object_add(one, "state", json_object_new_boolean(on)) ||
	    json_object_array_add(list, one)) {
		json_object_put(one);
		json_object_put(list);
		json_object_put(args);
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	}
	if (json_object_object_add(args, "capabilities", list)) {
		json_object_put(list);
		json_object_put(args);
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	}
	return qmp_execute(c, "migrate-set-capabilities", args, NULL, err, errlen);
}
