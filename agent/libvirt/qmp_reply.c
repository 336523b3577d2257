// SPDX-License-Identifier: GPL-2.0
/* QMP lines and answers, read strictly (see qmp_reply.h). No lifecycle. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/libvirt/qmp_reply.h"
#include "common/err.h"
#include "common/json_line.h"

/* s into out as printable ASCII, other bytes '?', cut with "...". */
static void printable(const char *s, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < outlen; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	out[i] = '\0';
	if (s[i] && outlen > 4)
		memcpy(out + outlen - 4, "...", 4);
}

static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, type))
		return NULL;
	return v;
}

/* An integer member in 0..max. */
static int read_uint(json_object *o, const char *key, uint64_t max, uint64_t *out,
		     char *err, size_t errlen)
{
	json_object *v = member(o, key, json_type_int);

	if (!v)
		return kvmlu_err(err, errlen, -EPROTO, "\"%s\" missing or not an integer", key);
	if (json_object_get_int64(v) < 0 || json_object_get_uint64(v) > max)
		return kvmlu_err(err, errlen, -EPROTO, "\"%s\" %s outside 0..%llu", key,
				 json_object_to_json_string(v), (unsigned long long)max);
	*out = json_object_get_uint64(v);
	return 0;
}

static int read_bool(json_object *o, const char *key, bool *out, char *err, size_t errlen)
{
	json_object *v = member(o, key, json_type_boolean);

	if (!v)
		return kvmlu_err(err, errlen, -EPROTO, "\"%s\" missing or not a boolean", key);
	*out = json_object_get_boolean(v);
	return 0;
}

int qmp_line_parse(const char *text, size_t len, struct qmp_line *l, char *err, size_t errlen)
{
	static const char *const kinds[] = { "QMP", "event", "return", "error" };
	struct json_line_error je;
	json_object *v, *cls, *desc;
	int found = -1, nr = 0, rc;

	memset(l, 0, sizeof(*l));
	if (len > QMP_LINE_MAX)
		return kvmlu_err(err, errlen, -EMSGSIZE, "QMP line of %zu bytes, limit %d", len,
				 QMP_LINE_MAX);
	if (json_line_parse(text, len, &l->root, &je))
		return kvmlu_err(err, errlen, -EBADMSG, "QMP line refused: %s", je.desc);
	for (int i = 0; i < 4; i++)
		if (json_object_object_get_ex(l->root, kinds[i], NULL)) {
			found = i;
			nr++;
		}
	if (nr != 1) {
		rc = kvmlu_err(err, errlen, -EPROTO,
			       "QMP line with %s of \"QMP\", \"event\", \"return\", \"error\"",
			       nr ? "more than one" : "none");
		goto err_free;
	}
	l->kind = (enum qmp_line_kind)found;
	if (l->kind == QMP_LINE_GREETING) {
		if (!member(l->root, "QMP", json_type_object)) {
			rc = kvmlu_err(err, errlen, -EPROTO, "greeting \"QMP\" is not an object");
			goto err_free;
		}
		return 0;
	}
	if (l->kind == QMP_LINE_EVENT) {
		if (!member(l->root, "event", json_type_string)) {
			rc = kvmlu_err(err, errlen, -EPROTO, "event name is not a string");
			goto err_free;
		}
		return 0;
	}
	if (json_object_object_get_ex(l->root, "id", &v)) {
		if (!json_object_is_type(v, json_type_int)) {
			rc = kvmlu_err(err, errlen, -EPROTO, "reply id is %s, kvmlu sends integers",
				       json_type_to_name(json_object_get_type(v)));
			goto err_free;
		}
		l->has_id = true;
		l->id = json_object_get_int64(v);
	}
	if (l->kind == QMP_LINE_RETURN) {
		json_object_object_get_ex(l->root, "return", &l->ret);
		return 0;
	}
	v = member(l->root, "error", json_type_object);
	cls = member(v, "class", json_type_string);
	desc = member(v, "desc", json_type_string);
	if (!cls || !desc) {
		rc = kvmlu_err(err, errlen, -EPROTO, "error without a class and desc string");
		goto err_free;
	}
	{
		char c[64], d[QMP_ERROR_MAX - sizeof(c) - 2];

		printable(json_object_get_string(cls), c, sizeof(c));
		printable(json_object_get_string(desc), d, sizeof(d));
		snprintf(l->error, sizeof(l->error), "%s: %s", c, d);
	}
	return 0;
err_free:
	qmp_line_free(l);
	return rc;
}

void qmp_line_free(struct qmp_line *l)
{
	json_object_put(l->root);
	memset(l, 0, sizeof(*l));
}

static int version_of(json_object *qemu, struct qmp_version *v, char *err, size_t errlen)
{
	uint64_t major, minor, micro;
	int rc;

	if (!qemu)
		return kvmlu_err(err, errlen, -EPROTO, "no version.qemu object");
	rc = read_uint(qemu, "major", 65535, &major, err, errlen);
	if (!rc)
		rc = read_uint(qemu, "minor", 65535, &minor, err, errlen);
	if (!rc)
		rc = read_uint(qemu, "micro", 65535, &micro, err, errlen);
	if (rc)
		return rc;
	v->major = (unsigned int)major;
	v->minor = (unsigned int)minor;
	v->micro = (unsigned int)micro;
	return 0;
}

int qmp_greeting_version(const struct qmp_line *greeting, struct qmp_version *v,
			 char *err, size_t errlen)
{
	json_object *qmp = member(greeting->root, "QMP", json_type_object);

	if (greeting->kind != QMP_LINE_GREETING || !qmp)
		return kvmlu_err(err, errlen, -EPROTO, "not a QMP greeting");
	return version_of(member(member(qmp, "version", json_type_object), "qemu",
				 json_type_object), v, err, errlen);
}

int qmp_version_read(json_object *ret, struct qmp_version *v, char *err, size_t errlen)
{
	return version_of(member(ret, "qemu", json_type_object), v, err, errlen);
}

int qmp_status_read(json_object *ret, struct qmp_status *s, char *err, size_t errlen)
{
	json_object *st = member(ret, "status", json_type_string);
	const char *w;
	int rc;

	rc = read_bool(ret, "running", &s->running, err, errlen);
	if (rc)
		return rc;
	if (!st)
		return kvmlu_err(err, errlen, -EPROTO, "\"status\" missing or not a string");
	w = json_object_get_string(st);
	if (!w[0] || strspn(w, "abcdefghijklmnopqrstuvwxyz-") != strlen(w) ||
	    strlen(w) >= sizeof(s->status))
		return kvmlu_err(err, errlen, -EPROTO, "\"status\" is not a short lowercase word");
	memcpy(s->status, w, strlen(w) + 1);
	return 0;
}

int qmp_capability_read(json_object *ret, const char *cap, bool *on, char *err, size_t errlen)
{
	size_t n;
	int seen = 0;

	if (!json_object_is_type(ret, json_type_array))
		return kvmlu_err(err, errlen, -EPROTO, "migration capabilities are not a list");
	n = json_object_array_length(ret);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(ret, i);
		json_object *name = member(e, "capability", json_type_string);
		int rc;

		if (!name)
			return kvmlu_err(err, errlen, -EPROTO,
					 "migration capability %zu has no name", i);
		if (strcmp(json_object_get_string(name), cap))
			continue;
		if (seen++)
			return kvmlu_err(err, errlen, -EPROTO, "capability %s listed twice", cap);
		rc = read_bool(e, "state", on, err, errlen);
		if (rc)
			return rc;
	}
	if (!seen)
		return kvmlu_err(err, errlen, -ENOENT, "QEMU has no migration capability %s", cap);
	return 0;
}

int qmp_memdev_read(json_object *ret, struct qmp_memdev *devs, size_t max, size_t *nr,
		    char *err, size_t errlen)
{
	size_t n;

	*nr = 0;
	if (!json_object_is_type(ret, json_type_array))
		return kvmlu_err(err, errlen, -EPROTO, "memory backends are not a list");
	n = json_object_array_length(ret);
	if (n > max)
		return kvmlu_err(err, errlen, -E2BIG, "%zu memory backends, at most %zu read", n,
				 max);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(ret, i), *id;
		struct qmp_memdev d = { .id = "" };
		int rc;

		if (!json_object_is_type(e, json_type_object))
			return kvmlu_err(err, errlen, -EPROTO, "memory backend %zu is not an object",
					 i);
		if (json_object_object_get_ex(e, "id", &id)) {
			const char *s = json_object_get_string(id);

			if (!json_object_is_type(id, json_type_string) ||
			    (size_t)json_object_get_string_len(id) >= sizeof(d.id) ||
			    strlen(s) != (size_t)json_object_get_string_len(id))
				return kvmlu_err(err, errlen, -EPROTO,
						 "memory backend %zu: id not a string of < %d bytes",
						 i, QMP_MEMDEV_ID_MAX);
			memcpy(d.id, s, strlen(s) + 1);
		}
		rc = read_uint(e, "size", UINT64_MAX, &d.size, err, errlen);
		if (!rc)
			rc = read_bool(e, "share", &d.share, err, errlen);
		if (!rc)
			rc = read_bool(e, "prealloc", &d.prealloc, err, errlen);
		if (rc)
			return rc;
		devs[(*nr)++] = d;
	}
	return 0;
}
