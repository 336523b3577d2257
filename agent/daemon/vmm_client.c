// SPDX-License-Identifier: GPL-2.0
/* Requests to a VMM control socket (see vmm_client.h). */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/daemon/vmm_client.h"
#include "common/err.h"
#include "common/json_line.h"

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

/* Durations of 1e9 ms (11 days) or more are nonsense from a VMM. */
#define NS_LIMIT 1000000000000000LL

int vmm_client_ms_text_to_ns(const char *text, int64_t *ns)
{
	/* ns = digits * 10^exp10: ms are 10^6 ns, each fraction digit takes one off. */
	int64_t digits = 0;
	int exp10 = 6, nr = 0, e = 0, esign = 1;
	const char *p = text;
	bool frac = false, any = false;

	for (; *p && *p != 'e' && *p != 'E'; p++) {
		if (*p == '.' && !frac) {
			frac = true;
			continue;
		}
		if (*p < '0' || *p > '9')
			return -EINVAL;
		any = true;
		/* Leading zeros cost nothing; past 18 digits the rest cannot matter. */
		if ((digits || *p != '0') && nr >= 18) {
			if (!frac)
				exp10++;
			continue;
		}
		if (digits || *p != '0')
			nr++;
		digits = digits * 10 + (*p - '0');
		if (frac)
			exp10--;
	}
	if (!any)
		return -EINVAL;
	if (*p) {
		p++;
		if (*p == '+' || *p == '-')
			esign = *p++ == '-' ? -1 : 1;
		if (!*p)
			return -EINVAL;
		for (; *p; p++) {
			if (*p < '0' || *p > '9' || e > 100)
				return -EINVAL;
			e = e * 10 + (*p - '0');
		}
		exp10 += esign * e;
	}
	for (; exp10 < 0 && digits; exp10++)
		digits /= 10;	/* below a nanosecond */
	if (!digits) {
		*ns = 0;
		return 0;
	}
	for (; exp10 > 0; exp10--) {
		if (digits >= NS_LIMIT)
			return -ERANGE;
		digits *= 10;
	}
	if (digits >= NS_LIMIT)
		return -ERANGE;
	*ns = digits;
	return 0;
}

int64_t vmm_client_reply_ns(struct json_object *ret, const char *ns_key, const char *ms_key)
{
	struct json_object *v;
	int64_t ns;

	if (!ret)
		return 0;
	if (ns_key && json_object_object_get_ex(ret, ns_key, &v) &&
	    json_object_is_type(v, json_type_int))
		return json_object_get_int64(v) > 0 ? json_object_get_int64(v) : 0;
	/* json-c keeps a parsed number's text: that text is what the VMM meant. */
	if (!json_object_object_get_ex(ret, ms_key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) ||
	    vmm_client_ms_text_to_ns(json_object_get_string(v), &ns))
		return 0;
	return ns;
}
