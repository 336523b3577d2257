// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the CLI's versioned JSON documents (agent/cli/cli_json.c):
 * what docs/agent.md promises programs, read back as a program would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "agent/cli/cli_json.h"
#include "agent/journal/journal_json.h"

#define T0 1764763200000000000LL

/* The document as printed, parsed again: what a reader of stdout gets. */
static struct json_object *printed(struct json_object *doc)
{
	struct json_object *back;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_json_print(doc, f);
	fclose(f);
	assert_true(len > 0 && buf[len - 1] == '\n');
	back = json_tokener_parse(buf);
	assert_non_null(back);
	free(buf);
	return back;
}

static const char *str(struct json_object *o, const char *k)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static void assert_header(struct json_object *o, const char *kind)
{
	struct json_object *v;

	assert_string_equal(str(o, "kvmlu"), kind);
	assert_true(json_object_object_get_ex(o, "version", &v));
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int(v), CLI_JSON_VERSION);
}

static struct json_object *journal_json_with_vm(const char *name, enum update_outcome outcome)
{
	struct journal *j = calloc(1, sizeof(*j));
	struct json_object *o;
	char err[128];

	assert_non_null(j);
	journal_init(j, T0);
	assert_int_equal(journal_add_vm(j, name, "/run/kvmlu/vms/x.sock", err, sizeof(err)), 0);
	j->outcome = outcome;
	o = journal_to_json(j);
	free(j);
	assert_non_null(o);
	return o;
}

static void test_cli_json_host_update_carries_outcome_and_report(void **state)
{
	struct json_object *rep = journal_json_with_vm("vm1", UPDATE_ROLLED_BACK), *doc, *r, *vms;
	const char *id = str(rep, "update_id");

	(void)state;
	doc = printed(cli_json_host_update("rolled-back", id, false, rep));
	assert_header(doc, "host-update");
	assert_string_equal(str(doc, "outcome"), "rolled-back");
	assert_string_equal(str(doc, "update_id"), id);
	assert_true(json_object_object_get_ex(doc, "dry_run", &r));
	assert_false(json_object_get_boolean(r));
	assert_true(json_object_object_get_ex(doc, "report", &r));
	assert_string_equal(str(r, "outcome"), "rolled-back");
	assert_true(json_object_object_get_ex(r, "vms", &vms));
	assert_int_equal(json_object_array_length(vms), 1);
	assert_string_equal(str(json_object_array_get_idx(vms, 0), "name"), "vm1");
	json_object_put(doc);
	/* The caller's reference is its own: still usable after the print. */
	assert_string_equal(str(rep, "outcome"), "rolled-back");
	json_object_put(rep);
}

static void test_cli_json_kexec_has_id_and_null_report(void **state)
{
	struct json_object *doc, *r;

	(void)state;
	doc = printed(cli_json_host_update(CLI_JSON_OUTCOME_KEXEC, "20261204T150000Z-7-0001",
					   false, NULL));
	assert_header(doc, "host-update");
	assert_string_equal(str(doc, "outcome"), "kexec");
	assert_string_equal(str(doc, "update_id"), "20261204T150000Z-7-0001");
	assert_true(json_object_object_get_ex(doc, "report", &r));
	assert_null(r);
	json_object_put(doc);
}

static void test_cli_json_report_lists_updates_in_order(void **state)
{
	struct json_object *list = json_object_new_array(), *doc, *u;

	(void)state;
	json_object_array_add(list, journal_json_with_vm("old", UPDATE_REFUSED));
	json_object_array_add(list, journal_json_with_vm("new", UPDATE_DONE));
	doc = printed(cli_json_report(list));
	json_object_put(list);
	assert_header(doc, "report");
	assert_true(json_object_object_get_ex(doc, "updates", &u));
	assert_int_equal(json_object_array_length(u), 2);
	assert_string_equal(str(json_object_array_get_idx(u, 0), "outcome"), "refused");
	assert_string_equal(str(json_object_array_get_idx(u, 1), "outcome"), "done");
	json_object_put(doc);
}

static void test_cli_json_report_without_updates_is_empty_list(void **state)
{
	struct json_object *doc, *u;

	(void)state;
	doc = printed(cli_json_report(NULL));
	assert_true(json_object_object_get_ex(doc, "updates", &u));
	assert_true(json_object_is_type(u, json_type_array));
	assert_int_equal(json_object_array_length(u), 0);
	json_object_put(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_json_host_update_carries_outcome_and_report),
		cmocka_unit_test(test_cli_json_kexec_has_id_and_null_report),
		cmocka_unit_test(test_cli_json_report_lists_updates_in_order),
		cmocka_unit_test(test_cli_json_report_without_updates_is_empty_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
