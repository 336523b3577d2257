// SPDX-License-Identifier: GPL-2.0
/* The hook's message to the agent (see libvirt_hook_notify.h). */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/libvirt/libvirt_hook_notify.h"
#include "common/err.h"
#include "common/json_line.h"

struct json_object *libvirt_hook_notify_json(const struct libvirt_hook_event *ev)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, KVMLU_ARG_DOMAIN, json_object_new_string(ev->domain));
	json_object_object_add(o, KVMLU_KEY_UUID, json_object_new_string(ev->uuid));
	json_object_object_add(o, KVMLU_ARG_OP, json_object_new_string(libvirt_hook_op_name(ev->op)));
	json_object_object_add(o, KVMLU_ARG_SUB, json_object_new_string(ev->sub));
	json_object_object_add(o, KVMLU_ARG_EXTRA, json_object_new_string(ev->extra));
	return o;
}

int libvirt_hook_notify(const char *sock, const struct libvirt_hook_event *ev,
			int timeout_ms, char *err, size_t errlen)
{
	struct json_line_reader *r;
	struct json_object *extra, *ret = NULL;
	int fd, rc;

	extra = libvirt_hook_notify_json(ev);
	if (!extra)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	fd = json_line_connect(sock, timeout_ms, err, errlen);
	if (fd < 0) {
		rc = fd;
		goto err_put_extra;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		rc = kvmlu_err(err, errlen, -ENOMEM, "out of memory");
		goto err_close;
	}
	json_line_reader_init(r, fd);
	rc = json_line_call(fd, r, LIBVIRT_HOOK_CMD, json_object_get(extra), 1, timeout_ms, NULL, NULL, &ret,
			    err, errlen);
	json_object_put(ret);
	free(r);
err_close:
	close(fd);
err_put_extra:
	json_object_put(extra);
	return rc;
}
