// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the agent configuration parser (agent/agent_config.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <errno.h>

#include "agent/agent_config.h"
#include "agent/update_ops_host.h"

static void test_config_defaults_are_safe(void **state)
{
	struct agent_config c;

	(void)state;
	agent_config_defaults(&c);
	assert_string_equal(c.socket_path, "/run/kvmlu/agent.sock");
	assert_false(c.allow_kexec);
	assert_true(c.vmm_timeout_ms > 0);
	/* No URI: qemu:///system, optional; the state file is on disk, not /run. */
	assert_string_equal(c.libvirt_uri, "");
	assert_string_equal(c.libvirt_state_file, "/var/lib/kvmlu/libvirt-domains.json");
	assert_int_equal(c.prepare_parallel, 8);
}

static void test_config_parses_every_key(void **state)
{
	struct agent_config c;
	char err[256];

	(void)state;
	agent_config_defaults(&c);
	assert_int_equal(agent_config_parse(
		"{\"// comment\": \"ignored\", \"socket\": \"/tmp/a.sock\", \"group\": \"wheel\","
		" \"run_dir\": \"/r\", \"history_dir\": \"/h\", \"state_dir\": \"/s\","
		" \"vmm_binary\": \"/bin/vmm\", \"serial_dir\": \"/tmp\", \"history_keep\": 3, \"min_free_mb\": 10,"
		" \"allow_kexec\": true, \"prepare_parallel\": 4,"
		" \"libvirt_uri\": \"qemu+unix:///system?socket=/tmp/l.sock\","
		" \"libvirt_state_file\": \"/var/lib/x/lv.json\","
		" \"timeouts\": {\"vmm_ms\": 100, \"prepare_ms\": 200, \"restore_ms\": 300}}",
		&c, err, sizeof(err)), 0);
	assert_string_equal(c.socket_path, "/tmp/a.sock");
	assert_string_equal(c.group, "wheel");
	assert_string_equal(c.run_dir, "/r");
	assert_string_equal(c.history_dir, "/h");
	assert_string_equal(c.state_dir, "/s");
	assert_string_equal(c.vmm_binary, "/bin/vmm");
	assert_string_equal(c.serial_dir, "/tmp");
	assert_int_equal(c.history_keep, 3);
	assert_int_equal(c.min_free_bytes, 10ULL << 20);
	assert_true(c.allow_kexec);
	assert_int_equal(c.vmm_timeout_ms, 100);
	assert_int_equal(c.prepare_timeout_ms, 200);
	assert_int_equal(c.restore_timeout_ms, 300);
	assert_int_equal(c.prepare_parallel, 4);
	assert_string_equal(c.libvirt_uri, "qemu+unix:///system?socket=/tmp/l.sock");
	assert_string_equal(c.libvirt_state_file, "/var/lib/x/lv.json");
}

static void expect_refused(const char *text, const char *needle)
{
	struct agent_config c, before;
	char err[256] = "";

	agent_config_defaults(&c);
	before = c;
	assert_int_not_equal(agent_config_parse(text, &c, err, sizeof(err)), 0);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
	/* A refused file changes nothing. */
	assert_memory_equal(&c, &before, sizeof(c));
}

static void test_config_rejects_unknown_key(void **state)
{
	(void)state;
	expect_refused("{\"socket\": \"/x\", \"sockett\": \"/y\"}", "sockett");
	expect_refused("{\"timeouts\": {\"vmm\": 5}}", "timeouts.vmm");
}

static void test_config_rejects_wrong_types_and_ranges(void **state)
{
	(void)state;
	expect_refused("{\"allow_kexec\": \"yes\"}", "allow_kexec");
	expect_refused("{\"history_keep\": 0}", "history_keep");
	expect_refused("{\"timeouts\": {\"vmm_ms\": -1}}", "vmm_ms");
	expect_refused("{\"run_dir\": \"relative/dir\"}", "absolute");
	expect_refused("{\"prepare_parallel\": 0}", "prepare_parallel");
	expect_refused("{\"prepare_parallel\": 65}", "prepare_parallel");
	expect_refused("{\"libvirt_uri\": 7}", "libvirt_uri");
	expect_refused("{\"libvirt_uri\": \"\"}", "libvirt_uri");
	expect_refused("{\"libvirt_uri\": \"/var/run/libvirt/sock\"}", "not a libvirt URI");
	expect_refused("{\"libvirt_uri\": \"qemu:///system extra\"}", "printable");
	expect_refused("{\"libvirt_uri\": \"QEMU:///system\"}", "not a libvirt URI");
	expect_refused("{\"libvirt_uri\": \"qemu:///sys\\u0000tem\"}", "libvirt_uri");
	expect_refused("{\"libvirt_state_file\": \"libvirt.json\"}", "absolute");
	expect_refused("{\"socket\": \"/0123456789012345678901234567890123456789012345678901"
		       "234567890123456789012345678901234567890123456789/0123456789.sock\"}", "socket");
}

static void test_config_rejects_non_json(void **state)
{
	(void)state;
	expect_refused("", "JSON");
	expect_refused("[1,2]", "object");
	expect_refused("{\"socket\": \"/x\"} trailing", "JSON");
	expect_refused("{\"socket\": \"/x\"", "JSON");
}

static void test_config_load_names_the_file(void **state)
{
	struct agent_config c;
	char path[] = "/tmp/kvmlu-test-config-XXXXXX", err[256];
	int fd;

	(void)state;
	agent_config_defaults(&c);
	assert_int_equal(agent_config_load("/nonexistent/agent.json", &c, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/agent.json"));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"group\": 5}", 12), 12);
	close(fd);
	assert_int_equal(agent_config_load(path, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "group"));
	unlink(path);
}

/* The documented example must stay a valid configuration (run from the top). */
static void test_config_shipped_example_parses(void **state)
{
	struct agent_config c;
	char err[256];

	(void)state;
	agent_config_defaults(&c);
	if (access("configs/agent.json", R_OK))
		skip();
	assert_int_equal(agent_config_load("configs/agent.json", &c, err, sizeof(err)), 0);
	assert_string_equal(c.socket_path, "/run/kvmlu/agent.sock");
	assert_false(c.allow_kexec);
	/* Left out on purpose: a host without libvirtd must still update. */
	assert_string_equal(c.libvirt_uri, "");
	assert_string_equal(c.libvirt_state_file, "/var/lib/kvmlu/libvirt-domains.json");
	assert_int_equal(c.prepare_parallel, 8);
}

/* The libvirt keys reach the update's libvirt side (update_ops_host_init). */
static void test_config_libvirt_keys_reach_the_update(void **state)
{
	struct update_host_ctx *ctx = calloc(1, sizeof(*ctx));
	struct agent_config c;
	struct update_ops ops;
	char err[256];

	(void)state;
	assert_non_null(ctx);
	agent_config_defaults(&c);
	update_ops_host_init(&ops, ctx, &c);
	assert_ptr_equal(ops.domains_ctx, &ctx->libvirt);
	assert_string_equal(ctx->libvirt.uri, "qemu:///system");
	assert_false(ctx->libvirt.required);
	assert_string_equal(ctx->libvirt.state_file, "/var/lib/kvmlu/libvirt-domains.json");

	assert_int_equal(agent_config_parse("{\"libvirt_uri\": \"test:///default\","
					    " \"libvirt_state_file\": \"/srv/lv.json\"}",
					    &c, err, sizeof(err)), 0);
	update_ops_host_init(&ops, ctx, &c);
	assert_string_equal(ctx->libvirt.uri, "test:///default");
	/* A configured URI must answer: the update stops if it does not. */
	assert_true(ctx->libvirt.required);
	assert_string_equal(ctx->libvirt.state_file, "/srv/lv.json");
	free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_libvirt_keys_reach_the_update),
		cmocka_unit_test(test_config_defaults_are_safe),
		cmocka_unit_test(test_config_parses_every_key),
		cmocka_unit_test(test_config_rejects_unknown_key),
		cmocka_unit_test(test_config_rejects_wrong_types_and_ranges),
		cmocka_unit_test(test_config_rejects_non_json),
		cmocka_unit_test(test_config_load_names_the_file),
		cmocka_unit_test(test_config_shipped_example_parses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
