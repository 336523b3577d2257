// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the `kvmlu` command line parser (agent/cli/cli_args.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include "agent/cli/cli_args.h"

#define ARGV(...) ((char *const[]){ "kvmlu", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "kvmlu", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(a, err, ...) cli_args_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), a, err, sizeof(err))

static void test_cli_host_update_takes_all_options(void **state)
{
	struct cli_args a;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&a, err, "--socket", "/tmp/s", "host-update", "--kernel", "bz",
			       "--initrd", "ird", "--append", "kho=on liveupdate=on",
			       "--dry-run", "--json"), 0);
	assert_int_equal(a.verb, CLI_HOST_UPDATE);
	assert_string_equal(a.socket, "/tmp/s");
	assert_string_equal(a.kernel, "bz");
	assert_string_equal(a.initrd, "ird");
	assert_string_equal(a.append, "kho=on liveupdate=on");
	assert_true(a.dry_run);
	assert_true(a.json);
}

static void test_cli_host_update_needs_kernel(void **state)
{
	struct cli_args a;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&a, err, "host-update", "--dry-run"), -EINVAL);
	assert_non_null(strstr(err, "--kernel"));
	assert_int_equal(PARSE(&a, err, "host-update", "--kernel"), -EINVAL);
	assert_non_null(strstr(err, "needs a value"));
}

static void test_cli_defaults_and_simple_verbs(void **state)
{
	struct cli_args a;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&a, err, "status"), 0);
	assert_int_equal(a.verb, CLI_STATUS);
	assert_string_equal(a.socket, "/run/kvmlu/agent.sock");
	assert_false(a.json);
	assert_int_equal(PARSE(&a, err, "vms", "--json"), 0);
	assert_int_equal(a.verb, CLI_VMS);
	assert_true(a.json);
	assert_int_equal(PARSE(&a, err, "report", "--last", "3"), 0);
	assert_int_equal(a.verb, CLI_REPORT);
	assert_int_equal(a.last, 3);
	assert_int_equal(PARSE(&a, err, "domain-replace-qemu", "web1", "--json"), 0);
	assert_int_equal(a.verb, CLI_REPLACE_QEMU);
	assert_string_equal(a.domain, "web1");
	assert_true(a.json);
}

static void test_cli_rejects_misplaced_and_unknown(void **state)
{
	struct cli_args a;
	char err[256];

	(void)state;
	/* Options of one verb are not accepted by another. */
	assert_int_equal(PARSE(&a, err, "status", "--kernel", "x"), -EINVAL);
	assert_non_null(strstr(err, "status"));
	assert_int_equal(PARSE(&a, err, "reboot"), -EINVAL);
	assert_non_null(strstr(err, "reboot"));
	assert_int_equal(PARSE(&a, err, "--sock", "x", "status"), -EINVAL);
	assert_int_equal(PARSE(&a, err, "report", "--last", "0"), -EINVAL);
	assert_int_equal(PARSE(&a, err, "report", "--last", "5x"), -EINVAL);
	/* One domain, named. */
	assert_int_equal(PARSE(&a, err, "domain-replace-qemu"), -EINVAL);
	assert_non_null(strstr(err, "DOMAIN is required"));
	assert_int_equal(PARSE(&a, err, "domain-replace-qemu", "a", "b"), -EINVAL);
	assert_int_equal(PARSE(&a, err, "status", "web1"), -EINVAL);
	assert_int_equal(cli_args_parse(1, ARGV("x") + 1, &a, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_host_update_takes_all_options),
		cmocka_unit_test(test_cli_host_update_needs_kernel),
		cmocka_unit_test(test_cli_defaults_and_simple_verbs),
		cmocka_unit_test(test_cli_rejects_misplaced_and_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
