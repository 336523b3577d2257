// SPDX-License-Identifier: GPL-2.0
/*
 * Request parsing and reply formatting (see protocol.h). Every line is
 * untrusted input from a socket peer: json-c parses it with a depth
 * limit in strict mode, and the whole line must be that one object.
 * This file is also what tests/fuzz/fuzz_control_request.c drives.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/protocol.h"

int control_error_set(struct control_error *e, const char *class, const char *fmt, ...)
{
	va_list ap;

	e->class = class;
	va_start(ap, fmt);
	vsnprintf(e->desc, sizeof(e->desc), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int control_check_id(json_object *id, struct control_error *e)
{
	switch (json_object_get_type(id)) {
	case json_type_int:
		return 0;
	case json_type_string:
		if (json_object_get_string_len(id) <= CONTROL_ID_STR_MAX)
			return 0;
		return control_error_set(e, CONTROL_ERR_INVALID,
					 "\"id\": string longer than %d bytes", CONTROL_ID_STR_MAX);
	default:
		return control_error_set(e, CONTROL_ERR_INVALID,
					 "\"id\" must be an integer or a string, not %s",
					 json_type_to_name(json_object_get_type(id)));
	}
}

int control_request_parse(const char *line, size_t len, struct control_request *req,
			  struct control_error *e)
{
	struct json_tokener *tok;
	json_object *root, *v;
	enum json_tokener_error jerr;
	size_t end;

	memset(req, 0, sizeof(*req));
	if (len > CONTROL_LINE_MAX)
		return control_error_set(e, CONTROL_ERR_LINE_TOO_LONG,
					 "request of %zu bytes, limit %d", len, CONTROL_LINE_MAX);
	if (memchr(line, '\0', len))
		return control_error_set(e, CONTROL_ERR_PARSE, "NUL byte in request");
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len)
		return control_error_set(e, CONTROL_ERR_PARSE, "empty request");

	tok = json_tokener_new_ex(CONTROL_JSON_DEPTH);
	if (!tok)
		return control_error_set(e, CONTROL_ERR_FAILED, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, line, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	/* A bare number may go on; the line has ended, so tell json-c with a NUL. */
	if (!root && jerr == json_tokener_continue) {
		root = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		end = len;
	}
	json_tokener_free(tok);
	if (!root && jerr == json_tokener_success)
		return control_error_set(e, CONTROL_ERR_INVALID, "request must be a JSON object, not null");
	if (!root || jerr != json_tokener_success) {
		json_object_put(root);
		if (jerr == json_tokener_continue)
			return control_error_set(e, CONTROL_ERR_PARSE, "incomplete JSON");
		return control_error_set(e, CONTROL_ERR_PARSE, "invalid JSON: %s",
					 json_tokener_error_desc(jerr));
	}
	/* Trailing bytes after the object: a second object or garbage. */
	while (end < len && (line[end] == ' ' || line[end] == '\t'))
		end++;
	if (end != len) {
		json_object_put(root);
		return control_error_set(e, CONTROL_ERR_PARSE,
					 "trailing data after the JSON value at byte %zu", end);
	}
	if (!json_object_is_type(root, json_type_object)) {
		int rc = control_error_set(e, CONTROL_ERR_INVALID,
					   "request must be a JSON object, not %s",
					   json_type_to_name(json_object_get_type(root)));
		json_object_put(root);
		return rc;
	}
	req->root = root;

	/* The id first, so that every later error can echo it. */
	if (json_object_object_get_ex(root, "id", &v)) {
		if (control_check_id(v, e))
			return -EINVAL;
		req->id = v;
	}
	json_object_object_foreach(root, key, val) {
		if (strcmp(key, "cmd") && strcmp(key, "id") && strcmp(key, "args"))
			return control_error_set(e, CONTROL_ERR_INVALID, "unknown key \"%.64s\"", key);
		(void)val;
	}
	if (!json_object_object_get_ex(root, "cmd", &v))
		return control_error_set(e, CONTROL_ERR_INVALID, "missing \"cmd\"");
	if (!json_object_is_type(v, json_type_string))
		return control_error_set(e, CONTROL_ERR_INVALID, "\"cmd\" must be a string, not %s",
					 json_type_to_name(json_object_get_type(v)));
	if (json_object_get_string_len(v) < 1 || json_object_get_string_len(v) > CONTROL_CMD_MAX ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return control_error_set(e, CONTROL_ERR_INVALID,
					 "\"cmd\" must be 1..%d characters without NUL", CONTROL_CMD_MAX);
	req->cmd = json_object_get_string(v);
	if (json_object_object_get_ex(root, "args", &v)) {
		if (!json_object_is_type(v, json_type_object))
			return control_error_set(e, CONTROL_ERR_INVALID,
						 "\"args\" must be an object, not %s",
						 json_type_to_name(json_object_get_type(v)));
		req->args = v;
	}
	return 0;
}

void control_request_free(struct control_request *req)
{
	json_object_put(req->root);
	memset(req, 0, sizeof(*req));
}

static char *control_reply_finish(json_object *reply, json_object *id, size_t *len)
{
	const char *s;
	size_t n;
	char *out;

	if (id)
		json_object_object_add(reply, "id", json_object_get(id));
	s = json_object_to_json_string_length(reply, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	out = s ? malloc(n + 2) : NULL;
	if (out) {
		memcpy(out, s, n);
		out[n] = '\n';
		out[n + 1] = '\0';
		*len = n + 1;
	}
	json_object_put(reply);
	return out;
}

char *control_reply_ok(json_object *ret, json_object *id, size_t *len)
{
	json_object *reply = json_object_new_object();

	if (!reply) {
		json_object_put(ret);
		return NULL;
	}
	json_object_object_add(reply, "ok", json_object_new_boolean(1));
	json_object_object_add(reply, "return", ret ? ret : json_object_new_object());
	return control_reply_finish(reply, id, len);
}

char *control_reply_error(const struct control_error *e, json_object *id, size_t *len)
{
	json_object *reply = json_object_new_object(), *err = json_object_new_object();

	if (!reply || !err) {
		json_object_put(reply);
		json_object_put(err);
		return NULL;
	}
	json_object_object_add(err, "class", json_object_new_string(e->class ? e->class : CONTROL_ERR_FAILED));
	json_object_object_add(err, "desc", json_object_new_string(e->desc));
	json_object_object_add(reply, "ok", json_object_new_boolean(0));
	json_object_object_add(reply, "error", err);
	return control_reply_finish(reply, id, len);
}
