// SPDX-License-Identifier: GPL-2.0
/*
 * common/json_strict: what every reader of outside JSON refuses beyond
 * json-c's own STRICT mode (duplicate keys at any depth, json-c's lenient
 * tokens, lone surrogates, integers it would clamp), and what it still
 * takes.
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

#include "common/json_strict.h"

static int parse(const char *text, struct json_strict_error *e)
{
	json_object *o = NULL;
	int rc = json_strict_parse(text, strlen(text), 16, JSON_STRICT_UTF8, &o, e);

	if (rc)
		assert_null(o);
	json_object_put(o);
	return rc;
}

static void expect_refused(const char *text, enum json_strict_fault fault, const char *needle)
{
	struct json_strict_error e;

	if (parse(text, &e) != -EINVAL)
		fail_msg("%s accepted", text);
	assert_int_equal(e.fault, fault);
	if (!strstr(e.desc, needle))
		fail_msg("%s: \"%s\" does not say %s", text, e.desc, needle);
}

static void expect_taken(const char *text)
{
	struct json_strict_error e;

	if (parse(text, &e))
		fail_msg("%s refused: %s", text, e.desc);
}

static void test_json_strict_names_duplicate_keys_with_their_path(void **state)
{
	(void)state;
	expect_refused("{\"allow_kexec\":false,\"allow_kexec\":true}", JSON_STRICT_DUPLICATE,
		       "duplicate key \"allow_kexec\"");
	expect_refused("{\"timeouts\":{\"prepare_ms\":1,\"prepare_ms\":2}}", JSON_STRICT_DUPLICATE,
		       "duplicate key \"prepare_ms\" in /timeouts");
	expect_refused("[0,{\"a\":[1,2,{\"k\":1,\"k\":1}]}]", JSON_STRICT_DUPLICATE,
		       "\"k\" in /1/a/2");
	/* Escaped spellings of one key are one key. */
	expect_refused("{\"a\":1,\"\\u0061\":2}", JSON_STRICT_DUPLICATE, "duplicate key \"a\"");
	expect_refused("{\"\\u00e9\":1,\"\xc3\xa9\":2}", JSON_STRICT_DUPLICATE, "\"\xc3\xa9\"");
	/* Path parts with '/' and '~' are escaped as in RFC 6901. */
	expect_refused("{\"a/b~\":{\"x\":1,\"x\":2}}", JSON_STRICT_DUPLICATE, "in /a~1b~0");
	/* Blanks between a key and its colon do not hide it. */
	expect_refused("{\"a\" :1, \"a\"\t:2}", JSON_STRICT_DUPLICATE, "\"a\"");
}

static void test_json_strict_takes_equal_keys_in_different_objects(void **state)
{
	(void)state;
	expect_taken("{\"a\":{\"a\":{\"a\":1}},\"b\":[{\"a\":1},{\"a\":2}],\"c\":\"a\"}");
	expect_taken("{\"a\":1,\"A\":2,\"a \":3,\"\":4}");
	expect_taken("[\"a\",\"a\",{\"x\":\"a\"}]");
	expect_taken("  {\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\ud83d\\ude00\"}\n");
	expect_taken("{\"n\":[0,-0,1.5,-2e-3,1E+9,18446744073709551615,-9223372036854775808]}");
	expect_taken("[true,false,null]");
	expect_taken("null");
	expect_taken("7");
}

static void test_json_strict_refuses_what_json_c_lets_through(void **state)
{
	(void)state;
	expect_refused("{'a':1}", JSON_STRICT_SYNTAX, "'''");
	expect_refused("{\"a\":Infinity}", JSON_STRICT_SYNTAX, "\"Infinity\"");
	expect_refused("{\"a\":-Infinity}", JSON_STRICT_SYNTAX, "not JSON");
	expect_refused("{\"a\":1.}", JSON_STRICT_SYNTAX, "number at byte 5");
	expect_refused("{\"a\":\"x\ty\"}", JSON_STRICT_SYNTAX, "control character 0x09");
	expect_refused("{\"a\":\"\\ud800\"}", JSON_STRICT_SYNTAX, "lone surrogate \\ud800");
	expect_refused("{\"a\":\"\\ud800\\u0041\"}", JSON_STRICT_SYNTAX, "lone surrogate");
	expect_refused("{\"a\":\"\\udfff\"}", JSON_STRICT_SYNTAX, "lone surrogate \\udfff");
	expect_refused("{\"a\\u0000b\":1}", JSON_STRICT_SYNTAX, "U+0000");
	expect_refused("{\"a\":18446744073709551616}", JSON_STRICT_SYNTAX, "64 bits");
	expect_refused("{\"a\":-9223372036854775809}", JSON_STRICT_SYNTAX, "64 bits");
	expect_refused("{\"a\":1}{}", JSON_STRICT_SYNTAX, "at byte 7");
	expect_refused("{\"a\":\"\xff\"}", JSON_STRICT_SYNTAX, "invalid JSON");
	expect_refused(" \t", JSON_STRICT_SYNTAX, "only blanks");
	expect_refused("{\"a\":", JSON_STRICT_SYNTAX, "end of data");
}

static void test_json_strict_refuses_nul_and_deep_nesting(void **state)
{
	struct json_strict_error e;
	json_object *o = NULL;
	char deep[64];

	(void)state;
	assert_int_equal(json_strict_parse("{\"a\":1}\0", 8, 16, 0, &o, &e), -EINVAL);
	assert_non_null(strstr(e.desc, "NUL byte at 7"));
	memset(deep, '[', 20);
	memset(deep + 20, ']', 20);
	deep[40] = '\0';
	assert_int_equal(json_strict_parse(deep, 40, 16, 0, &o, &e), -EINVAL);
	assert_null(o);
	assert_int_equal(json_strict_parse(deep, 40, 32, 0, &o, &e), 0);
	json_object_put(o);
}

static void test_json_strict_without_utf8_flag_keeps_bytes(void **state)
{
	const char text[] = "{\"name\":\"\xff\"}";
	struct json_strict_error e;
	json_object *o = NULL;

	(void)state;
	/* Files kvmlu wrote itself read back byte for byte. */
	assert_int_equal(json_strict_parse(text, strlen(text), 16, 0, &o, &e), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "name")), "\xff");
	json_object_put(o);
}

static void test_json_strict_shortens_on_a_character_boundary(void **state)
{
	char out[16];

	(void)state;
	assert_string_equal(json_strict_shorten("abc", 3, out), "abc");
	assert_string_equal(json_strict_shorten("abcd", 3, out), "abc...");
	/* "é" is two bytes: not cut in half. */
	assert_string_equal(json_strict_shorten("ab\xc3\xa9z", 3, out), "ab...");
	assert_string_equal(json_strict_shorten("a\nb", 8, out), "a?b");
}

static void test_json_strict_many_keys_stay_fast(void **state)
{
	size_t n = 20000, len = 0;
	char *text = malloc(n * 12 + 16);
	struct json_strict_error e;
	json_object *o = NULL;

	(void)state;
	assert_non_null(text);
	text[len++] = '{';
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "%s\"k%zu\":1", i ? "," : "", i);
	strcpy(text + len, ",\"k7\":2}");
	len += strlen(text + len);
	assert_int_equal(json_strict_parse(text, len, 16, 0, &o, &e), -EINVAL);
	assert_non_null(strstr(e.desc, "\"k7\""));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_strict_names_duplicate_keys_with_their_path),
		cmocka_unit_test(test_json_strict_takes_equal_keys_in_different_objects),
		cmocka_unit_test(test_json_strict_refuses_what_json_c_lets_through),
		cmocka_unit_test(test_json_strict_refuses_nul_and_deep_nesting),
		cmocka_unit_test(test_json_strict_without_utf8_flag_keeps_bytes),
		cmocka_unit_test(test_json_strict_shortens_on_a_character_boundary),
		cmocka_unit_test(test_json_strict_many_keys_stay_fast),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
