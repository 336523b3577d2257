// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the request parser both control sockets use
 * (json_line_request_parse in common/json_line.c): any byte string a
 * socket peer can send as one line. Parses it, then builds the reply the
 * server would send (ok with the id echoed, or the error), and checks the
 * invariants every reply must keep: one line, newline-terminated, parsed
 * back by the same strict parser a client uses (so valid UTF-8 whatever
 * the request held), with the request's id equal to the one sent, and
 * parsed requests always have a non-empty cmd. Handlers are not run:
 * they need a live VM.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_line.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_line_request req;
	struct json_line_error e = { NULL, "" };
	json_object *obj;
	size_t len = 0;
	char *reply;
	int rc;

	rc = json_line_request_parse((const char *)data, size, &req, &e);
	if (rc == 0) {
		if (!req.cmd || !req.cmd[0])
			abort();
		obj = json_line_reply_ok(NULL, req.id);
	} else {
		if (!e.class)
			abort();
		obj = json_line_reply_error(e.class, e.desc, req.id);
	}
	reply = obj ? json_line_format(obj, &len) : NULL;
	if (reply) {
		json_object *back = NULL, *id = NULL;

		if (len == 0 || reply[len - 1] != '\n' || memchr(reply, '\n', len - 1))
			abort();
		/* A client reads it as strictly as we read requests. */
		if (json_line_parse(reply, len - 1, &back, &e))
			abort();
		json_object_object_get_ex(back, "id", &id);
		if (!json_object_equal(id, req.id))
			abort();
		json_object_put(back);
		free(reply);
	}
	json_object_put(obj);
	json_line_request_free(&req);
	return 0;
}
