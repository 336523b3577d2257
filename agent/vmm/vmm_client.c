// SPDX-License-Identifier: GPL-2.0
/* Requests to a VMM control socket (see vmm_client.h). */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/vmm/vmm_client.h"
#include "common/err.h"
#include "common/json_line.h"
#include "kvmlu/control_wire.h"
#include "kvmlu/version.h"

int vmm_client_call(const char *path, const char *cmd, int timeout_ms,
		    struct json_object **ret, char *err, size_t errlen)
{
	return vmm_client_call_args(path, cmd, NULL, timeout_ms, ret, err, errlen);
}

int vmm_client_call_args(const char *path, const char *cmd, struct json_object *args,
			 int timeout_ms, struct json_object **ret, char *err, size_t errlen)
{
	struct json_line_reader *r = NULL;
	int fd, rc;

	fd = json_line_connect(path, timeout_ms, err, errlen);
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		rc = kvmlu_err(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	json_line_reader_init(r, fd);
	/* json_line_call takes args' reference, whatever happens. */
	rc = json_line_call(fd, r, cmd, args, 1, timeout_ms, NULL, NULL, ret, err, errlen);
	args = NULL;
out:
	json_object_put(args);
	free(r);
	if (fd >= 0)
		close(fd);
	return rc;
}

const char *vmm_client_reply_str(struct json_object *ret, const char *key)
{
	struct json_object *v;

	if (ret && json_object_object_get_ex(ret, key, &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

long long vmm_client_reply_int(struct json_object *ret, const char *key)
{
	struct json_object *v;

	if (ret && json_object_object_get_ex(ret, key, &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
		return (long long)json_object_get_int64(v);
	return -1;
}

int64_t vmm_client_reply_ns(struct json_object *ret, const char *key)
{
	long long ns = vmm_client_reply_int(ret, key);

	return ns > 0 ? (int64_t)ns : 0;
}

void vmm_client_reply_fields(struct json_object *ret, const struct vmm_reply_field *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int64_t v = vmm_client_reply_ns(ret, f[i].key);

		if (v > 0 || !f[i].keep)
			*f[i].field = v;
	}
}

int vmm_client_check_protocol(struct json_object *status, char *err, size_t errlen)
{
	const char *version = vmm_client_reply_str(status, KVMLU_KEY_VERSION);
	long long protocol = vmm_client_reply_int(status, KVMLU_KEY_PROTOCOL);

	/* Protocol 1 had no key: its durations were float ms. */
	if (protocol < 0)
		protocol = 1;
	if (protocol == KVMLU_WIRE_PROTOCOL)
		return 0;
	return kvmlu_err(err, errlen, -EPROTO,
			 "its kvmlu-vmm %s speaks control protocol %lld, this agent %s speaks %d: "
			 "live-upgrade the VM onto this release's kvmlu-vmm first "
			 "(upgrade with args.binary)",
			 version ? version : "(no version)", protocol, KVMLU_VERSION,
			 KVMLU_WIRE_PROTOCOL);
}
