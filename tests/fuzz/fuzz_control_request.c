// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the control request parser
 * (vmm/control/protocol.c): any byte string a socket peer can send as one
 * line. Parses it, then builds the reply the server would send (ok with
 * the id echoed, or the error), and checks the invariants every reply
 * must keep: one line, newline-terminated, and parsed requests always
 * have a non-empty cmd. Handlers are not run: they need a live VM.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_request req;
	struct control_error e = { NULL, "" };
	size_t len = 0;
	char *reply;
	int rc;

	rc = control_request_parse((const char *)data, size, &req, &e);
	if (rc == 0) {
		if (!req.cmd || !req.cmd[0])
			abort();
		reply = control_reply_ok(NULL, req.id, &len);
	} else {
		if (!e.class)
			abort();
		reply = control_reply_error(&e, req.id, &len);
	}
	if (reply) {
		if (len == 0 || reply[len - 1] != '\n' || memchr(reply, '\n', len - 1))
			abort();
		free(reply);
	}
	control_request_free(&req);
	return 0;
}
