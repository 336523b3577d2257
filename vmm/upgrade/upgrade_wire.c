// SPDX-License-Identifier: GPL-2.0
/*
 * Framing of the upgrade messages (see upgrade_wire.h): json-c for the
 * text, fd_pass for the fds. The receiver treats the peer as untrusted
 * like any input: the message must be one JSON object with a string
 * "msg"; the caller checks the rest.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fd_pass.h"
#include "vmm/state/state_vm.h"
#include "vmm/upgrade/upgrade_wire.h"

int upgrade_wire_send(int sock, json_object *obj, const int *fds, unsigned int nfds,
		      char *err, size_t errlen)
{
	const char *txt = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	int ret;

	if (!txt) {
		json_object_put(obj);
		return -ENOMEM;
	}
	ret = fd_pass_send(sock, fds, nfds, txt, strlen(txt), err, errlen);
	json_object_put(obj);
	return ret;
}

int upgrade_wire_recv(int sock, json_object **obj, int *fds, unsigned int max_fds,
		      unsigned int *nfds, char *err, size_t errlen)
{
	char buf[UPGRADE_WIRE_MAX_JSON + 1];
	json_object *o, *msg;
	size_t len = 0;
	int ret;

	ret = fd_pass_recv(sock, fds, max_fds, nfds, buf, UPGRADE_WIRE_MAX_JSON, &len,
			   FD_PASS_CLOEXEC, err, errlen);
	if (ret)
		return ret;
	buf[len] = '\0';
	o = json_tokener_parse(buf);
	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "msg", &msg) ||
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
