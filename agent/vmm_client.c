// SPDX-License-Identifier: GPL-2.0
/* Requests to a VMM control socket (see vmm_client.h). */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_err.h"
#include "agent/json_line.h"
#include "agent/vmm_client.h"

int vmm_client_call(const char *path, const char *cmd, int timeout_ms,
		    struct json_object **ret, char *err, size_t errlen)
{
	struct json_line_reader *r;
	int fd, rc;

	fd = json_line_connect(path, timeout_ms, err, errlen);
	if (fd < 0)
		return fd;
	r = malloc(sizeof(*r));
	if (!r) {
		rc = agent_err(err, errlen, -ENOMEM, "out of memory");
		goto err_close;
	}
	json_line_reader_init(r, fd);
	rc = json_line_call(fd, r, cmd, NULL, 1, timeout_ms, NULL, NULL, ret, err, errlen);
	free(r);
err_close:
	close(fd);
	return rc;
}

const char *vmm_client_reply_str(struct json_object *ret, const char *const *keys)
{
	struct json_object *v;

	for (; ret && *keys; keys++)
		if (json_object_object_get_ex(ret, *keys, &v) &&
		    json_object_is_type(v, json_type_string))
			return json_object_get_string(v);
	return NULL;
}

long long vmm_client_reply_int(struct json_object *ret, const char *const *keys)
{
	struct json_object *v;

	for (; ret && *keys; keys++)
		if (json_object_object_get_ex(ret, *keys, &v) &&
		    json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
			return (long long)json_object_get_int64(v);
	return -1;
}

long long vmm_client_reply_ms_as_ns(struct json_object *ret, const char *key)
{
	struct json_object *v;
	double ms;

	if (!ret || !json_object_object_get_ex(ret, key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return 0;
	ms = json_object_get_double(v);
	return ms > 0 && ms < 1e9 ? (long long)(ms * 1e6) : 0;
}
