// SPDX-License-Identifier: GPL-2.0
/*
 * The libvirt domain reports (see domain_report.h): their names and
 * times, and their JSON form, written into the journal before the kexec
 * and into the report, read back by the next kernel's agent.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/journal/domain_report.h"
#include "common/err.h"
#include "common/luo_session.h"

static const char *const state_names[LIBVIRT_DOMAIN_NR_STATES] = {
	[LIBVIRT_DOMAIN_LISTED] = "listed",
	[LIBVIRT_DOMAIN_OPTED_OUT] = "opted-out",
	[LIBVIRT_DOMAIN_SUSPENDED] = "suspended",
	[LIBVIRT_DOMAIN_SAVED] = "saved",
	[LIBVIRT_DOMAIN_RESUMED] = "resumed",
	[LIBVIRT_DOMAIN_RESTORED] = "restored",
	[LIBVIRT_DOMAIN_FAILED] = "failed",
};

const char *libvirt_domain_state_name(enum libvirt_domain_state s)
{
	return (unsigned int)s < LIBVIRT_DOMAIN_NR_STATES ? state_names[s] : "?";
}

bool domain_report_uuid_ok(const char *s)
{
	if (strlen(s) != DOMAIN_UUID_LEN)
		return false;
	for (int i = 0; i < DOMAIN_UUID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		char c = s[i];

		if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
					(c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}

int64_t libvirt_domain_downtime_ns(const struct libvirt_domain_report *d)
{
	if (!d->suspended_ns || !d->resumed_ns)
		return -1;
	return d->resumed_ns - d->suspended_ns;
}

static void add_time(struct json_object *o, const char *key, int64_t ns)
{
	if (ns)
		json_object_object_add(o, key, json_object_new_int64(ns));
}

const char *libvirt_domain_action(const struct libvirt_domain_report *d)
{
	if (d->state == LIBVIRT_DOMAIN_OPTED_OUT)
		return "left-alone";
	if (d->saved_ns && d->in_place)
		return "ram-in-place";
	if (d->saved_ns)
		return "managed-save";
	if (d->suspended_ns)
		return "suspend";
	return "none";
}

const char *libvirt_domain_result(const struct libvirt_domain_report *d)
{
	switch (d->state) {
	case LIBVIRT_DOMAIN_LISTED:
		return "untouched";	/* listed, never suspended: refused or stopped before it */
	case LIBVIRT_DOMAIN_RESUMED:
	case LIBVIRT_DOMAIN_RESTORED:
	case LIBVIRT_DOMAIN_OPTED_OUT:
		return "ok";
	case LIBVIRT_DOMAIN_FAILED:
		return "failed";
	default:
		return "pending";	/* suspended or saved: the update is under way */
	}
}

static void add_str(struct json_object *o, const char *key, const char *v)
{
	if (v[0])
		json_object_object_add(o, key, json_object_new_string(v));
}

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	if (v)
		json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

/*
 * What the next kernel's agent needs to bring an in-place domain back.
 * A prepare that failed midway has only some of it: what is set is written.
 */
static void add_in_place(struct json_object *o, const struct libvirt_domain_report *d)
{
	json_object_object_add(o, "in_place", json_object_new_boolean(true));
	add_str(o, "session", d->session);
	add_str(o, "checksum", d->checksum);
	add_str(o, "checksum_after", d->checksum_after);
	add_u64(o, "memory_bytes", d->memory_bytes);
	add_u64(o, "image_bytes", d->image_bytes > 0 ? (uint64_t)d->image_bytes : 0);
	add_str(o, "image_xxh64", d->image_xxh64);
	add_str(o, "image_path", d->image_path);
	add_u64(o, "qemu_uid", d->qemu_uid);
	add_u64(o, "image_uid", d->image_uid);
	add_u64(o, "image_gid", d->image_gid);
	add_u64(o, "image_mode", d->image_mode);
}

struct json_object *libvirt_domain_reports_to_json(const struct libvirt_domain_report *d,
						   unsigned int nr)
{
	struct json_object *arr = json_object_new_array();

	for (unsigned int i = 0; arr && i < nr; i++) {
		struct json_object *o = json_object_new_object();
		int64_t down = libvirt_domain_downtime_ns(&d[i]);

		if (!o) {
			json_object_put(arr);
			return NULL;
		}
		json_object_object_add(o, "name", json_object_new_string(d[i].name));
		json_object_object_add(o, "uuid", json_object_new_string(d[i].uuid));
		json_object_object_add(o, "state",
				       json_object_new_string(libvirt_domain_state_name(d[i].state)));
		json_object_object_add(o, "was_paused", json_object_new_boolean(d[i].was_paused));
		add_time(o, "suspended_ns", d[i].suspended_ns);
		add_time(o, "saved_ns", d[i].saved_ns);
		add_time(o, "resumed_ns", d[i].resumed_ns);
		/* Written for the reader of the report; checked for type, not used, when read back. */
		json_object_object_add(o, "action", json_object_new_string(libvirt_domain_action(&d[i])));
		json_object_object_add(o, "result", json_object_new_string(libvirt_domain_result(&d[i])));
		if (down >= 0)
			json_object_object_add(o, "downtime_ns", json_object_new_int64(down));
		if (d[i].error[0])
			json_object_object_add(o, "error", json_object_new_string(d[i].error));
		if (d[i].ram[0])
			json_object_object_add(o, "ram", json_object_new_string(d[i].ram));
		if (d[i].in_place)
			add_in_place(o, &d[i]);
		json_object_array_add(arr, o);
	}
	return arr;
}

static int get_str(struct json_object *o, const char *key, bool required, char *buf,
		   size_t len, char *err, size_t errlen)
{
	struct json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return kvmlu_err(err, errlen, -EINVAL, "libvirt domain without \"%s\"", key);
		buf[0] = '\0';
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain \"%s\" is not a string", key);
	s = json_object_get_string(v);
	if (strlen(s) >= len)
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain \"%s\" longer than %zu",
				 key, len - 1);
	snprintf(buf, len, "%s", s);
	return 0;
}

static int get_time(struct json_object *o, const char *key, int64_t *out, char *err,
		    size_t errlen)
{
	struct json_object *v;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain \"%s\" is not a time", key);
	*out = json_object_get_int64(v);
	return 0;
}

static bool hex_ok(const char *s, size_t want)
{
	if (strlen(s) != want)
		return false;
	for (size_t i = 0; i < want; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int get_u32(struct json_object *o, const char *key, uint32_t *out, char *err,
		   size_t errlen)
{
	int64_t v;
	int ret = get_time(o, key, &v, err, errlen);

	if (ret || v > UINT32_MAX)
		return ret ? ret : kvmlu_err(err, errlen, -EINVAL, "libvirt domain \"%s\" too big",
					     key);
	*out = (uint32_t)v;
	return 0;
}

/*
 * The in-place half of an entry: all of it or none. What the next
 * kernel's agent retrieves, writes and hands to QEMU comes from here, so
 * every field is checked for its form.
 */
static int in_place_from_json(struct json_object *o, struct libvirt_domain_report *d,
			      char *err, size_t errlen)
{
	struct json_object *v;
	int64_t mem, img;
	int ret;

	if (!json_object_object_get_ex(o, "in_place", &v)) {
		static const char *const only[] = { "session", "checksum", "checksum_after",
			"memory_bytes", "image_bytes", "image_xxh64", "image_path", "qemu_uid",
			"image_uid", "image_gid", "image_mode", NULL };

		for (int k = 0; only[k]; k++)
			if (json_object_object_get_ex(o, only[k], &v))
				return kvmlu_err(err, errlen, -EINVAL,
						 "libvirt domain \"%s\" without in_place", only[k]);
		return 0;
	}
	if (!json_object_is_type(v, json_type_boolean) || !json_object_get_boolean(v))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain in_place not true");
	d->in_place = true;
	if ((ret = get_str(o, "session", false, d->session, sizeof(d->session), err, errlen)) ||
	    (ret = get_str(o, "checksum", false, d->checksum, sizeof(d->checksum), err, errlen)) ||
	    (ret = get_str(o, "checksum_after", false, d->checksum_after,
			   sizeof(d->checksum_after), err, errlen)) ||
	    (ret = get_str(o, "image_xxh64", false, d->image_xxh64, sizeof(d->image_xxh64), err,
			   errlen)) ||
	    (ret = get_str(o, "image_path", false, d->image_path, sizeof(d->image_path), err,
			   errlen)) ||
	    (ret = get_time(o, "memory_bytes", &mem, err, errlen)) ||
	    (ret = get_time(o, "image_bytes", &img, err, errlen)) ||
	    (ret = get_u32(o, "qemu_uid", &d->qemu_uid, err, errlen)) ||
	    (ret = get_u32(o, "image_uid", &d->image_uid, err, errlen)) ||
	    (ret = get_u32(o, "image_gid", &d->image_gid, err, errlen)) ||
	    (ret = get_u32(o, "image_mode", &d->image_mode, err, errlen)))
		return ret;
	d->memory_bytes = (uint64_t)mem;
	d->image_bytes = img;
	/* Each field in its form when there; a hash that could not be taken is "-". */
	if ((d->checksum[0] && !hex_ok(d->checksum, 32) && strspn(d->checksum, "-") != 32) ||
	    (d->checksum_after[0] && !hex_ok(d->checksum_after, 32)) ||
	    (d->image_xxh64[0] && !hex_ok(d->image_xxh64, 16)))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain checksum or image_xxh64 not "
				 "lowercase hex of its length");
	if (d->session[0] && (!luo_session_is_domain_name(d->session) ||
			      strcmp(d->session + strlen(LUO_SESSION_LV_PREFIX), d->uuid)))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain session \"%.64s\" is not "
				 "kvmlu/lv/<its uuid>", d->session);
	if (mem % 4096 || d->image_mode > 07777 || (d->image_path[0] && d->image_path[0] != '/'))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain in place: memory_bytes, "
				 "image_mode or image_path out of range");
	return 0;
}

/*
 * Saved in place, the next kernel's agent restores from these: every one
 * must be there (a prepare that failed midway never leaves it saved past
 * the rollback, and never across a kexec).
 */
static int in_place_complete(const struct libvirt_domain_report *d, char *err, size_t errlen)
{
	if (!d->in_place || d->state != LIBVIRT_DOMAIN_SAVED)
		return 0;
	if (!d->session[0] || !hex_ok(d->checksum, 32) || !hex_ok(d->image_xxh64, 16) ||
	    !d->image_path[0] || !d->memory_bytes || d->image_bytes <= 0)
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain %.64s saved in place "
				 "without its session, checksum, image_xxh64, image_path, "
				 "memory_bytes or image_bytes", d->name);
	return 0;
}

static int entry_from_json(struct json_object *o, struct libvirt_domain_report *d,
			   char *err, size_t errlen)
{
	/* downtime_ms: what journals before integer durations also wrote; still read. */
	static const char *const keys[] = { "name", "uuid", "state", "was_paused",
		"suspended_ns", "saved_ns", "resumed_ns", "downtime_ns", "downtime_ms",
		"action", "result", "error", "ram", "in_place", "session", "checksum",
		"checksum_after", "memory_bytes", "image_bytes", "image_xxh64", "image_path",
		"qemu_uid", "image_uid", "image_gid", "image_mode", NULL };
	struct json_object *v;
	char state[24];
	unsigned int st;
	int ret;

	if (!json_object_is_type(o, json_type_object))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain entry is not an object");
	json_object_object_foreach(o, key, val) {
		unsigned int k;

		(void)val;
		for (k = 0; keys[k] && strcmp(keys[k], key); k++)
			;
		if (!keys[k])
			return kvmlu_err(err, errlen, -EINVAL, "libvirt domain key \"%.32s\" unknown",
					 key);
	}
	memset(d, 0, sizeof(*d));
	if ((ret = get_str(o, "name", true, d->name, sizeof(d->name), err, errlen)) ||
	    (ret = get_str(o, "uuid", true, d->uuid, sizeof(d->uuid), err, errlen)) ||
	    (ret = get_str(o, "state", true, state, sizeof(state), err, errlen)) ||
	    (ret = get_str(o, "error", false, d->error, sizeof(d->error), err, errlen)) ||
	    (ret = get_str(o, "ram", false, d->ram, sizeof(d->ram), err, errlen)) ||
	    (ret = get_time(o, "suspended_ns", &d->suspended_ns, err, errlen)) ||
	    (ret = get_time(o, "saved_ns", &d->saved_ns, err, errlen)) ||
	    (ret = get_time(o, "resumed_ns", &d->resumed_ns, err, errlen)))
		return ret;
	if ((json_object_object_get_ex(o, "action", &v) && !json_object_is_type(v, json_type_string)) ||
	    (json_object_object_get_ex(o, "result", &v) && !json_object_is_type(v, json_type_string)) ||
	    (json_object_object_get_ex(o, "downtime_ms", &v) &&
	     !json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)) ||
	    (json_object_object_get_ex(o, "downtime_ns", &v) && !json_object_is_type(v, json_type_int)))
		return kvmlu_err(err, errlen, -EINVAL,
				 "libvirt domain action, result or downtime of the wrong type");
	if (!domain_report_uuid_ok(d->uuid))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain uuid \"%s\" is not a UUID",
				 d->uuid);
	for (st = 0; st < LIBVIRT_DOMAIN_NR_STATES; st++)
		if (!strcmp(state, libvirt_domain_state_name(st)))
			break;
	if (st == LIBVIRT_DOMAIN_NR_STATES)
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domain state \"%s\" unknown", state);
	d->state = (enum libvirt_domain_state)st;
	if (json_object_object_get_ex(o, "was_paused", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return kvmlu_err(err, errlen, -EINVAL, "libvirt domain was_paused not a boolean");
		d->was_paused = json_object_get_boolean(v);
	}
	ret = in_place_from_json(o, d, err, errlen);
	return ret ? ret : in_place_complete(d, err, errlen);
}

int libvirt_domain_reports_from_json(struct json_object *arr, struct libvirt_domain_report *d,
				     unsigned int *nr, char *err, size_t errlen)
{
	struct libvirt_domain_report *tmp;
	size_t n;
	int ret = 0;

	if (!json_object_is_type(arr, json_type_array))
		return kvmlu_err(err, errlen, -EINVAL, "libvirt domains is not an array");
	n = json_object_array_length(arr);
	if (n > DOMAIN_REPORTS_MAX)
		return kvmlu_err(err, errlen, -E2BIG, "%zu libvirt domains, at most %d", n,
				 DOMAIN_REPORTS_MAX);
	/* Parsed aside first, so a bad entry leaves d as it was. */
	tmp = calloc(n ? n : 1, sizeof(*tmp));
	if (!tmp)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n && !ret; i++)
		ret = entry_from_json(json_object_array_get_idx(arr, i), &tmp[i], err, errlen);
	for (size_t i = 0; i < n && !ret; i++)
		for (size_t k = 0; k < i && !ret; k++)
			if (!strcasecmp(tmp[i].uuid, tmp[k].uuid))
				ret = kvmlu_err(err, errlen, -EINVAL,
						"libvirt domain uuid %s listed twice", tmp[i].uuid);
	if (!ret) {
		memcpy(d, tmp, n * sizeof(*tmp));
		*nr = (unsigned int)n;
	}
	free(tmp);
	return ret;
}
