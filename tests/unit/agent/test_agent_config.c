// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the agent configuration parser (agent/config/agent_config.c). */
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

#include <sys/stat.h>

#include "agent/config/agent_config.h"
#include "agent/daemon/agent_dirs.h"
#include "agent/libvirt/libvirt_update.h"
#include "agent/update/update_ops_host.h"

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
	assert_string_equal(c.qemu_config, "/etc/kvmlu/qemu.json");
	assert_int_equal(c.prepare_parallel, 8);
	assert_int_equal(c.client_idle_ms, 10000);
	assert_int_equal(c.libvirt_connect_ms, 60000);
	assert_int_equal(c.max_clients, 64);
	/* Today's behaviour: domains go through managed save. */
	assert_int_equal(c.libvirt_ram, AGENT_LIBVIRT_RAM_SAVE);
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
		" \"max_clients\": 5,"
		" \"timeouts\": {\"vmm_ms\": 100, \"prepare_ms\": 200, \"restore_ms\": 300,"
		" \"client_idle_ms\": 400, \"libvirt_connect_ms\": 500}}",
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
	assert_int_equal(c.client_idle_ms, 400);
	assert_int_equal(c.libvirt_connect_ms, 500);
	assert_int_equal(c.max_clients, 5);
	/* Half of the prepare timeout goes to hashing while the guest runs. */
	assert_int_equal(agent_running_hash_ms(&c), 100);
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

/* Where a group member's kernel may be: /boot unless set; a list of plain absolute dirs. */
static void test_config_kexec_dirs(void **state)
{
	struct agent_config c;
	char err[256];

	(void)state;
	agent_config_defaults(&c);
	assert_int_equal(c.nr_kexec_dirs, 1);
	assert_string_equal(c.kexec_dirs[0], "/boot");
	assert_int_equal(agent_config_parse("{\"kexec_dirs\": [\"/boot/\", \"/srv/kernels\"]}", &c,
					    err, sizeof(err)), 0);
	assert_int_equal(c.nr_kexec_dirs, 2);
	assert_string_equal(c.kexec_dirs[0], "/boot");
	assert_string_equal(c.kexec_dirs[1], "/srv/kernels");
	expect_refused("{\"kexec_dirs\": \"/boot\"}", "not an array");
	expect_refused("{\"kexec_dirs\": []}", "not 1..8");
	expect_refused("{\"kexec_dirs\": [\"boot\"]}", "absolute");
	expect_refused("{\"kexec_dirs\": [\"/boot/../tmp\"]}", ". or ..");
	expect_refused("{\"kexec_dirs\": [\"/boot/.\"]}", ". or ..");
}

static void test_config_libvirt_ram(void **state)
{
	struct agent_config c;
	char err[256];

	(void)state;
	agent_config_defaults(&c);
	assert_int_equal(agent_config_parse("{\"libvirt_ram\": \"refuse\"}", &c, err,
					    sizeof(err)), 0);
	assert_int_equal(c.libvirt_ram, AGENT_LIBVIRT_RAM_REFUSE);
	assert_int_equal(agent_config_parse("{\"libvirt_ram\": \"save\"}", &c, err,
					    sizeof(err)), 0);
	assert_int_equal(c.libvirt_ram, AGENT_LIBVIRT_RAM_SAVE);
	assert_int_equal(agent_config_parse("{\"libvirt_ram\": \"in-place\"}", &c, err,
					    sizeof(err)), 0);
	assert_int_equal(c.libvirt_ram, AGENT_LIBVIRT_RAM_IN_PLACE);
	assert_int_equal(agent_config_parse("{\"libvirt_ram\": \"in-place-or-save\"}", &c, err,
					    sizeof(err)), 0);
	assert_int_equal(c.libvirt_ram, AGENT_LIBVIRT_RAM_IN_PLACE_OR_SAVE);
	expect_refused("{\"libvirt_ram\": \"Save\"}",
		       "not save, refuse, in-place or in-place-or-save");
	expect_refused("{\"libvirt_ram\": \"in_place\"}",
		       "not save, refuse, in-place or in-place-or-save");
	expect_refused("{\"libvirt_ram\": \"\"}", "not save, refuse, in-place or in-place-or-save");
	/* Where libvirt keeps managed saves (RAM in place writes the image back there). */
	agent_config_defaults(&c);
	assert_string_equal(c.libvirt_save_dir, "/var/lib/libvirt/qemu/save");
	assert_int_equal(agent_config_parse("{\"libvirt_save_dir\": \"/srv/save\"}", &c, err,
					    sizeof(err)), 0);
	assert_string_equal(c.libvirt_save_dir, "/srv/save");
	expect_refused("{\"libvirt_save_dir\": \"save\"}", "not an absolute path");
	expect_refused("{\"libvirt_ram\": true}", "libvirt_ram\": not a string");
	expect_refused("{\"libvirt_ram\": \"save\", \"libvirt_ram\": \"refuse\"}",
		       "duplicate key \"libvirt_ram\"");
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
	expect_refused("{\"max_clients\": 0}", "max_clients");
	expect_refused("{\"max_clients\": 1025}", "max_clients");
	expect_refused("{\"timeouts\": {\"client_idle_ms\": 5}}", "client_idle_ms");
	expect_refused("{\"timeouts\": {\"libvirt_connect_ms\": -1}}", "libvirt_connect_ms");
	expect_refused("{\"libvirt_uri\": 7}", "libvirt_uri");
	expect_refused("{\"libvirt_uri\": \"\"}", "libvirt_uri");
	expect_refused("{\"libvirt_uri\": \"/var/run/libvirt/sock\"}", "not a libvirt URI");
	expect_refused("{\"libvirt_uri\": \"qemu:///system extra\"}", "printable");
	expect_refused("{\"libvirt_uri\": \"QEMU:///system\"}", "not a libvirt URI");
	expect_refused("{\"libvirt_uri\": \"qemu:///sys\\u0000tem\"}", "libvirt_uri");
	expect_refused("{\"libvirt_state_file\": \"libvirt.json\"}", "absolute");
	expect_refused("{\"qemu_config\": \"qemu.json\"}", "absolute");
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

static void test_config_rejects_a_key_given_twice(void **state)
{
	(void)state;
	/* json-c alone keeps the last: this file would have allowed kexec. */
	expect_refused("{\"allow_kexec\": false, \"allow_kexec\": true}",
		       "duplicate key \"allow_kexec\"");
	expect_refused("{\"timeouts\": {\"vmm_ms\": 5000, \"vmm_ms\": 1}}",
		       "duplicate key \"vmm_ms\" in /timeouts");
	expect_refused("{\"allow_kexec\": false, \"\\u0061llow_kexec\": true}", "allow_kexec");
	/* Two comments with one key are a key twice too. */
	expect_refused("{\"//\": \"a\", \"//\": \"b\"}", "duplicate key \"//\"");
	/* And what JSON does not have, though json-c takes it. */
	expect_refused("{'allow_kexec': true}", "not JSON");
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
	assert_int_equal(c.libvirt_ram, AGENT_LIBVIRT_RAM_SAVE);
}


static int is_dir(const char *path, mode_t *mode)
{
	struct stat st;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return 0;
	if (mode)
		*mode = st.st_mode & 07777;
	return 1;
}

/* /run is empty after a kexec: the agent makes what its config names. */
static void test_dirs_made_where_the_config_points(void **state)
{
	char top[] = "/tmp/kvmlu-dirs-XXXXXX", err[256];
	struct agent_config c;
	mode_t mode;
	char cmd[64];

	(void)state;
	assert_non_null(mkdtemp(top));
	agent_config_defaults(&c);
	snprintf(c.run_dir, sizeof(c.run_dir), "%s/run/kvmlu/vms", top);
	snprintf(c.state_dir, sizeof(c.state_dir), "%s/run/kvmlu/agent", top);
	snprintf(c.history_dir, sizeof(c.history_dir), "%s/lib/kvmlu/history", top);
	snprintf(c.serial_dir, sizeof(c.serial_dir), "%s/log/kvmlu", top);
	snprintf(c.socket_path, sizeof(c.socket_path), "%s/sock/agent.sock", top);
	assert_int_equal(agent_dirs_make(&c, err, sizeof(err)), 0);
	assert_true(is_dir(c.run_dir, NULL));
	assert_true(is_dir(c.state_dir, &mode));
	assert_int_equal(mode, 0700);
	assert_true(is_dir(c.history_dir, NULL));
	assert_true(is_dir(c.serial_dir, NULL));
	snprintf(cmd, sizeof(cmd), "%s/sock", top);
	assert_true(is_dir(cmd, NULL));
	/* Again: nothing to do, no error. */
	assert_int_equal(agent_dirs_make(&c, err, sizeof(err)), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	assert_int_equal(system(cmd), 0);
}

static void test_dirs_refuses_a_file_in_the_way(void **state)
{
	char top[] = "/tmp/kvmlu-dirs-XXXXXX", err[256] = "", path[64];
	struct agent_config c;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(top));
	agent_config_defaults(&c);
	snprintf(path, sizeof(path), "%s/vms", top);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(c.run_dir, sizeof(c.run_dir), "%s", path);
	c.state_dir[0] = c.history_dir[0] = c.serial_dir[0] = '\0';
	snprintf(c.socket_path, sizeof(c.socket_path), "agent.sock");
	assert_int_equal(agent_dirs_make(&c, err, sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, path));
	unlink(path);
	rmdir(top);
}

/* Does the unit make DIR (under /run, /var/lib or /var/log) at its start? */
static int unit_makes(const char *unit, const char *dir)
{
	static const struct { const char *key, *base; } kinds[] = {
		{ "RuntimeDirectory=", "/run/" },
		{ "StateDirectory=", "/var/lib/" },
		{ "LogsDirectory=", "/var/log/" },
	};
	char line[512], *tok, *save;
	int found = 0;
	FILE *f = fopen(unit, "r");

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		for (unsigned int k = 0; k < 3 && !found; k++) {
			size_t kl = strlen(kinds[k].key), bl = strlen(kinds[k].base);

			if (strncmp(line, kinds[k].key, kl) || strncmp(dir, kinds[k].base, bl))
				continue;
			for (tok = strtok_r(line + kl, " ", &save); tok && !found;
			     tok = strtok_r(NULL, " ", &save))
				found = !strcmp(tok, dir + bl);
		}
	}
	fclose(f);
	return found;
}

/* Both shipped units make every directory the shipped config names. */
static void test_shipped_units_make_the_shipped_config_dirs(void **state)
{
	static const char *const units[] = { "configs/kvmlu-agent.service",
					      "configs/kvmlu-restore.service" };
	struct agent_config c;
	char err[256], sockdir[AGENT_SOCK_PATH_MAX];

	(void)state;
	if (access("configs/agent.json", R_OK))
		skip();
	agent_config_defaults(&c);
	assert_int_equal(agent_config_load("configs/agent.json", &c, err, sizeof(err)), 0);
	snprintf(sockdir, sizeof(sockdir), "%s", c.socket_path);
	*strrchr(sockdir, '/') = '\0';
	for (unsigned int u = 0; u < 2; u++) {
		const char *dirs[] = { c.run_dir, c.state_dir, c.history_dir, c.serial_dir, sockdir };

		for (unsigned int d = 0; d < 5; d++) {
			if (!unit_makes(units[u], dirs[d]))
				fail_msg("%s does not make %s, which configs/agent.json names",
					 units[u], dirs[d]);
		}
	}
}

/*
 * The libvirt keys reach the update's libvirt side (update_ops_host_init
 * with the provider kvmlu-agent registers).
 */
static void test_config_libvirt_keys_reach_the_update(void **state)
{
	struct update_host_ctx *ctx = calloc(1, sizeof(*ctx));
	struct libvirt_update *lv;
	struct agent_config c;
	struct update_ops ops;
	char err[256];

	(void)state;
	assert_non_null(ctx);
	update_ops_host_set_domains(&libvirt_update_provider);
	agent_config_defaults(&c);
	update_ops_host_init(&ops, ctx, &c);
	assert_non_null(ctx->domains);
	assert_ptr_equal(ops.domains_ctx, ctx->domains);
	lv = ctx->domains;
	assert_string_equal(lv->uri, "qemu:///system");
	assert_false(lv->required);
	assert_string_equal(lv->state_file, "/var/lib/kvmlu/libvirt-domains.json");
	assert_false(lv->ram_refuse);
	assert_false(lv->ram_in_place);
	assert_string_equal(lv->save_dir, "/var/lib/libvirt/qemu/save");
	assert_string_equal(lv->qemu_config, "/etc/kvmlu/qemu.json");
	update_ops_host_fini(ctx);

	assert_int_equal(agent_config_parse("{\"libvirt_uri\": \"test:///default\","
					    " \"libvirt_state_file\": \"/srv/lv.json\","
					    " \"libvirt_ram\": \"refuse\"}",
					    &c, err, sizeof(err)), 0);
	update_ops_host_init(&ops, ctx, &c);
	lv = ctx->domains;
	assert_non_null(lv);
	assert_string_equal(lv->uri, "test:///default");
	/* A configured URI must answer: the update stops if it does not. */
	assert_true(lv->required);
	assert_string_equal(lv->state_file, "/srv/lv.json");
	assert_true(lv->ram_refuse);
	assert_false(lv->ram_in_place);
	update_ops_host_fini(ctx);

	/* in-place refuses a domain that cannot; in-place-or-save saves it. */
	assert_int_equal(agent_config_parse("{\"libvirt_ram\": \"in-place\", "
					    "\"libvirt_save_dir\": \"/srv/save\", "
					    "\"qemu_config\": \"/srv/q.json\"}", &c, err,
					    sizeof(err)), 0);
	update_ops_host_init(&ops, ctx, &c);
	lv = ctx->domains;
	assert_true(lv->ram_refuse);
	assert_true(lv->ram_in_place);
	assert_string_equal(lv->save_dir, "/srv/save");
	assert_string_equal(lv->qemu_config, "/srv/q.json");
	update_ops_host_fini(ctx);
	assert_int_equal(agent_config_parse("{\"libvirt_ram\": \"in-place-or-save\"}", &c, err,
					    sizeof(err)), 0);
	update_ops_host_init(&ops, ctx, &c);
	lv = ctx->domains;
	assert_false(lv->ram_refuse);
	assert_true(lv->ram_in_place);
	update_ops_host_fini(ctx);

	/* Without a provider (a program without libvirt): no domains. */
	update_ops_host_set_domains(NULL);
	update_ops_host_init(&ops, ctx, &c);
	assert_null(ops.domains_ctx);
	assert_null(ops.domains_prepare);
	update_ops_host_fini(ctx);
	free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_libvirt_keys_reach_the_update),
		cmocka_unit_test(test_config_defaults_are_safe),
		cmocka_unit_test(test_config_parses_every_key),
		cmocka_unit_test(test_config_kexec_dirs),
		cmocka_unit_test(test_config_rejects_unknown_key),
		cmocka_unit_test(test_config_rejects_wrong_types_and_ranges),
		cmocka_unit_test(test_config_rejects_non_json),
		cmocka_unit_test(test_config_rejects_a_key_given_twice),
		cmocka_unit_test(test_config_libvirt_ram),
		cmocka_unit_test(test_config_load_names_the_file),
		cmocka_unit_test(test_config_shipped_example_parses),
		cmocka_unit_test(test_dirs_made_where_the_config_points),
		cmocka_unit_test(test_dirs_refuses_a_file_in_the_way),
		cmocka_unit_test(test_shipped_units_make_the_shipped_config_dirs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
