// SPDX-License-Identifier: GPL-2.0
/* The lvram-open exchange's two lines (see lvram_request.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "agent/libvirt/lvram_request.h"
#include "common/err.h"
#include "common/json_strict.h"
#include "kvmlu/control_wire.h"

#define LVRAM_DEPTH	3	/* {"args":{...}} and {"return":{...}} */

bool lvram_uuid_valid(const char *s)
{
	for (int i = 0; i < LVRAM_UUID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' :
		    !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return s[LVRAM_UUID_LEN] == '\0';
}

static int parse_object(const char *text, size_t len, json_object **root, char *err,
			size_t errlen)
{
	struct json_strict_error je;
	int rc;

	if (len && text[len - 1] == '\n')
		len--;
	if (len > LVRAM_LINE_MAX)
		return kvmlu_err(err, errlen, -EMSGSIZE, "line longer than %d bytes",
				 LVRAM_LINE_MAX);
	rc = json_strict_parse(text, len, LVRAM_DEPTH, JSON_STRICT_UTF8, root, &je);
	if (rc)
		return kvmlu_err(err, errlen, -EINVAL, "%s", je.desc);
	if (!json_object_is_type(*root, json_type_object)) {
		json_object_put(*root);
		return kvmlu_err(err, errlen, -EINVAL, "not a JSON object");
	}
	return 0;
}

/* Whether o has exactly the keys of want (NULL-terminated); err names the first odd one. */
static int exact_keys(json_object *o, const char *where, const char *const *want,
		      char *err, size_t errlen)
{
	unsigned int n = 0, seen = 0;

	for (; want[n]; n++)
		;
	json_object_object_foreach(o, key, v) {
		unsigned int i;

		(void)v;
		for (i = 0; i < n && strcmp(key, want[i]); i++)
			;
		if (i == n)
			return kvmlu_err(err, errlen, -EINVAL, "%s: unknown key \"%.32s\"", where, key);
		seen++;
	}
	if (seen != n)
		return kvmlu_err(err, errlen, -EINVAL, "%s: needs exactly %u keys", where, n);
	return 0;
}

int lvram_request_parse(const char *text, size_t len, struct lvram_request *rq,
			char *err, size_t errlen)
{
	static const char *const top[] = { "cmd", "args", NULL };
	static const char *const args[] = { KVMLU_LVRAM_KEY_UUID, KVMLU_LVRAM_KEY_SIZE, NULL };
	struct lvram_request r;
	json_object *root, *v, *a;
	int64_t size;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = parse_object(text, len, &root, err, errlen);
	if (rc)
		return rc;
	rc = exact_keys(root, "request", top, err, errlen);
	if (rc)
		goto out;
	json_object_object_get_ex(root, "cmd", &v);
	if (!json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), KVMLU_LVRAM_CMD_OPEN)) {
		rc = kvmlu_err(err, errlen, -EINVAL, "\"cmd\" is not \"%s\"", KVMLU_LVRAM_CMD_OPEN);
		goto out;
	}
	json_object_object_get_ex(root, "args", &a);
	if (!json_object_is_type(a, json_type_object)) {
		rc = kvmlu_err(err, errlen, -EINVAL, "\"args\" is not an object");
		goto out;
	}
	rc = exact_keys(a, "args", args, err, errlen);
	if (rc)
		goto out;
	json_object_object_get_ex(a, KVMLU_LVRAM_KEY_UUID, &v);
	if (!json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) != LVRAM_UUID_LEN ||
	    !lvram_uuid_valid(json_object_get_string(v))) {
		rc = kvmlu_err(err, errlen, -EINVAL, "\"uuid\" is not a lowercase 8-4-4-4-12 UUID");
		goto out;
	}
	memcpy(r.uuid, json_object_get_string(v), LVRAM_UUID_LEN + 1);
	json_object_object_get_ex(a, KVMLU_LVRAM_KEY_SIZE, &v);
	size = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
	/* json-c clamps past INT64_MAX; the strict scan refused past 2^64 only. */
	if (size <= 0 || (uint64_t)size > LVRAM_RAM_MAX || size % 4096) {
		rc = kvmlu_err(err, errlen, -EINVAL,
			       "\"size\" is not a multiple of 4096 in 4096..16 TiB");
		goto out;
	}
	r.size = (uint64_t)size;
	*rq = r;
out:
	json_object_put(root);
	return rc;
}

int lvram_request_format(const struct lvram_request *rq, char *buf, size_t buflen)
{
	int n;

	if (!lvram_uuid_valid(rq->uuid) || !rq->size || rq->size > LVRAM_RAM_MAX ||
	    rq->size % 4096)
		return -EINVAL;
	n = snprintf(buf, buflen, "{\"cmd\":\"%s\",\"args\":{\"%s\":\"%s\",\"%s\":%llu}}\n",
		     KVMLU_LVRAM_CMD_OPEN, KVMLU_LVRAM_KEY_UUID, rq->uuid, KVMLU_LVRAM_KEY_SIZE,
		     (unsigned long long)rq->size);
	return n < 0 || (size_t)n >= buflen ? -ENOSPC : 0;
}

int lvram_reply_format_ok(bool held, bool ignore_shared, char *buf, size_t buflen)
{
	int n = snprintf(buf, buflen, "{\"ok\":true,\"return\":{\"%s\":%s,\"%s\":%s}}\n",
			 KVMLU_LVRAM_KEY_HELD, held ? "true" : "false",
			 KVMLU_LVRAM_KEY_IGNORE_SHARED, ignore_shared ? "true" : "false");

	return n < 0 || (size_t)n >= buflen ? -ENOSPC : 0;
}

int lvram_reply_format_error(const char *error_class, const char *desc, char *buf,
			     size_t buflen)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();
	const char *s;
	int n;

	json_object_object_add(e, "class", json_object_new_string(error_class));
	json_object_object_add(e, "desc", json_object_new_string(desc));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", e);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	n = snprintf(buf, buflen, "%s\n", s ? s : "");
	json_object_put(o);
	return !s || n < 0 || (size_t)n >= buflen ? -ENOSPC : 0;
}

static int get_bool(json_object *o, const char *key, bool *out, char *err, size_t errlen)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
		return kvmlu_err(err, errlen, -EINVAL, "\"%s\" is not true or false", key);
	*out = json_object_get_boolean(v);
	return 0;
}

/* Printable ASCII only: the text goes into the domain's log. */
static void copy_printable(char *out, size_t outlen, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < outlen; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[i] = '\0';
}

int lvram_reply_parse(const char *text, size_t len, struct lvram_reply *r,
		      char *err, size_t errlen)
{
	static const char *const ok_keys[] = { "ok", "return", NULL };
	static const char *const err_keys[] = { "ok", "error", NULL };
	static const char *const ret_keys[] = { KVMLU_LVRAM_KEY_HELD,
						KVMLU_LVRAM_KEY_IGNORE_SHARED, NULL };
	static const char *const e_keys[] = { "class", "desc", NULL };
	struct lvram_reply out = { 0 };
	json_object *root, *v, *c, *d;
	int rc;

	rc = parse_object(text, len, &root, err, errlen);
	if (rc)
		return rc;
	rc = get_bool(root, "ok", &out.ok, err, errlen);
	if (rc)
		goto out;
	rc = exact_keys(root, "answer", out.ok ? ok_keys : err_keys, err, errlen);
	if (rc)
		goto out;
	if (out.ok) {
		json_object_object_get_ex(root, "return", &v);
		rc = json_object_is_type(v, json_type_object) ?
			exact_keys(v, "return", ret_keys, err, errlen) :
			kvmlu_err(err, errlen, -EINVAL, "\"return\" is not an object");
		if (!rc)
			rc = get_bool(v, KVMLU_LVRAM_KEY_HELD, &out.held, err, errlen);
		if (!rc)
			rc = get_bool(v, KVMLU_LVRAM_KEY_IGNORE_SHARED, &out.ignore_shared, err,
				      errlen);
		if (!rc && out.ignore_shared && !out.held)
			rc = kvmlu_err(err, errlen, -EINVAL, "ignore_shared without held RAM");
	} else {
		json_object_object_get_ex(root, "error", &v);
		rc = json_object_is_type(v, json_type_object) ?
			exact_keys(v, "error", e_keys, err, errlen) :
			kvmlu_err(err, errlen, -EINVAL, "\"error\" is not an object");
		if (!rc && (!json_object_object_get_ex(v, "class", &c) ||
			    !json_object_is_type(c, json_type_string) ||
			    !json_object_object_get_ex(v, "desc", &d) ||
			    !json_object_is_type(d, json_type_string)))
			rc = kvmlu_err(err, errlen, -EINVAL, "\"class\" and \"desc\" must be strings");
		if (!rc) {
			copy_printable(out.error_class, sizeof(out.error_class),
				       json_object_get_string(c));
			copy_printable(out.desc, sizeof(out.desc), json_object_get_string(d));
		}
	}
	if (!rc)
		*r = out;
out:
	json_object_put(root);
	return rc;
}
