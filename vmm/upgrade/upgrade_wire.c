// SPDX-License-Identifier: GPL-2.0
/*
 * Framing of the upgrade messages (see upgrade_wire.h): common/json_line.h
 * for the text (one line, without its newline, in the one number form),
 * fd_pass for the fds. The receiver treats the peer as untrusted like any
 * input: the message is parsed as strictly as a control request (UTF-8,
 * depth limit, nothing after the object) and must have a string "msg";
 * the caller checks the rest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fd_pass.h"
#include "common/json_line.h"
#include "vmm/state/state_vm.h"
#include "vmm/upgrade/upgrade_wire.h"

int upgrade_wire_send(int sock, json_object *obj, const int *fds, unsigned int nfds,
		      char *err, size_t errlen)
{
	size_t len;
	char *txt = json_line_format(obj, &len);
	int ret;

	json_object_put(obj);
	if (!txt)
		return kvmlu_err(err, errlen, -ENOMEM, "upgrade message: out of memory");
	/* A message is one object already: its line needs no newline. */
	ret = fd_pass_send(sock, fds, nfds, txt, len - 1, err, errlen);
	free(txt);
	return ret;
}

int upgrade_wire_recv(int sock, json_object **obj, int *fds, unsigned int max_fds,
		      unsigned int *nfds, char *err, size_t errlen)
{
	char buf[UPGRADE_WIRE_MAX_JSON + 1];
	struct json_line_error e = { NULL, "" };
	json_object *o = NULL, *msg;
	size_t len = 0;
	int ret;

	ret = fd_pass_recv(sock, fds, max_fds, nfds, buf, UPGRADE_WIRE_MAX_JSON, &len,
			   FD_PASS_CLOEXEC, err, errlen);
	if (ret)
		return ret;
	buf[len] = '\0';
	if (json_line_parse(buf, len, &o, &e)) {
		for (unsigned int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return kvmlu_err(err, errlen, -EPROTO, "upgrade message refused: %s", e.desc);
	}
	if (!json_object_object_get_ex(o, "msg", &msg) ||
	    !json_object_is_type(msg, json_type_string)) {
		json_object_put(o);
		for (unsigned int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return kvmlu_err(err, errlen, -EPROTO, "upgrade message is not {\"msg\":...}: %.80s",
				 buf);
	}
	*obj = o;
	return 0;
}
