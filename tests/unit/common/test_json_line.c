// SPDX-License-Identifier: GPL-2.0
/*
 * common/json_line: the one parser and writer both sockets use. Strict
 * parsing of untrusted lines, the request shape, the one number form, and
 * the reader's line limit over a real socket pair.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <errno.h>

#include "common/json_line.h"

static int parse(const char *s, const char **class)
{
	struct json_line_error e = { NULL, "" };
	json_object *o = NULL;
	int rc = json_line_parse(s, strlen(s), &o, &e);

	*class = e.class;
	json_object_put(o);
	return rc;
}

static void test_parse_accepts_one_object_with_blanks_around(void **state)
{
	const char *cls;

	(void)state;
	assert_int_equal(parse("{\"cmd\":\"status\"}", &cls), 0);
	assert_int_equal(parse("  {\"a\":[1,2,{\"b\":null}]} \t\r", &cls), 0);
}

static void test_parse_refuses_trailing_bytes_and_second_objects(void **state)
{
	const char *cls;

	(void)state;
	assert_int_equal(parse("{\"cmd\":\"status\"} x", &cls), -EINVAL);
	assert_string_equal(cls, KVMLU_ERR_PARSE);
	assert_int_equal(parse("{}{}", &cls), -EINVAL);
	assert_string_equal(cls, KVMLU_ERR_PARSE);
}

static void test_parse_refuses_non_objects_bad_utf8_and_nul(void **state)
{
	const char bad_utf8[] = "{\"cmd\":\"\xff\xfe\"}";
	struct json_line_error e;
	json_object *o = NULL;
	const char *cls;

	(void)state;
	assert_int_equal(parse("[1,2]", &cls), -EINVAL);
	assert_string_equal(cls, KVMLU_ERR_INVALID);
	assert_int_equal(parse("42", &cls), -EINVAL);
	assert_string_equal(cls, KVMLU_ERR_INVALID);
	assert_int_equal(parse("null", &cls), -EINVAL);
	assert_int_equal(parse("", &cls), -EINVAL);
	assert_int_equal(parse("{\"a\":", &cls), -EINVAL);
	assert_string_equal(cls, KVMLU_ERR_PARSE);
	assert_int_equal(parse(bad_utf8, &cls), -EINVAL);
	assert_string_equal(cls, KVMLU_ERR_PARSE);
	/* Comments are a json-c extension strict mode refuses. */
	assert_int_equal(parse("{\"a\":1 /* c */}", &cls), -EINVAL);
	assert_int_equal(json_line_parse("{\"a\":1}\0", 8, &o, &e), -EINVAL);
	assert_null(o);
}

static void test_parse_refuses_deep_nesting(void **state)
{
	char deep[200] = "", *p = deep;
	const char *cls;

	(void)state;
	p += sprintf(p, "{\"a\":");
	for (int i = 0; i < KVMLU_WIRE_DEPTH + 2; i++)
		*p++ = '[';
	for (int i = 0; i < KVMLU_WIRE_DEPTH + 2; i++)
		*p++ = ']';
	*p++ = '}';
	*p = '\0';
	assert_int_equal(parse(deep, &cls), -EINVAL);
	assert_string_equal(cls, KVMLU_ERR_PARSE);
}

static void test_parse_refuses_overlong_line(void **state)
{
	size_t n = KVMLU_WIRE_LINE_MAX + 1;
	struct json_line_error e;
	json_object *o = NULL;
	char *line = malloc(n);

	(void)state;
	assert_non_null(line);
	memset(line, ' ', n);
	line[0] = '{';
	line[n - 1] = '}';
	assert_int_equal(json_line_parse(line, n, &o, &e), -EINVAL);
	assert_string_equal(e.class, KVMLU_ERR_LINE_TOO_LONG);
	free(line);
}

static void test_request_shape_wants_args_under_args(void **state)
{
	struct json_line_request req;
	struct json_line_error e;
	const char *ok = "{\"cmd\":\"upgrade\",\"id\":7,\"args\":{\"checksum\":true}}";
	const char *top = "{\"cmd\":\"upgrade\",\"id\":\"x\",\"checksum\":true}";

	(void)state;
	assert_int_equal(json_line_request_parse(ok, strlen(ok), &req, &e), 0);
	assert_string_equal(req.cmd, "upgrade");
	assert_int_equal(json_object_get_int(req.id), 7);
	assert_true(json_object_is_type(req.args, json_type_object));
	json_line_request_free(&req);

	assert_int_equal(json_line_request_parse(top, strlen(top), &req, &e), -EINVAL);
	assert_string_equal(e.class, KVMLU_ERR_INVALID);
	assert_non_null(strstr(e.desc, "\"checksum\""));
	/* The id was readable: the error reply can echo it. */
	assert_string_equal(json_object_get_string(req.id), "x");
	json_line_request_free(&req);
}

static void test_request_refuses_bad_cmd_id_and_args(void **state)
{
	static const char *const bad[] = {
		"{\"id\":1}",
		"{\"cmd\":5}",
		"{\"cmd\":\"\"}",
		"{\"cmd\":\"status\",\"id\":1.5}",
		"{\"cmd\":\"status\",\"args\":[1]}",
	};
	struct json_line_request req;
	struct json_line_error e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(json_line_request_parse(bad[i], strlen(bad[i]), &req, &e), -EINVAL);
		assert_string_equal(e.class, KVMLU_ERR_INVALID);
		json_line_request_free(&req);
	}
}

static void test_writer_has_one_number_form_and_no_slash_escapes(void **state)
{
	json_object *o = json_object_new_object();
	size_t len;
	char *s;

	(void)state;
	json_object_object_add(o, "gbps", json_line_new_ms(217.59200000000001));
	json_object_object_add(o, "downtime_ms", json_line_new_ms(3.0));
	json_object_object_add(o, "tiny", json_line_new_ms(0.0004));
	json_object_object_add(o, "big", json_line_new_u64(UINT64_MAX));
	json_object_object_add(o, "path", json_object_new_string("/run/kvmlu/vms/a.sock"));
	s = json_line_format(o, &len);
	assert_non_null(s);
	assert_string_equal(s, "{\"gbps\":217.592,\"downtime_ms\":3.0,\"tiny\":0.0,"
			       "\"big\":9223372036854775807,\"path\":\"/run/kvmlu/vms/a.sock\"}\n");
	assert_int_equal(len, strlen(s));
	free(s);
	json_object_put(o);
}

static void test_reader_takes_lines_and_refuses_an_overlong_one(void **state)
{
	struct json_line_reader *r = malloc(sizeof(*r));
	char err[128] = "", *junk;
	json_object *o = NULL;
	int sv[2];

	(void)state;
	assert_non_null(r);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	json_line_reader_init(r, sv[0]);
	assert_int_equal(write(sv[1], "{\"a\":1}\n{\"b\":2} {}\n", 19), 19);
	assert_int_equal(json_line_read(r, 1000, &o, err, sizeof(err)), 0);
	assert_int_equal(json_object_get_int(json_object_object_get(o, "a")), 1);
	json_object_put(o);
	assert_int_equal(json_line_read(r, 1000, &o, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "refused"));
	/* No newline within the limit: refused, not grown. */
	junk = malloc(KVMLU_WIRE_LINE_MAX + 10);
	assert_non_null(junk);
	memset(junk, 'x', KVMLU_WIRE_LINE_MAX + 10);
	if (fork() == 0) {
		ssize_t n = write(sv[1], junk, KVMLU_WIRE_LINE_MAX + 10);

		_exit(n > 0 ? 0 : 1);
	}
	assert_int_equal(json_line_read(r, 5000, &o, err, sizeof(err)), -EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
	free(junk);
	free(r);
}

/* What a request with a key given twice gets, at any depth: nothing runs. */
static void expect_duplicate(const char *line, const char *needle)
{
	struct json_line_request req;
	struct json_line_error e = { NULL, "" };

	assert_int_equal(json_line_request_parse(line, strlen(line), &req, &e), -EINVAL);
	assert_non_null(e.class);
	assert_string_equal(e.class, KVMLU_ERR_DUPLICATE_KEY);
	if (!strstr(e.desc, needle))
		fail_msg("\"%s\" does not say %s", e.desc, needle);
	assert_null(req.cmd);
	json_line_request_free(&req);
}

static void test_request_with_a_duplicate_key_is_refused_naming_it(void **state)
{
	(void)state;
	/* Last-one-wins would have run shutdown on a status request. */
	expect_duplicate("{\"cmd\":\"status\",\"cmd\":\"shutdown\"}", "duplicate key \"cmd\"");
	expect_duplicate("{\"cmd\":\"status\",\"cmd\":\"vms\"}", "\"cmd\"");
	expect_duplicate("{\"id\":1,\"cmd\":\"pause\",\"id\":2}", "\"id\"");
	/* The same key spelled with an escape is the same key. */
	expect_duplicate("{\"cmd\":\"status\",\"\\u0063md\":\"shutdown\"}", "\"cmd\"");
	expect_duplicate("{\"cmd\":\"prepare-update\",\"args\":{\"running_hash_ms\":1,"
			 "\"running_hash_ms\":0}}", "\"running_hash_ms\" in /args");
	expect_duplicate("{\"cmd\":\"x\",\"args\":{\"a\":[{\"b\":1},{\"c\":{\"d\":1,\"d\":2}}]}}",
			 "\"d\" in /args/a/1/c");
}

static void test_same_key_in_different_objects_is_not_a_duplicate(void **state)
{
	const char *line = "{\"cmd\":\"x\",\"args\":{\"cmd\":{\"cmd\":1},\"a\":[{\"cmd\":2},{\"cmd\":3}]}}";
	struct json_line_request req;
	struct json_line_error e = { NULL, "" };

	(void)state;
	assert_int_equal(json_line_request_parse(line, strlen(line), &req, &e), 0);
	assert_string_equal(req.cmd, "x");
	json_line_request_free(&req);
}

/* The reply to line as the server builds it, parsed back by a strict client. */
static json_object *reply_to(const char *line, const char **class)
{
	struct json_line_request req;
	struct json_line_error e = { NULL, "" };
	json_object *reply, *back = NULL;
	size_t len;
	char *text;

	if (json_line_request_parse(line, strlen(line), &req, &e))
		reply = json_line_reply_error(e.class, e.desc, req.id);
	else
		reply = json_line_reply_ok(NULL, req.id);
	*class = e.class;
	json_line_request_free(&req);
	text = json_line_format(reply, &len);
	json_object_put(reply);
	assert_non_null(text);
	assert_int_equal(json_line_parse(text, len - 1, &back, &e), 0);
	free(text);
	return back;
}

static void expect_id_echoed(const char *line, const char *id_text)
{
	const char *cls;
	json_object *back = reply_to(line, &cls), *id;
	size_t len;
	char *text;

	assert_null(cls);
	assert_true(json_object_object_get_ex(back, "id", &id));
	text = json_line_format(id, &len);
	text[len - 1] = '\0';
	if (strcmp(text, id_text))
		fail_msg("id %s came back as %s", id_text, text);
	free(text);
	json_object_put(back);
}

static void expect_id_refused(const char *line, const char *needle)
{
	const char *cls;
	json_object *back = reply_to(line, &cls), *err, *v;

	assert_non_null(cls);
	assert_false(json_object_object_get_ex(back, "id", NULL));
	assert_true(json_object_object_get_ex(back, "error", &err));
	assert_true(json_object_object_get_ex(err, "desc", &v));
	if (!strstr(json_object_get_string(v), needle))
		fail_msg("\"%s\" does not say %s", json_object_get_string(v), needle);
	json_object_put(back);
}

static void test_ids_come_back_exactly_or_are_refused(void **state)
{
	(void)state;
	expect_id_echoed("{\"cmd\":\"s\",\"id\":7}", "7");
	expect_id_echoed("{\"cmd\":\"s\",\"id\":-9223372036854775808}", "-9223372036854775808");
	expect_id_echoed("{\"cmd\":\"s\",\"id\":9223372036854775807}", "9223372036854775807");
	expect_id_echoed("{\"cmd\":\"s\",\"id\":\"\\ud83d\\ude00 a\"}", "\"\xf0\x9f\x98\x80 a\"");
	expect_id_echoed("{\"cmd\":\"s\",\"id\":\"\xc3\xa9\"}", "\"\xc3\xa9\"");
	/* json-c would clamp these to 2^64-1 and 2^63 and send that back. */
	expect_id_refused("{\"cmd\":\"s\",\"id\":99999999999999999999999999999}", "64 bits");
	expect_id_refused("{\"cmd\":\"s\",\"id\":-99999999999999999999}", "64 bits");
	expect_id_refused("{\"cmd\":\"s\",\"id\":9223372036854775808}", "int64");
	/* json-c would turn a lone surrogate into U+FFFD. */
	expect_id_refused("{\"cmd\":\"s\",\"id\":\"\\ud800\"}", "lone surrogate");
	expect_id_refused("{\"cmd\":\"s\",\"id\":\"x\\udc00\"}", "lone surrogate");
	expect_id_refused("{\"cmd\":\"s\",\"id\":1e3}", "double");
}

static void test_writer_sends_only_valid_utf8(void **state)
{
	struct json_line_error e = { NULL, "" };
	json_object *o, *back = NULL, *v;
	size_t len;
	char *s;

	(void)state;
	/* A disk path or a cut message need not be UTF-8; the reply must be. */
	o = json_line_reply_error(KVMLU_ERR_FAILED, "open /srv/\xff\xc3(.img: cut \xe2\x82", NULL);
	json_object_object_add(o, "nul", json_object_new_string_len("a\0b", 3));
	s = json_line_format(o, &len);
	assert_non_null(s);
	assert_int_equal(json_line_parse(s, len - 1, &back, &e), 0);
	assert_true(json_object_object_get_ex(json_object_object_get(back, "error"), "desc", &v));
	assert_string_equal(json_object_get_string(v),
			    "open /srv/\xef\xbf\xbd\xef\xbf\xbd(.img: cut \xef\xbf\xbd\xef\xbf\xbd");
	assert_int_equal(json_object_get_string_len(json_object_object_get(back, "nul")), 3);
	free(s);
	json_object_put(back);
	json_object_put(o);
}

/* A line of n bytes ('{', blanks, '}') and its newline, from another process. */
static pid_t send_line(int fd, size_t n)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char *line = malloc(n + 1);

		if (!line)
			_exit(1);
		memset(line, ' ', n);
		line[0] = '{';
		line[n - 1] = '}';
		line[n] = '\n';
		_exit(write(fd, line, n + 1) == (ssize_t)(n + 1) ? 0 : 1);
	}
	return pid;
}

static void test_reader_takes_a_line_of_exactly_the_limit(void **state)
{
	struct json_line_reader *r = malloc(sizeof(*r));
	json_object *o = NULL;
	char err[128] = "";
	int sv[2], st;
	pid_t pid;

	(void)state;
	assert_non_null(r);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	json_line_reader_init(r, sv[0]);
	pid = send_line(sv[1], KVMLU_WIRE_LINE_MAX);
	if (json_line_read(r, 5000, &o, err, sizeof(err)))
		fail_msg("a line of %d bytes refused: %s", KVMLU_WIRE_LINE_MAX, err);
	assert_true(json_object_is_type(o, json_type_object));
	json_object_put(o);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(st, 0);
	/* One byte more is too long. */
	pid = send_line(sv[1], KVMLU_WIRE_LINE_MAX + 1);
	assert_int_equal(json_line_read(r, 5000, &o, err, sizeof(err)), -EMSGSIZE);
	assert_non_null(strstr(err, "longer than 262144 bytes"));
	close(sv[0]);
	waitpid(pid, &st, 0);
	close(sv[1]);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_accepts_one_object_with_blanks_around),
		cmocka_unit_test(test_parse_refuses_trailing_bytes_and_second_objects),
		cmocka_unit_test(test_parse_refuses_non_objects_bad_utf8_and_nul),
		cmocka_unit_test(test_parse_refuses_deep_nesting),
		cmocka_unit_test(test_parse_refuses_overlong_line),
		cmocka_unit_test(test_request_shape_wants_args_under_args),
		cmocka_unit_test(test_request_refuses_bad_cmd_id_and_args),
		cmocka_unit_test(test_writer_has_one_number_form_and_no_slash_escapes),
		cmocka_unit_test(test_reader_takes_lines_and_refuses_an_overlong_one),
		cmocka_unit_test(test_request_with_a_duplicate_key_is_refused_naming_it),
		cmocka_unit_test(test_same_key_in_different_objects_is_not_a_duplicate),
		cmocka_unit_test(test_ids_come_back_exactly_or_are_refused),
		cmocka_unit_test(test_writer_sends_only_valid_utf8),
		cmocka_unit_test(test_reader_takes_a_line_of_exactly_the_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
