// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-qemu, the libvirt <emulator> wrapper: its argv rewrite
 * (agent/libvirt/qemu_argv.c) on libvirt 9.0's real command lines
 * (tests/unit/agent/qemu-argv/, captured from this machine's libvirt and
 * QEMU 7.2, README there), on hand-made variants of them for every
 * refusal, its config reader, and the program itself run on a fake QEMU
 * that reports the memfd and the fds it inherited.
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
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/libvirt/qemu_argv.h"
#include "agent/libvirt/qemu_wrapper_config.h"

#define FIXTURES	"tests/unit/agent/qemu-argv/"
#define WRAPPER		"build/san/bin/kvmlu-qemu"
#define QEMU		"/usr/bin/qemu-system-x86_64"
#define QMP_DIR		"/run/kvmlu/lv"
#define UUID_SHARED	"6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a11"
#define MAX_TOK		256

/* A command line: argv[0] "kvmlu-qemu", then the tokens. Strings owned. */
struct cmd {
	int argc;
	char *argv[MAX_TOK + 1];
};

static void cmd_free(struct cmd *c)
{
	for (int i = 0; i < c->argc; i++)
		free(c->argv[i]);
	c->argc = 0;
}

static void cmd_add(struct cmd *c, const char *tok)
{
	assert_true(c->argc < MAX_TOK);
	c->argv[c->argc] = strdup(tok);
	assert_non_null(c->argv[c->argc]);
	c->argv[++c->argc] = NULL;
}

/* A fixture: the tokens libvirt passed, NUL-separated as captured. */
static void cmd_load(struct cmd *c, const char *name)
{
	char path[PATH_MAX], buf[16384];
	size_t len, off = 0;
	FILE *f;

	c->argc = 0;
	cmd_add(c, "kvmlu-qemu");
	snprintf(path, sizeof(path), FIXTURES "%s.argv", name);
	f = fopen(path, "r");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_true(len > 0 && len < sizeof(buf) && buf[len - 1] == '\0');
	while (off < len) {
		cmd_add(c, buf + off);
		off += strlen(buf + off) + 1;
	}
}

static int find(const struct cmd *c, const char *prefix)
{
	for (int i = 1; i < c->argc; i++)
		if (!strncmp(c->argv[i], prefix, strlen(prefix)))
			return i;
	return -1;
}

static void cmd_set(struct cmd *c, int i, const char *tok)
{
	assert_true(i > 0 && i < c->argc);
	free(c->argv[i]);
	c->argv[i] = strdup(tok);
}

/* The shared-memfd start with pc.ram's -object replaced by obj. */
static void with_ram_object(struct cmd *c, const char *obj)
{
	cmd_load(c, "start-memfd-shared");
	cmd_set(c, find(c, "{\"qom-type\":\"memory-backend-memfd\""), obj);
}

static int inspect(struct cmd *c, struct qemu_argv_plan *p, char *err)
{
	return qemu_argv_inspect(c->argc, c->argv, p, err, 512);
}

static void assert_refused(struct cmd *c, const char *why)
{
	struct qemu_argv_plan p;
	struct qemu_argv_out out;
	char err[512] = "";

	assert_int_equal(inspect(c, &p, err), -EINVAL);
	if (!strstr(err, why))
		fail_msg("refusal '%s' does not say '%s'", err, why);
	/* rewrite refuses the same way and leaves nothing allocated. */
	err[0] = '\0';
	assert_int_equal(qemu_argv_rewrite(c->argc, c->argv, QEMU, 100, QMP_DIR, &out, &p, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, why));
	assert_null(out.argv);
	cmd_free(c);
}

static void assert_passed(struct cmd *c, const char *why)
{
	struct qemu_argv_plan p;
	struct qemu_argv_out out;
	char err[512] = "";

	assert_int_equal(inspect(c, &p, err), 0);
	assert_int_equal(p.action, QEMU_ARGV_PASS);
	if (!strstr(p.why, why))
		fail_msg("pass reason '%s' does not say '%s'", p.why, why);
	assert_int_equal(qemu_argv_rewrite(c->argc, c->argv, QEMU, 100, QMP_DIR, &out, &p, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nothing to rewrite"));
	cmd_free(c);
}

/*
 * Rewrites c with fd 100 and checks the result against c token by token:
 * argv[0] is QEMU, pc.ram's value is want_object, -mem-prealloc is gone,
 * and `-qmp unix:QMP_DIR/<uuid>.qmp,server=on,wait=off` is appended.
 */
static void assert_rewritten(struct cmd *c, const char *want_object, bool incoming)
{
	struct qemu_argv_plan p, p2;
	struct qemu_argv_out out;
	char err[512] = "", qmp[160];
	int ram = find(c, "{\"qom-type\":\"memory-backend-memfd\""), n = 1;

	assert_int_equal(inspect(c, &p, err), 0);
	assert_int_equal(p.action, QEMU_ARGV_REWRITE);
	assert_string_equal(p.uuid, UUID_SHARED);
	assert_int_equal(p.ram_size, 64ULL << 20);
	assert_int_equal(p.incoming, incoming);
	assert_int_equal(qemu_argv_rewrite(c->argc, c->argv, QEMU, 100, QMP_DIR, &out, &p2, err,
					   sizeof(err)), 0);
	assert_memory_equal(&p, &p2, sizeof(p));
	assert_string_equal(out.argv[0], QEMU);
	for (int i = 1; i < c->argc; i++) {
		if (!strcmp(c->argv[i], "-mem-prealloc"))
			continue;
		assert_true(n < out.argc);
		assert_string_equal(out.argv[n], i == ram ? want_object : c->argv[i]);
		n++;
	}
	snprintf(qmp, sizeof(qmp), "unix:" QMP_DIR "/%s.qmp,server=on,wait=off", UUID_SHARED);
	assert_int_equal(out.argc, n + 2);
	assert_string_equal(out.argv[n], "-qmp");
	assert_string_equal(out.argv[n + 1], qmp);
	assert_null(out.argv[n + 2]);
	/* The rewritten line is a pass: kvmlu-qemu run on it twice changes nothing more. */
	out.argv[0] = (char *)"kvmlu-qemu";
	assert_int_equal(qemu_argv_inspect(out.argc, out.argv, &p2, err, sizeof(err)), 0);
	assert_int_equal(p2.action, QEMU_ARGV_PASS);
	qemu_argv_out_free(&out);
	cmd_free(c);
}

#define FILE_OBJECT \
	"{\"qom-type\":\"memory-backend-file\",\"id\":\"pc.ram\",\"mem-path\":\"/proc/self/fd/100\"," \
	"\"share\":true,\"size\":67108864,\"x-use-canonical-path-for-ramblock-id\":false}"

static void test_qemu_argv_rewrites_libvirts_memfd_start(void **state)
{
	struct cmd c;

	(void)state;
	cmd_load(&c, "start-memfd-shared");
	assert_rewritten(&c, FILE_OBJECT, false);
	/* <source type='memfd'/> without <access>: share unset, QEMU's memfd default is on. */
	cmd_load(&c, "start-memfd-noaccess");
	cmd_set(&c, find(&c, "-uuid") + 1, UUID_SHARED);
	assert_rewritten(&c, FILE_OBJECT, false);
	/* <allocation mode='immediate'/>: prealloc dropped. */
	cmd_load(&c, "start-memfd-prealloc");
	cmd_set(&c, find(&c, "-uuid") + 1, UUID_SHARED);
	assert_rewritten(&c, FILE_OBJECT, false);
}

static void test_qemu_argv_rewrites_libvirts_restore(void **state)
{
	struct cmd c;

	(void)state;
	/* virsh start after managedsave: -incoming defer stays, the memfd is new. */
	cmd_load(&c, "restore-memfd-shared");
	assert_true(find(&c, "-incoming") > 0);
	assert_rewritten(&c, FILE_OBJECT, true);
}

static void test_qemu_argv_passes_what_is_not_a_memfd_domain(void **state)
{
	struct cmd c;

	(void)state;
	cmd_load(&c, "probe-machine-none");
	assert_passed(&c, "capability probe");
	cmd_load(&c, "start-plain-ram");
	assert_passed(&c, "no JSON memory-backend-memfd with id pc.ram");
	/* NUMA cells: the memfd is ram-node0, not pc.ram. */
	cmd_load(&c, "start-memfd-numa");
	assert_passed(&c, "no JSON memory-backend-memfd with id pc.ram");
	/* No -uuid: not a libvirt domain, even with a memfd pc.ram. */
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-uuid"), "-name");
	assert_passed(&c, "no -uuid");
	/* The probe wins over everything else. */
	cmd_load(&c, "start-memfd-private");
	cmd_set(&c, find(&c, "-machine") + 1, "type=none,accel=tcg");
	assert_passed(&c, "capability probe");
	/* A memfd with another id is not pc.ram. */
	with_ram_object(&c, "{\"qom-type\":\"memory-backend-memfd\",\"id\":\"mem0\",\"size\":4096}");
	assert_passed(&c, "no JSON memory-backend-memfd");
}

static void test_qemu_argv_keeps_the_backend_options_that_mean_something(void **state)
{
	struct cmd c;

	(void)state;
	with_ram_object(&c, "{\"qom-type\":\"memory-backend-memfd\",\"id\":\"pc.ram\","
			"\"x-use-canonical-path-for-ramblock-id\":false,\"seal\":false,"
			"\"host-nodes\":[0],\"policy\":\"bind\",\"dump\":false,\"merge\":true,"
			"\"prealloc\":true,\"prealloc-threads\":4,\"hugetlb\":false,"
			"\"reserve\":true,\"size\":67108864}");
	assert_rewritten(&c,
			 "{\"qom-type\":\"memory-backend-file\",\"id\":\"pc.ram\","
			 "\"mem-path\":\"/proc/self/fd/100\",\"share\":true,\"size\":67108864,"
			 "\"x-use-canonical-path-for-ramblock-id\":false,\"host-nodes\":[0],"
			 "\"policy\":\"bind\",\"dump\":false,\"merge\":true,\"reserve\":true}",
			 false);
	/* -mem-prealloc goes too; a double-dash option reads like a single one. */
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-no-shutdown"), "-mem-prealloc");
	cmd_set(&c, find(&c, "-msg"), "--msg");
	assert_rewritten(&c, FILE_OBJECT, false);
}

#define RAM_OBJ(extra) \
	"{\"qom-type\":\"memory-backend-memfd\",\"id\":\"pc.ram\"," \
	"\"x-use-canonical-path-for-ramblock-id\":false," extra "\"size\":67108864}"

static void test_qemu_argv_refuses_what_cannot_stay_in_place(void **state)
{
	struct cmd c;

	(void)state;
	cmd_load(&c, "start-memfd-private");
	assert_refused(&c, "share=false");
	with_ram_object(&c, RAM_OBJ("\"hugetlb\":true,"));
	assert_refused(&c, "hugetlb");
	with_ram_object(&c, RAM_OBJ("\"hugetlbsize\":2097152,"));
	assert_refused(&c, "hugetlbsize");
	with_ram_object(&c, "{\"qom-type\":\"memory-backend-memfd\",\"id\":\"pc.ram\",\"size\":67108864}");
	assert_refused(&c, "x-use-canonical-path-for-ramblock-id=false");
	with_ram_object(&c, "{\"qom-type\":\"memory-backend-memfd\",\"id\":\"pc.ram\","
			"\"x-use-canonical-path-for-ramblock-id\":true,\"size\":67108864}");
	assert_refused(&c, "without x-use-canonical-path-for-ramblock-id=false");
	with_ram_object(&c, RAM_OBJ("\"discard-data\":true,"));
	assert_refused(&c, "key 'discard-data'");
	with_ram_object(&c, RAM_OBJ("\"share\":\"on\","));
	assert_refused(&c, "key 'share' is string, not boolean");

	/* Several RAM backends: a second one of any kind, JSON or key=value. */
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "{\"qom-type\":\"secret\""),
		"{\"qom-type\":\"memory-backend-ram\",\"id\":\"mem1\",\"size\":4096}");
	assert_refused(&c, "2 memory backends (memory-backend-ram, memory-backend-memfd)");
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "{\"qom-type\":\"secret\""), "memory-backend-file,id=m1,size=4096,mem-path=/x");
	assert_refused(&c, "2 memory backends");
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "{\"qom-type\":\"secret\""), RAM_OBJ(""));
	assert_refused(&c, "2 memory backends (memory-backend-memfd, memory-backend-memfd)");

	/* Devices that add RAM. */
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "{\"driver\":\"piix3-usb-uhci\""),
		"{\"driver\":\"pc-dimm\",\"id\":\"dimm0\",\"memdev\":\"pc.ram\"}");
	assert_refused(&c, "-device pc-dimm");
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "{\"driver\":\"piix3-usb-uhci\""), "virtio-mem-pci,id=vm0,memdev=pc.ram");
	assert_refused(&c, "-device virtio-mem-pci");
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-msg"), "-mem-path");
	assert_refused(&c, "-mem-path");
	/* What could change pc.ram out of this reading's sight. */
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-msg"), "-readconfig");
	assert_refused(&c, "-readconfig beside pc.ram");
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-msg"), "-set");
	cmd_set(&c, find(&c, "timestamp=on"), "object.pc.ram.share=off");
	assert_refused(&c, "-set beside pc.ram");
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-msg"), "-global");
	cmd_set(&c, find(&c, "timestamp=on"), "memory-backend-file.share=off");
	assert_refused(&c, "-global 'memory-backend-file.share=off'");
	/* A -global on a device is not about pc.ram. */
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-msg"), "-global");
	cmd_set(&c, find(&c, "timestamp=on"), "PIIX4_PM.disable_s3=1");
	assert_rewritten(&c, FILE_OBJECT, false);

	/* The machine must run on pc.ram; ",," is a comma inside the value. */
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-machine") + 1, "pc-i440fx-7.2,usb=off");
	assert_refused(&c, "no -machine memory-backend=pc.ram");
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-machine") + 1, "pc-i440fx-7.2,memory-backend=pc.ram,,x");
	assert_refused(&c, "no -machine memory-backend=pc.ram");
}

static void test_qemu_argv_refuses_bad_sizes_and_uuids(void **state)
{
	static const char *const sizes[] = { "0", "-4096", "4097", "17592186048512",
					     "18446744073709551615", "1.5e9" };
	char obj[512];
	struct cmd c;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(obj, sizeof(obj),
			 "{\"qom-type\":\"memory-backend-memfd\",\"id\":\"pc.ram\","
			 "\"x-use-canonical-path-for-ramblock-id\":false,\"size\":%s}", sizes[i]);
		with_ram_object(&c, obj);
		assert_refused(&c, i == 5 ? "key 'size' is double" : "pc.ram size");
	}
	with_ram_object(&c, "{\"qom-type\":\"memory-backend-memfd\",\"id\":\"pc.ram\","
			"\"x-use-canonical-path-for-ramblock-id\":false}");
	assert_refused(&c, "pc.ram has no size");

	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-uuid") + 1, "6F1B6A4E-3C0E-4C52-9B1E-2A7E0D9C4A11");
	assert_refused(&c, "not a lowercase 8-4-4-4-12 hex UUID");
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-uuid") + 1, "../../etc/passwd");
	assert_refused(&c, "-uuid '../../etc/passwd'");
	cmd_load(&c, "start-memfd-shared");
	cmd_set(&c, find(&c, "-display"), "-uuid");
	assert_refused(&c, "-uuid given 2 times");
}

static void test_qemu_argv_refuses_what_does_not_read_as_qemu_options(void **state)
{
	struct qemu_argv_plan p;
	struct cmd c;
	char err[512];

	(void)state;
	/* A positional token (QEMU's disk image) where an option is due. */
	cmd_load(&c, "start-plain-ram");
	cmd_add(&c, "disk.img");
	assert_refused(&c, "argument 44 'disk.img' is not a QEMU option");
	/* Control bytes are not copied into the domain log. */
	cmd_load(&c, "start-plain-ram");
	cmd_add(&c, "x\n\033[2J");
	assert_refused(&c, "'x??[2J'");
	cmd_load(&c, "start-plain-ram");
	cmd_add(&c, "-incoming");
	assert_refused(&c, "option -incoming at argument 44 has no value");
	cmd_load(&c, "start-plain-ram");
	cmd_add(&c, "--");
	assert_refused(&c, "'--' is not a QEMU option");
	/* JSON read strictly, for every -object and -device, pc.ram or not. */
	cmd_load(&c, "start-plain-ram");
	cmd_set(&c, find(&c, "{\"driver\":\"piix3-usb-uhci\""), "{\"driver\":\"a\",\"driver\":\"b\"}");
	assert_refused(&c, "-device at argument");
	with_ram_object(&c, "{\"qom-type\":\"memory-backend-memfd\",\"id\":\"pc.ram\",\"id\":\"x\"}");
	assert_refused(&c, "not strict JSON");
	cmd_load(&c, "start-plain-ram");
	cmd_set(&c, find(&c, "{\"qom-type\":\"secret\""), "{\"qom-type\":");
	assert_refused(&c, "not strict JSON");
	cmd_load(&c, "start-plain-ram");
	cmd_set(&c, find(&c, "{\"qom-type\":\"secret\""), "{}[]");
	assert_refused(&c, "not strict JSON");

	/* Too many tokens: refused before any is read. */
	{
		char *big[QEMU_ARGV_MAX + 2];

		for (int i = 0; i <= QEMU_ARGV_MAX; i++)
			big[i] = (char *)"-S";
		big[QEMU_ARGV_MAX + 1] = NULL;
		assert_int_equal(qemu_argv_inspect(QEMU_ARGV_MAX + 1, big, &p, err, sizeof(err)),
				 -E2BIG);
		assert_int_equal(qemu_argv_inspect(QEMU_ARGV_MAX, big, &p, err, sizeof(err)), 0);
	}
}

static void test_qemu_argv_checks_the_qmp_dir_and_names_the_memfd(void **state)
{
	struct qemu_argv_plan p;
	struct qemu_argv_out out;
	char err[256], name[QEMU_ARGV_MEMFD_NAME_MAX], longdir[120];
	struct cmd c;

	(void)state;
	assert_int_equal(qemu_argv_check_qmp_dir("/run/kvmlu/lv", err, sizeof(err)), 0);
	assert_int_equal(qemu_argv_check_qmp_dir("run/lv", err, sizeof(err)), -EINVAL);
	assert_int_equal(qemu_argv_check_qmp_dir("/run/a,server=off", err, sizeof(err)), -EINVAL);
	memset(longdir, 'a', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = '\0';
	longdir[67] = '\0';	/* 67 + "/" + 36 + ".qmp" = 108: no room for the NUL */
	assert_int_equal(qemu_argv_check_qmp_dir(longdir, err, sizeof(err)), -ENAMETOOLONG);
	longdir[66] = '\0';
	assert_int_equal(qemu_argv_check_qmp_dir(longdir, err, sizeof(err)), 0);

	cmd_load(&c, "start-memfd-shared");
	assert_int_equal(qemu_argv_rewrite(c.argc, c.argv, QEMU, 100, "/a,b", &out, &p, err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(qemu_argv_rewrite(c.argc, c.argv, QEMU, -1, QMP_DIR, &out, &p, err,
					   sizeof(err)), -EINVAL);
	assert_null(out.argv);
	cmd_free(&c);

	qemu_argv_memfd_name(UUID_SHARED, name);
	assert_string_equal(name, "kvmlu-lv:" UUID_SHARED ":pc.ram");
	/* memfd_create takes at most 249 bytes of name. */
	assert_true(strlen(name) + 1 <= QEMU_ARGV_MEMFD_NAME_MAX && QEMU_ARGV_MEMFD_NAME_MAX <= 249);
}

static int cfg_parse(const char *text, struct qemu_wrapper_config *cfg, char *err)
{
	return qemu_wrapper_config_parse(text, strlen(text), cfg, err, 256);
}

static void test_qemu_wrapper_config(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "{}", "\"qemu\" (the QEMU binary to run) is missing" },
		{ "{\"qemu\":\"qemu-system-x86_64\"}", "absolute path" },
		{ "{\"qemu\":\"/q\",\"qemu\":\"/r\"}", "qemu" },
		{ "{\"qemu\":\"/q\",\"emulator\":\"/r\"}", "unknown key \"emulator\"" },
		{ "{\"qemu\":1}", "must be a string" },
		{ "{\"qemu\":\"/q\",\"lvram_socket\":\"lvram.sock\"}", "absolute path" },
		{ "{\"qemu\":\"/q\",\"lvram_socket\":\"/a\",\"lvram_socket\":\"/b\"}", "lvram_socket" },
		{ "{\"qemu\":\"/q\",\"qmp_dir\":\"/a,b\"}", "has a ','" },
		{ "{\"qemu\":\"/q\\u0000x\"}", "NUL" },
		{ "[\"/q\"]", "not a JSON object" },
		{ "{\"qemu\":\"/q\"", "" },
	};
	struct qemu_wrapper_config cfg, before;
	char err[256];

	(void)state;
	assert_int_equal(cfg_parse("{\"qemu\":\"" QEMU "\"}", &cfg, err), 0);
	assert_string_equal(cfg.qemu, QEMU);
	assert_string_equal(cfg.qmp_dir, QEMU_WRAPPER_QMP_DIR);
	assert_int_equal(cfg_parse("{\"qmp_dir\":\"/tmp/lv\",\"qemu\":\"/q\"}", &cfg, err), 0);
	assert_string_equal(cfg.qmp_dir, "/tmp/lv");
	assert_string_equal(cfg.lvram_socket, QEMU_WRAPPER_LVRAM_SOCKET);
	assert_int_equal(cfg_parse("{\"qemu\":\"/q\",\"lvram_socket\":\"/tmp/lvram.sock\"}", &cfg,
				   err), 0);
	assert_string_equal(cfg.lvram_socket, "/tmp/lvram.sock");
	before = cfg;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(cfg_parse(bad[i].text, &cfg, err), -EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("%s: '%s' does not say '%s'", bad[i].text, err, bad[i].why);
		assert_memory_equal(&cfg, &before, sizeof(cfg));
	}
}

/*
 * The shipped qemu.json (README.md installs it) loads, and the shipped
 * tmpfiles.d file makes its qmp_dir at boot: /run is empty after a kexec.
 */
static void test_qemu_wrapper_shipped_config(void **state)
{
	struct qemu_wrapper_config cfg;
	char err[256], line[256], want[sizeof(cfg.qmp_dir) + 8];
	bool made = false;
	FILE *f;

	(void)state;
	if (access("configs/qemu.json", R_OK))
		skip();
	if (qemu_wrapper_config_load("configs/qemu.json", &cfg, err, sizeof(err)))
		fail_msg("configs/qemu.json: %s", err);
	assert_string_equal(cfg.qmp_dir, QEMU_WRAPPER_QMP_DIR);
	assert_string_equal(cfg.lvram_socket, QEMU_WRAPPER_LVRAM_SOCKET);
	f = fopen("configs/kvmlu-qemu.conf", "r");
	assert_non_null(f);
	snprintf(want, sizeof(want), "d %s ", cfg.qmp_dir);
	while (fgets(line, sizeof(line), f))
		made |= !strncmp(line, want, strlen(want));
	fclose(f);
	if (!made)
		fail_msg("configs/kvmlu-qemu.conf has no line '%s...'", want);
}

/* A config the wrapper's user cannot read says what to fix (mode, confinement). */
static void test_qemu_wrapper_config_unreadable_says_why(void **state)
{
	char dir[] = "/tmp/kvmlu-qemu-cfg.XXXXXX", path[64], err[512] = "";
	int fd, status;
	pid_t pid;

	(void)state;
	if (geteuid())
		skip();	/* as root only: the file is root's, the reader nobody */
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/qemu.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"qemu\":\"/q\"}", 14), 14);
	close(fd);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct qemu_wrapper_config cfg;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		if (qemu_wrapper_config_load(path, &cfg, err, sizeof(err)) != -EACCES)
			_exit(3);
		_exit(strstr(err, "mode 0644") && strstr(err, "AppArmor") ? 0 : 4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	unlink(path);
	rmdir(dir);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- the program, with a shell script as its QEMU ---- */

static char tmp[64];

/*
 * The fake QEMU writes what it got: its argv, the link and size of fd
 * 100 and whether fd 100 and fd 7 (a test fd without close-on-exec) are
 * open.
 */
static const char fake_qemu[] =
	"#!/bin/sh\n"
	"out=$(dirname \"$0\")/report\n"
	"{ printf '%s\\n' \"$@\"; echo \"fd100=$(readlink /proc/self/fd/100)\";\n"
	"  echo \"size=$(stat -L -c %s /proc/self/fd/100 2>/dev/null)\";\n"
	"  echo \"fd7=$(readlink /proc/self/fd/7)\"; } >\"$out\"\n";

static void write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/* Runs the wrapper on c; returns its exit status, stderr in err. */
static int run_wrapper(struct cmd *c, char *err, size_t errlen)
{
	char cfg[PATH_MAX], errpath[PATH_MAX];
	int st, fd;
	pid_t pid;
	FILE *f;

	snprintf(cfg, sizeof(cfg), "%s/qemu.json", tmp);
	snprintf(errpath, sizeof(errpath), "%s/stderr", tmp);
	unlink(errpath);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* fd 7: what libvirt would pass (a monitor socket, a tap). */
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, 7) < 0)
			_exit(125);
		fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(125);
		setenv(QEMU_WRAPPER_CONFIG_ENV, cfg, 1);
		execv(WRAPPER, c->argv);
		_exit(126);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	err[0] = '\0';
	f = fopen(errpath, "r");
	if (f) {
		size_t n = fread(err, 1, errlen - 1, f);

		err[n] = '\0';
		fclose(f);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *report(void)
{
	static char buf[8192];
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/report", tmp);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	return buf;
}

static int wrapper_setup(void **state)
{
	char path[PATH_MAX], text[PATH_MAX * 2];

	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/kvmlu-qemu-test-XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(path, sizeof(path), "%s/lv", tmp);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/qemu.sh", tmp);
	write_text(path, fake_qemu, 0755);
	snprintf(text, sizeof(text), "{\"qemu\":\"%s/qemu.sh\",\"qmp_dir\":\"%s/lv\"}\n", tmp, tmp);
	snprintf(path, sizeof(path), "%s/qemu.json", tmp);
	write_text(path, text, 0644);
	return 0;
}

static int wrapper_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_qemu_wrapper_runs_qemu_on_the_memfd(void **state)
{
	char err[1024], want[256], *r;
	struct cmd c;

	(void)state;
	if (access(WRAPPER, X_OK))
		skip();
	cmd_load(&c, "start-memfd-shared");
	assert_int_equal(run_wrapper(&c, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "pc.ram (67108864 bytes) on memfd fd 100"));
	r = report();
	assert_non_null(strstr(r, "\n{\"qom-type\":\"memory-backend-file\",\"id\":\"pc.ram\","
			       "\"mem-path\":\"/proc/self/fd/100\",\"share\":true,"));
	snprintf(want, sizeof(want), "\n-qmp\nunix:%s/lv/" UUID_SHARED ".qmp,server=on,wait=off\n",
		 tmp);
	assert_non_null(strstr(r, want));
	/* The memfd QEMU inherits: named for the agent, sized, not closed on exec. */
	assert_non_null(strstr(r, "fd100=/memfd:kvmlu-lv:" UUID_SHARED ":pc.ram (deleted)\n"));
	assert_non_null(strstr(r, "size=67108864\n"));
	/* An fd libvirt passed is still there, at its number. */
	assert_non_null(strstr(r, "fd7=/dev/null\n"));
	cmd_free(&c);

	/* A probe goes through unchanged and gets no memfd. */
	cmd_load(&c, "probe-machine-none");
	assert_int_equal(run_wrapper(&c, err, sizeof(err)), 0);
	r = report();
	assert_non_null(strstr(r, "-machine\nnone,accel=kvm:tcg\n-qmp\n"));
	assert_non_null(strstr(r, "fd100=\n"));
	assert_null(strstr(r, "kvmlu/lv"));
	assert_string_equal(err, "");
	cmd_free(&c);
}

static void test_qemu_wrapper_refuses_with_one_line(void **state)
{
	char err[1024], path[PATH_MAX];
	struct cmd c;

	(void)state;
	if (access(WRAPPER, X_OK))
		skip();
	cmd_load(&c, "start-memfd-private");
	assert_int_equal(run_wrapper(&c, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "kvmlu-qemu: refusing to start QEMU: pc.ram has share=false"));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
	snprintf(path, sizeof(path), "%s/report", tmp);
	assert_int_equal(access(path, F_OK), -1);
	cmd_free(&c);

	/* No QMP directory: said before QEMU would fail on the socket. */
	snprintf(path, sizeof(path), "%s/lv", tmp);
	assert_int_equal(rmdir(path), 0);
	cmd_load(&c, "start-memfd-shared");
	assert_int_equal(run_wrapper(&c, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "QMP directory"));
	assert_int_equal(mkdir(path, 0755), 0);
	cmd_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qemu_argv_rewrites_libvirts_memfd_start),
		cmocka_unit_test(test_qemu_argv_rewrites_libvirts_restore),
		cmocka_unit_test(test_qemu_argv_passes_what_is_not_a_memfd_domain),
		cmocka_unit_test(test_qemu_argv_keeps_the_backend_options_that_mean_something),
		cmocka_unit_test(test_qemu_argv_refuses_what_cannot_stay_in_place),
		cmocka_unit_test(test_qemu_argv_refuses_bad_sizes_and_uuids),
		cmocka_unit_test(test_qemu_argv_refuses_what_does_not_read_as_qemu_options),
		cmocka_unit_test(test_qemu_argv_checks_the_qmp_dir_and_names_the_memfd),
		cmocka_unit_test(test_qemu_wrapper_config),
		cmocka_unit_test(test_qemu_wrapper_shipped_config),
		cmocka_unit_test(test_qemu_wrapper_config_unreadable_says_why),
	};
	const struct CMUnitTest wrapper[] = {
		cmocka_unit_test(test_qemu_wrapper_runs_qemu_on_the_memfd),
		cmocka_unit_test(test_qemu_wrapper_refuses_with_one_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) |
	       cmocka_run_group_tests(wrapper, wrapper_setup, wrapper_teardown);
}
