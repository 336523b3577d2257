// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the VMM's control protocol (the request parser and reply
 * builders of common/json_line.c as the VMM uses them, and the dispatcher
 * in vmm/control/commands.c): request lines are untrusted socket input.
 * Checks the parsed fields, the id echo, the error classes for each kind
 * of bad input, the exact shape of replies, and the memory checksum's
 * report (integer ns). No VM is needed: every request here is refused
 * before a handler runs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_line.h"
#include "vmm/control/commands.h"
#include "vmm/main/vm_commands.h"
#include "vmm/memory_digest.h"

static int parse_str(const char *s, struct json_line_request *req, struct json_line_error *e)
{
	memset(e, 0, sizeof(*e));
	return json_line_request_parse(s, strlen(s), req, e);
}

static void expect_class(const char *line, const char *class)
{
	struct json_line_request req;
	struct json_line_error e;

	assert_int_equal(parse_str(line, &req, &e), -EINVAL);
	assert_non_null(e.class);
	if (strcmp(e.class, class))
		fail_msg("'%s': class %s, expected %s (%s)", line, e.class, class, e.desc);
	assert_true(strlen(e.desc) > 0);
	json_line_request_free(&req);
}

/* A reply line parsed back, checked to be one object and newline-terminated. */
static json_object *reply_json(char *line, size_t len)
{
	json_object *o;

	assert_non_null(line);
	assert_true(len > 1);
	assert_int_equal(line[len - 1], '\n');
	assert_int_equal(strlen(line), len);
	assert_null(memchr(line, '\n', len - 1));
	o = json_tokener_parse(line);
	assert_non_null(o);
	assert_true(json_object_is_type(o, json_type_object));
	free(line);
	return o;
}

static const char *get_str(json_object *o, const char *k)
{
	json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static void test_request_parses_cmd_and_integer_id(void **state)
{
	struct json_line_request req;
	struct json_line_error e;

	(void)state;
	assert_int_equal(parse_str("{\"cmd\":\"pause\",\"id\":7}", &req, &e), 0);
	assert_string_equal(req.cmd, "pause");
	assert_non_null(req.id);
	assert_int_equal(json_object_get_int(req.id), 7);
	assert_null(req.args);
	json_line_request_free(&req);
}

static void test_request_accepts_string_id_args_and_crlf(void **state)
{
	struct json_line_request req;
	struct json_line_error e;

	(void)state;
	assert_int_equal(parse_str("  {\"id\":\"x-1\",\"cmd\":\"status\",\"args\":{}} \r", &req, &e), 0);
	assert_string_equal(req.cmd, "status");
	assert_string_equal(json_object_get_string(req.id), "x-1");
	assert_non_null(req.args);
	json_line_request_free(&req);
}

static void test_request_without_id_has_none(void **state)
{
	struct json_line_request req;
	struct json_line_error e;

	(void)state;
	assert_int_equal(parse_str("{\"cmd\":\"status\"}", &req, &e), 0);
	assert_null(req.id);
	json_line_request_free(&req);
}

static void test_request_rejects_malformed_json(void **state)
{
	(void)state;
	expect_class("{\"cmd\":\"pause\"", KVMLU_ERR_PARSE);
	expect_class("nonsense", KVMLU_ERR_PARSE);
	expect_class("{cmd:pause}", KVMLU_ERR_PARSE);
	expect_class("{\"cmd\":\"pause\",}", KVMLU_ERR_PARSE);
	expect_class("", KVMLU_ERR_PARSE);
	expect_class("   ", KVMLU_ERR_PARSE);
	expect_class("{\"cmd\":\"pause\"} {\"cmd\":\"resume\"}", KVMLU_ERR_PARSE);
	expect_class("{\"cmd\":\"pause\"}x", KVMLU_ERR_PARSE);
	expect_class("{\"cmd\":\"\xff\xfe\"}", KVMLU_ERR_PARSE);
}

static void test_request_rejects_non_objects(void **state)
{
	(void)state;
	expect_class("[\"pause\"]", KVMLU_ERR_INVALID);
	expect_class("\"pause\"", KVMLU_ERR_INVALID);
	expect_class("42", KVMLU_ERR_INVALID);
	expect_class("null", KVMLU_ERR_INVALID);
}

static void test_request_rejects_unknown_keys_and_wrong_types(void **state)
{
	(void)state;
	expect_class("{\"cmd\":\"pause\",\"force\":true}", KVMLU_ERR_INVALID);
	expect_class("{\"id\":1}", KVMLU_ERR_INVALID);
	expect_class("{\"cmd\":5}", KVMLU_ERR_INVALID);
	expect_class("{\"cmd\":null}", KVMLU_ERR_INVALID);
	expect_class("{\"cmd\":\"\"}", KVMLU_ERR_INVALID);
	expect_class("{\"cmd\":\"pause\",\"id\":[1]}", KVMLU_ERR_INVALID);
	expect_class("{\"cmd\":\"pause\",\"id\":1.5}", KVMLU_ERR_INVALID);
	expect_class("{\"cmd\":\"pause\",\"args\":[]}", KVMLU_ERR_INVALID);
	expect_class("{\"cmd\":\"pause\",\"args\":\"x\"}", KVMLU_ERR_INVALID);
}

static void test_request_rejects_nul_deep_nesting_and_oversize(void **state)
{
	static const char nul[] = "{\"cmd\":\"pa\0use\"}";
	struct json_line_request req;
	struct json_line_error e;
	char deep[200];
	char *big;
	size_t i;

	(void)state;
	assert_int_equal(json_line_request_parse(nul, sizeof(nul) - 1, &req, &e), -EINVAL);
	assert_string_equal(e.class, KVMLU_ERR_PARSE);
	json_line_request_free(&req);

	/* 60 nested arrays in args: over the depth limit, refused not recursed. */
	strcpy(deep, "{\"cmd\":\"x\",\"args\":{\"a\":");
	for (i = 0; i < 60; i++)
		strcat(deep, "[");
	expect_class(deep, KVMLU_ERR_PARSE);

	big = malloc(KVMLU_WIRE_LINE_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', KVMLU_WIRE_LINE_MAX + 1);
	memcpy(big, "{\"cmd\":\"status\"}", 16);
	assert_int_equal(json_line_request_parse(big, KVMLU_WIRE_LINE_MAX + 1, &req, &e), -EINVAL);
	assert_string_equal(e.class, KVMLU_ERR_LINE_TOO_LONG);
	json_line_request_free(&req);
	/* Exactly at the limit it is still a request. */
	assert_int_equal(json_line_request_parse(big, KVMLU_WIRE_LINE_MAX, &req, &e), 0);
	json_line_request_free(&req);
	free(big);
}

static void test_request_error_keeps_id_for_echo(void **state)
{
	struct json_line_request req;
	struct json_line_error e;

	(void)state;
	assert_int_equal(parse_str("{\"cmd\":\"pause\",\"id\":9,\"bogus\":1}", &req, &e), -EINVAL);
	assert_non_null(req.id);
	assert_int_equal(json_object_get_int(req.id), 9);
	json_line_request_free(&req);
}

/* A reply as the server sends it: one line from the common builders. */
static char *reply_line(json_object *reply, size_t *len)
{
	char *line = json_line_format(reply, len);

	json_object_put(reply);
	return line;
}

static void test_reply_ok_shape_echoes_id(void **state)
{
	json_object *id = json_object_new_int(7), *ret = json_object_new_object(), *o, *v;
	size_t len = 0;
	char *line;

	(void)state;
	json_object_object_add(ret, "state", json_object_new_string("paused"));
	line = reply_line(json_line_reply_ok(ret, id), &len);
	o = reply_json(line, len);
	assert_true(json_object_object_get_ex(o, "ok", &v));
	assert_true(json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "return", &v));
	assert_string_equal(get_str(v, "state"), "paused");
	assert_true(json_object_object_get_ex(o, "id", &v));
	assert_int_equal(json_object_get_int(v), 7);
	assert_false(json_object_object_get_ex(o, "error", NULL));
	json_object_put(o);
	json_object_put(id);
}

static void test_reply_error_shape(void **state)
{
	struct json_line_error e;
	json_object *o, *v, *err;
	size_t len = 0;
	char *line;

	(void)state;
	json_line_error_set(&e, KVMLU_ERR_TIMEOUT, "vCPU %d not stopped after %d ms", 1, 500);
	line = reply_line(json_line_reply_error(e.class, e.desc, NULL), &len);
	o = reply_json(line, len);
	assert_true(json_object_object_get_ex(o, "ok", &v));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "error", &err));
	assert_string_equal(get_str(err, "class"), "Timeout");
	assert_string_equal(get_str(err, "desc"), "vCPU 1 not stopped after 500 ms");
	assert_false(json_object_object_get_ex(o, "id", NULL));
	assert_false(json_object_object_get_ex(o, "return", NULL));
	json_object_put(o);
}

static json_object *handle(const char *line)
{
	struct control_ctx ctx = { 0 };	/* no VM: nothing here may reach a handler */
	size_t len = 0;

	char *r = control_handle_line(&ctx, line, strlen(line), &len);

	return reply_json(r, len);
}

static void expect_handled_error(const char *line, const char *class, int id)
{
	json_object *o = handle(line), *err, *v;

	assert_true(json_object_object_get_ex(o, "error", &err));
	if (strcmp(get_str(err, "class"), class))
		fail_msg("'%s': class %s, expected %s", line, get_str(err, "class"), class);
	if (id >= 0) {
		assert_true(json_object_object_get_ex(o, "id", &v));
		assert_int_equal(json_object_get_int(v), id);
	} else {
		assert_false(json_object_object_get_ex(o, "id", NULL));
	}
	json_object_put(o);
}

static void test_dispatch_error_classes_and_id_echo(void **state)
{
	(void)state;
	expect_handled_error("{\"cmd\":\"frobnicate\",\"id\":3}", KVMLU_ERR_UNKNOWN_CMD, 3);
	expect_handled_error("{\"cmd\":\"pause\",\"id\":4,\"x\":1}", KVMLU_ERR_INVALID, 4);
	expect_handled_error("{\"cmd\":\"status\",\"id\":5,\"args\":{\"verbose\":true}}",
			     KVMLU_ERR_INVALID, 5);
	expect_handled_error("{\"cmd\":\"pause\",\"id\":{}}", KVMLU_ERR_INVALID, -1);
	/* Handler-level argument checks run before the handler touches the VM. */
	expect_handled_error("{\"cmd\":\"guest-verify\",\"id\":8,\"args\":{\"timeout_ms\":\"x\"}}",
			     KVMLU_ERR_INVALID, 8);
	expect_handled_error("{\"cmd\":\"guest-verify\",\"args\":{\"timeout_ms\":0}}",
			     KVMLU_ERR_INVALID, -1);
	expect_handled_error("{\"cmd\":\"guest-verify\",\"args\":{\"timeout\":5}}",
			     KVMLU_ERR_INVALID, -1);
	expect_handled_error("{oops", KVMLU_ERR_PARSE, -1);
}

static void test_command_table_has_the_basic_commands(void **state)
{
	static const char *const names[] = { "status", "pause", "resume", "checksum",
					     "shutdown", "guest-verify" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct control_command *c = control_command_find(names[i]);

		assert_non_null(c);
		assert_string_equal(c->name, names[i]);
		assert_non_null(c->fn);
	}
	assert_null(control_command_find("Status"));
	assert_null(control_command_find(""));
}

/* The integer under key in o, failing the test if it is anything else (a double: protocol 1). */
static int64_t reply_int(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		fail_msg("%s is not an integer in %s", key, json_object_to_json_string(o));
	return json_object_get_int64(v);
}

/*
 * The memory checksum's part of prepare-update's and checksum's replies:
 * its times are integer ns, exact to the nanosecond, under _ns keys; the
 * budget it was given stays the integer ms of the request.
 */
static void test_checksum_report_durations_are_integer_ns(void **state)
{
	struct memory_digest md = { .log = { .vm_fd = -1 } };
	json_object *o = json_object_new_object();
	char *line;
	size_t len;

	(void)state;
	md.running_ns = 97300415;
	md.running_chunks = 131;
	md.paused_ns = 1400123;
	md.paused_chunks = 2;
	md.rounds = 1;
	md.running_budget_ms = 10000;
	memory_digest_report(&md, o);
	assert_int_equal(reply_int(o, KVMLU_KEY_SUM_RUNNING_NS), 97300415);
	assert_int_equal(reply_int(o, KVMLU_KEY_SUM_PAUSED_NS), 1400123);
	assert_int_equal(reply_int(o, KVMLU_KEY_SUM_RUNNING_BUDGET_MS), 10000);
	assert_false(json_object_object_get_ex(o, "checksum_running_ms", NULL));
	assert_false(json_object_object_get_ex(o, "checksum_paused_ms", NULL));
	/* On the wire: digits only, no fraction. */
	line = json_line_format(o, &len);
	assert_non_null(line);
	assert_non_null(strstr(line, "\"checksum_running_ns\":97300415,"));
	assert_non_null(strstr(line, "\"checksum_paused_ns\":1400123,"));
	assert_null(strchr(line, '.'));
	free(line);
	json_object_put(o);
}

/* The VM's own commands, as main() registers them. */
static int register_commands(void **state)
{
	(void)state;
	return vm_commands_register();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_parses_cmd_and_integer_id),
		cmocka_unit_test(test_request_accepts_string_id_args_and_crlf),
		cmocka_unit_test(test_request_without_id_has_none),
		cmocka_unit_test(test_request_rejects_malformed_json),
		cmocka_unit_test(test_request_rejects_non_objects),
		cmocka_unit_test(test_request_rejects_unknown_keys_and_wrong_types),
		cmocka_unit_test(test_request_rejects_nul_deep_nesting_and_oversize),
		cmocka_unit_test(test_request_error_keeps_id_for_echo),
		cmocka_unit_test(test_reply_ok_shape_echoes_id),
		cmocka_unit_test(test_reply_error_shape),
		cmocka_unit_test(test_dispatch_error_classes_and_id_echo),
		cmocka_unit_test(test_command_table_has_the_basic_commands),
		cmocka_unit_test(test_checksum_report_durations_are_integer_ns),
	};

	return cmocka_run_group_tests(tests, register_commands, NULL);
}
