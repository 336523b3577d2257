// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the agent's libvirt-event handling (agent/libvirt/libvirt_tracked.c):
 * the hook's own message is accepted, anything else is refused whole, and
 * the table follows each domain by UUID, making room only from stopped ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <json-c/json.h>

#include "agent/libvirt/libvirt_hook_notify.h"
#include "agent/libvirt/libvirt_tracked.h"

#define UUID "3f1c0b2a-1111-4222-8333-944455556666"

static struct json_object *msg(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	return o;
}

static int parse_text(const char *text, struct libvirt_hook_event *ev, char *err)
{
	struct json_object *o = msg(text);
	int ret = libvirt_tracked_parse(o, ev, err, 256);

	json_object_put(o);
	return ret;
}

static int reset(void **state)
{
	(void)state;
	libvirt_tracked_reset();
	return 0;
}

static void test_libvirt_tracked_accepts_the_hooks_own_message(void **state)
{
	struct libvirt_hook_event in = { .op = LIBVIRT_HOOK_RESTORE }, out;
	struct json_object *o;
	char err[256];

	(void)state;
	snprintf(in.domain, sizeof(in.domain), "web 1");
	snprintf(in.uuid, sizeof(in.uuid), UUID);
	snprintf(in.sub, sizeof(in.sub), "begin");
	snprintf(in.extra, sizeof(in.extra), "-");
	/* What libvirt_hook_notify() sends under "args". */
	o = libvirt_hook_notify_json(&in);
	assert_int_equal(libvirt_tracked_parse(o, &out, err, sizeof(err)), 0);
	json_object_put(o);
	assert_string_equal(out.domain, "web 1");
	assert_string_equal(out.uuid, UUID);
	assert_int_equal(out.op, LIBVIRT_HOOK_RESTORE);
	assert_string_equal(out.sub, "begin");
	assert_string_equal(out.extra, "-");
}

static void test_libvirt_tracked_refuses_bad_messages_whole(void **state)
{
	static const char *const bad[][2] = {
		{ "{\"domain\":\"w\",\"uuid\":\"" UUID "\",\"op\":\"started\",\"sub\":\"begin\"}",
		  "\"extra\" missing" },
		{ "{\"domain\":\"w\",\"uuid\":\"" UUID "\",\"op\":\"started\",\"sub\":\"begin\",\"extra\":\"-\",\"xml\":\"\"}",
		  "unknown key \"xml\"" },
		{ "{\"domain\":\"w\",\"uuid\":\"" UUID "\",\"op\":\"started\",\"sub\":\"begin\",\"extra\":1}",
		  "\"extra\" is not a string" },
		{ "{\"domain\":\"w\",\"uuid\":\"" UUID "x\",\"op\":\"started\",\"sub\":\"begin\",\"extra\":\"-\"}",
		  "is not a UUID" },
		{ "{\"domain\":\"w\",\"uuid\":\"" UUID "\",\"op\":\"kill\",\"sub\":\"begin\",\"extra\":\"-\"}",
		  "operation \"kill\" unknown" },
		{ "{\"domain\":\"w\",\"uuid\":\"" UUID "\",\"op\":\"prepare\",\"sub\":\"begin\",\"extra\":\"-\"}",
		  "prepare is not tracked" },
		{ "{\"domain\":\"a/b\",\"uuid\":\"" UUID "\",\"op\":\"started\",\"sub\":\"begin\",\"extra\":\"-\"}",
		  "domain name" },
		{ "{\"domain\":\"w\\u0000x\",\"uuid\":\"" UUID "\",\"op\":\"started\",\"sub\":\"begin\",\"extra\":\"-\"}",
		  "contains NUL" },
		{ "{\"domain\":\"w\",\"uuid\":\"" UUID "\",\"op\":\"started\",\"sub\":\"Begin;\",\"extra\":\"-\"}",
		  "sub-operation" },
	};
	struct libvirt_hook_event ev;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&ev, 0x5a, sizeof(ev));
		err[0] = 0;
		assert_int_equal(parse_text(bad[i][0], &ev, err), -EINVAL);
		if (!strstr(err, bad[i][1]))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i][1]);
		/* Refused whole: ev not written. */
		assert_int_equal(((unsigned char *)&ev)[0], 0x5a);
	}
}

static struct libvirt_hook_event event(const char *name, int n, enum libvirt_hook_op op)
{
	struct libvirt_hook_event ev = { .op = op };

	snprintf(ev.domain, sizeof(ev.domain), "%s", name);
	snprintf(ev.uuid, sizeof(ev.uuid), "3f1c0b2a-1111-4222-8333-%012d", n);
	snprintf(ev.sub, sizeof(ev.sub), "begin");
	snprintf(ev.extra, sizeof(ev.extra), "-");
	return ev;
}

static const char *state_of(struct json_object *arr, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);

		if (!strcmp(json_object_get_string(json_object_object_get(o, "name")), name))
			return json_object_get_string(json_object_object_get(o, "state"));
	}
	return NULL;
}

static void test_libvirt_tracked_follows_a_domain_by_uuid(void **state)
{
	struct libvirt_hook_event ev = event("web1", 1, LIBVIRT_HOOK_START);
	unsigned int total, active;
	struct json_object *arr;
	char err[256];

	(void)state;
	assert_int_equal(libvirt_tracked_record(&ev, 10, err, sizeof(err)), 0);
	ev.op = LIBVIRT_HOOK_STARTED;
	assert_int_equal(libvirt_tracked_record(&ev, 20, err, sizeof(err)), 0);
	ev = event("db", 2, LIBVIRT_HOOK_RECONNECT);
	assert_int_equal(libvirt_tracked_record(&ev, 30, err, sizeof(err)), 0);
	libvirt_tracked_count(&total, &active);
	assert_int_equal(total, 2);
	assert_int_equal(active, 2);

	/* Renamed in libvirt: same UUID, one entry, the new name. */
	ev = event("web1-renamed", 1, LIBVIRT_HOOK_STOPPED);
	assert_int_equal(libvirt_tracked_record(&ev, 40, err, sizeof(err)), 0);
	libvirt_tracked_count(&total, &active);
	assert_int_equal(total, 2);
	assert_int_equal(active, 1);
	arr = libvirt_tracked_to_json();
	assert_int_equal(json_object_array_length(arr), 2);
	assert_null(state_of(arr, "web1"));
	assert_string_equal(state_of(arr, "web1-renamed"), "stopped");
	assert_string_equal(state_of(arr, "db"), "running");
	json_object_put(arr);
}

static void test_libvirt_tracked_makes_room_only_from_stopped(void **state)
{
	struct libvirt_hook_event ev;
	unsigned int total, active;
	struct json_object *arr;
	char name[32], err[256];

	(void)state;
	for (int i = 0; i < LIBVIRT_TRACKED_MAX; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		ev = event(name, i, i == 5 || i == 9 ? LIBVIRT_HOOK_STOPPED : LIBVIRT_HOOK_STARTED);
		/* d9 stopped before d5: d9 goes first. */
		assert_int_equal(libvirt_tracked_record(&ev, i == 9 ? 1 : 100 + i, err,
							sizeof(err)), 0);
	}
	ev = event("new1", 1000, LIBVIRT_HOOK_STARTED);
	assert_int_equal(libvirt_tracked_record(&ev, 500, err, sizeof(err)), 0);
	ev = event("new2", 1001, LIBVIRT_HOOK_STARTED);
	assert_int_equal(libvirt_tracked_record(&ev, 501, err, sizeof(err)), 0);
	arr = libvirt_tracked_to_json();
	assert_null(state_of(arr, "d9"));
	assert_null(state_of(arr, "d5"));
	assert_string_equal(state_of(arr, "new1"), "running");
	json_object_put(arr);
	/* Every entry running: a new domain is refused, nothing evicted. */
	ev = event("new3", 1002, LIBVIRT_HOOK_STARTED);
	assert_int_equal(libvirt_tracked_record(&ev, 502, err, sizeof(err)), -ENOSPC);
	libvirt_tracked_count(&total, &active);
	assert_int_equal(total, LIBVIRT_TRACKED_MAX);
	assert_int_equal(active, LIBVIRT_TRACKED_MAX);
}

/* libvirt-event as the agent's commands call it: refused whole or recorded. */
static void test_libvirt_tracked_event_records_only_what_it_accepts(void **state)
{
	struct libvirt_hook_event ev;
	unsigned int total, active;
	struct json_object *o, *arr;
	char name[32], err[256];

	(void)state;
	o = msg("{\"domain\":\"w\",\"uuid\":\"" UUID "\",\"op\":\"kill\",\"sub\":\"begin\",\"extra\":\"-\"}");
	err[0] = 0;
	assert_int_equal(libvirt_tracked_event(o, 10, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "operation \"kill\" unknown"));
	json_object_put(o);
	libvirt_tracked_count(&total, &active);
	assert_int_equal(total, 0);

	o = msg("{\"domain\":\"w\",\"uuid\":\"" UUID "\",\"op\":\"started\",\"sub\":\"begin\",\"extra\":\"-\"}");
	assert_int_equal(libvirt_tracked_event(o, 20, err, sizeof(err)), 0);
	libvirt_tracked_count(&total, &active);
	assert_int_equal(total, 1);
	assert_int_equal(active, 1);
	arr = libvirt_tracked_to_json();
	assert_string_equal(state_of(arr, "w"), "running");
	json_object_put(arr);

	/* Full of running domains: a new one is refused. */
	for (int i = 1; i < LIBVIRT_TRACKED_MAX; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		ev = event(name, i, LIBVIRT_HOOK_STARTED);
		assert_int_equal(libvirt_tracked_record(&ev, 100 + i, err, sizeof(err)), 0);
	}
	json_object_object_add(o, "uuid", json_object_new_string("3f1c0b2a-1111-4222-8333-999999999999"));
	assert_int_equal(libvirt_tracked_event(o, 30, err, sizeof(err)), -ENOSPC);
	json_object_put(o);
	libvirt_tracked_count(&total, &active);
	assert_int_equal(total, LIBVIRT_TRACKED_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libvirt_tracked_accepts_the_hooks_own_message),
		cmocka_unit_test(test_libvirt_tracked_refuses_bad_messages_whole),
		cmocka_unit_test_setup(test_libvirt_tracked_follows_a_domain_by_uuid, reset),
		cmocka_unit_test_setup(test_libvirt_tracked_makes_room_only_from_stopped, reset),
		cmocka_unit_test_setup(test_libvirt_tracked_event_records_only_what_it_accepts, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
