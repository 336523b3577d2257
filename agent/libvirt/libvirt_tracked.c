// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's table of libvirt domains reported by the hook (see
 * libvirt_tracked.h). A socket message is untrusted like the hook's own
 * input, so it goes through the same checks the hook applies.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/libvirt/libvirt_tracked.h"
#include "common/err.h"
#include "kvmlu/control_wire.h"

struct tracked_domain {
	char name[LIBVIRT_HOOK_NAME_MAX];
	char uuid[LIBVIRT_UUID_LEN + 1];
	enum libvirt_hook_op op;
	char sub[LIBVIRT_HOOK_WORD_MAX];
	char extra[LIBVIRT_HOOK_WORD_MAX];
	int64_t updated_ns;
};

static pthread_mutex_t tracked_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int nr_tracked;
static struct tracked_domain tracked[LIBVIRT_TRACKED_MAX];

static const char *const event_keys[] = {
	KVMLU_ARG_DOMAIN, KVMLU_KEY_UUID, KVMLU_ARG_OP, KVMLU_ARG_SUB, KVMLU_ARG_EXTRA
};
#define NR_EVENT_KEYS (sizeof(event_keys) / sizeof(event_keys[0]))

int libvirt_tracked_parse(struct json_object *args, struct libvirt_hook_event *ev,
			  char *err, size_t errlen)
{
	const char *val[NR_EVENT_KEYS];
	struct libvirt_hook_event e;
	char *argv[NR_EVENT_KEYS];
	struct json_object *v;
	int ret;

	if (!json_object_is_type(args, json_type_object))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt-event: no \"args\" object");
	json_object_object_foreach(args, key, jv) {
		bool known = false;

		(void)jv;
		for (size_t i = 0; i < NR_EVENT_KEYS && !known; i++)
			known = !strcmp(key, event_keys[i]);
		if (!known)
			return kvmlu_err(err, errlen, -EINVAL, "libvirt-event: unknown key \"%.32s\"",
					 key);
	}
	for (size_t i = 0; i < NR_EVENT_KEYS; i++) {
		if (!json_object_object_get_ex(args, event_keys[i], &v))
			return kvmlu_err(err, errlen, -EINVAL, "libvirt-event: \"%s\" missing",
					 event_keys[i]);
		if (!json_object_is_type(v, json_type_string))
			return kvmlu_err(err, errlen, -EINVAL, "libvirt-event: \"%s\" is not a string",
					 event_keys[i]);
		val[i] = json_object_get_string(v);
		/* An embedded NUL would let the checks below see another string. */
		if (strlen(val[i]) != (size_t)json_object_get_string_len(v))
			return kvmlu_err(err, errlen, -EINVAL, "libvirt-event: \"%s\" contains NUL",
					 event_keys[i]);
	}
	/* argv as the hook got it: program, domain, op, sub, extra. */
	argv[0] = (char *)"libvirt-event";
	argv[1] = (char *)val[0];
	argv[2] = (char *)val[2];
	argv[3] = (char *)val[3];
	argv[4] = (char *)val[4];
	ret = libvirt_hook_event_parse_args((int)NR_EVENT_KEYS, argv, &e, err, errlen);
	if (ret)
		return ret;
	if (!domain_report_uuid_ok(val[1]))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt-event: uuid \"%.40s\" is not a UUID",
				 val[1]);
	if (!libvirt_hook_op_reported(e.op))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt-event: operation %s is not tracked",
				 libvirt_hook_op_name(e.op));
	snprintf(e.uuid, sizeof(e.uuid), "%s", val[1]);
	*ev = e;
	return 0;
}

const char *libvirt_tracked_state_for(enum libvirt_hook_op op)
{
	switch (op) {
	case LIBVIRT_HOOK_START:
		return "starting";
	case LIBVIRT_HOOK_STOPPED:
	case LIBVIRT_HOOK_RELEASE:
		return "stopped";
	default:
		return "running";	/* started, restore, reconnect, attach */
	}
}

static bool stopped(const struct tracked_domain *d)
{
	return !strcmp(libvirt_tracked_state_for(d->op), "stopped");
}

int libvirt_tracked_record(const struct libvirt_hook_event *ev, int64_t now_ns,
			   char *err, size_t errlen)
{
	struct tracked_domain *d = NULL;
	int ret = 0;

	pthread_mutex_lock(&tracked_lock);
	for (unsigned int i = 0; i < nr_tracked && !d; i++)
		if (!strcasecmp(tracked[i].uuid, ev->uuid))
			d = &tracked[i];
	if (!d && nr_tracked < LIBVIRT_TRACKED_MAX)
		d = &tracked[nr_tracked++];
	if (!d) {
		struct tracked_domain *old = NULL;

		for (unsigned int i = 0; i < nr_tracked; i++)
			if (stopped(&tracked[i]) && (!old || tracked[i].updated_ns < old->updated_ns))
				old = &tracked[i];
		d = old;
	}
	if (!d) {
		ret = kvmlu_err(err, errlen, -ENOSPC,
				"libvirt-event: %d domains tracked, none stopped", LIBVIRT_TRACKED_MAX);
		goto out;
	}
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", ev->domain);
	snprintf(d->uuid, sizeof(d->uuid), "%s", ev->uuid);
	d->op = ev->op;
	snprintf(d->sub, sizeof(d->sub), "%s", ev->sub);
	snprintf(d->extra, sizeof(d->extra), "%s", ev->extra);
	d->updated_ns = now_ns;
out:
	pthread_mutex_unlock(&tracked_lock);
	return ret;
}

void libvirt_tracked_count(unsigned int *total, unsigned int *active)
{
	pthread_mutex_lock(&tracked_lock);
	*total = nr_tracked;
	*active = 0;
	for (unsigned int i = 0; i < nr_tracked; i++)
		*active += !stopped(&tracked[i]);
	pthread_mutex_unlock(&tracked_lock);
}

struct json_object *libvirt_tracked_to_json(void)
{
	struct json_object *arr = json_object_new_array();

	pthread_mutex_lock(&tracked_lock);
	for (unsigned int i = 0; arr && i < nr_tracked; i++) {
		const struct tracked_domain *d = &tracked[i];
		struct json_object *o = json_object_new_object();

		if (!o)
			break;
		json_object_object_add(o, KVMLU_KEY_NAME, json_object_new_string(d->name));
		json_object_object_add(o, KVMLU_KEY_UUID, json_object_new_string(d->uuid));
		json_object_object_add(o, KVMLU_KEY_STATE,
				       json_object_new_string(libvirt_tracked_state_for(d->op)));
		json_object_object_add(o, KVMLU_ARG_OP, json_object_new_string(libvirt_hook_op_name(d->op)));
		json_object_object_add(o, KVMLU_ARG_SUB, json_object_new_string(d->sub));
		json_object_object_add(o, KVMLU_ARG_EXTRA, json_object_new_string(d->extra));
		json_object_object_add(o, KVMLU_KEY_UPDATED_NS, json_object_new_int64(d->updated_ns));
		json_object_array_add(arr, o);
	}
	pthread_mutex_unlock(&tracked_lock);
	return arr;
}

void libvirt_tracked_reset(void)
{
	pthread_mutex_lock(&tracked_lock);
	nr_tracked = 0;
	memset(tracked, 0, sizeof(tracked));
	pthread_mutex_unlock(&tracked_lock);
}

int libvirt_tracked_event(struct json_object *args, int64_t now_ns, char *err, size_t errlen)
{
	struct libvirt_hook_event ev;
	int ret = libvirt_tracked_parse(args, &ev, err, errlen);

	if (ret)
		return -EINVAL;
	return libvirt_tracked_record(&ev, now_ns, err, errlen);
}
