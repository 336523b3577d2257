// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of common/luo_session.c: session name rules (names come
 * from users and from journals read after a kexec), the meaning given to
 * each kernel errno per request, and the failures that need no LUO
 * kernel (missing device, a file that is not the device, no session).
 * The tests that need /dev/liveupdate SKIP here when it is absent; the
 * harness runs the real thing inside its QEMU host (unit_on_nested_kvm).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/luo_session.h"
#include "tests/unit/need_cap.h"

static char err[512];

static int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void test_luo_session_name_accepts_vm_names(void **state)
{
	(void)state;
	assert_int_equal(luo_session_name_check("kvmlu/vm/vm1", err, sizeof(err)), 0);
	assert_int_equal(luo_session_name_check("kvmlu/vm/A.b_c-9", err, sizeof(err)), 0);
	assert_int_equal(luo_session_name_check("kvmlu/vm/0", err, sizeof(err)), 0);
}

static void test_luo_session_name_accepts_longest_that_fits(void **state)
{
	char name[LUO_SESSION_NAME_SIZE];
	size_t plen = strlen(LUO_SESSION_VM_PREFIX);

	(void)state;
	memcpy(name, LUO_SESSION_VM_PREFIX, plen);
	memset(name + plen, 'x', sizeof(name) - 1 - plen);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(strlen(name), LUO_SESSION_NAME_SIZE - 1);
	assert_int_equal(luo_session_name_check(name, err, sizeof(err)), 0);
}

static void test_luo_session_name_rejects_too_long(void **state)
{
	char name[LUO_SESSION_NAME_SIZE + 8];
	size_t plen = strlen(LUO_SESSION_VM_PREFIX);

	(void)state;
	memcpy(name, LUO_SESSION_VM_PREFIX, plen);
	memset(name + plen, 'x', LUO_SESSION_NAME_SIZE - plen);
	name[LUO_SESSION_NAME_SIZE] = '\0';	/* 64 characters: no room for NUL */
	assert_int_equal(luo_session_name_check(name, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer than"));
}

static void test_luo_session_name_rejects_missing_prefix(void **state)
{
	(void)state;
	assert_int_equal(luo_session_name_check("vm1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "does not start with 'kvmlu/vm/'"));
	assert_int_equal(luo_session_name_check("kvmlu/vmx", err, sizeof(err)), -EINVAL);
	assert_int_equal(luo_session_name_check("", err, sizeof(err)), -EINVAL);
	assert_int_equal(luo_session_name_check(NULL, err, sizeof(err)), -EINVAL);
}

static void test_luo_session_name_rejects_empty_vm_part(void **state)
{
	(void)state;
	assert_int_equal(luo_session_name_check("kvmlu/vm/", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty"));
}

static void test_luo_session_name_rejects_bad_characters(void **state)
{
	static const char *const bad[] = {
		"kvmlu/vm/a/b", "kvmlu/vm/a b", "kvmlu/vm/a\nb", "kvmlu/vm/\xc3\xa9t\xc3\xa9",
		"kvmlu/vm/a;rm", "kvmlu/vm/..", "kvmlu/vm/-x", "kvmlu/vm/.hidden",
		"kvmlu/vm/a*", "kvmlu/vm/a\x7f", "kvmlu/vm/_x",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(luo_session_name_check(bad[i], err, sizeof(err)), -EINVAL);
		assert_true(strlen(err) > 0);
	}
	assert_int_equal(luo_session_name_check("kvmlu/vm/a/b", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "0x2f"));
}

static void test_luo_session_name_for_vm_builds_checked_name(void **state)
{
	char out[LUO_SESSION_NAME_SIZE];
	char longvm[80];

	(void)state;
	assert_int_equal(luo_session_name_for_vm("web-1", out, err, sizeof(err)), 0);
	assert_string_equal(out, "kvmlu/vm/web-1");
	assert_int_equal(luo_session_name_for_vm("a/b", out, err, sizeof(err)), -EINVAL);
	assert_int_equal(luo_session_name_for_vm("", out, err, sizeof(err)), -EINVAL);
	assert_int_equal(luo_session_name_for_vm(NULL, out, err, sizeof(err)), -EINVAL);
	memset(longvm, 'v', sizeof(longvm) - 1);
	longvm[sizeof(longvm) - 1] = '\0';
	assert_int_equal(luo_session_name_for_vm(longvm, out, err, sizeof(err)), -EINVAL);
}

static void test_luo_session_vm_name_strips_prefix_of_valid_names_only(void **state)
{
	(void)state;
	assert_string_equal(luo_session_vm_name("kvmlu/vm/db"), "db");
	assert_null(luo_session_vm_name("kvmlu/vm/"));
	assert_null(luo_session_vm_name("other/db"));
	assert_null(luo_session_vm_name("kvmlu/vm/d b"));
}

/* A libvirt domain's session: kvmlu/lv/<lowercase UUID>, and nothing else there. */
static void test_luo_session_domain_names(void **state)
{
	char out[LUO_SESSION_NAME_SIZE], err[160];

	(void)state;
	assert_int_equal(luo_session_name_for_domain("6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a21", out,
						     err, sizeof(err)), 0);
	assert_string_equal(out, "kvmlu/lv/6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a21");
	assert_true(luo_session_is_domain_name(out));
	assert_true(strlen(out) < LUO_SESSION_NAME_SIZE);
	/* Not a VM's: kvmlu-vmm restore and the journal's VMs never take it. */
	assert_null(luo_session_vm_name(out));
	assert_int_equal(luo_session_name_for_domain("6F1B6A4E-3C0E-4C52-9B1E-2A7E0D9C4A21", out,
						     err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "lowercase"));
	assert_int_equal(luo_session_name_for_domain("6f1b6a4e3c0e4c529b1e2a7e0d9c4a21", out, err,
						     sizeof(err)), -EINVAL);
	assert_int_equal(luo_session_name_for_domain(NULL, out, err, sizeof(err)), -EINVAL);
	assert_false(luo_session_is_domain_name("kvmlu/lv/6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a2"));
	assert_false(luo_session_is_domain_name("kvmlu/lv/6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a21x"));
	assert_false(luo_session_is_domain_name("kvmlu/lv/../vm/6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9"));
	assert_false(luo_session_is_domain_name("kvmlu/vm/6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a21"));
	assert_false(luo_session_is_domain_name(NULL));
	/* create and retrieve take it to the device; a malformed one never gets there. */
	{
		struct luo_session ls;

		luo_session_init(&ls);
		luo_session_set_device("/nonexistent/liveupdate");
		assert_int_equal(luo_session_create(&ls, "kvmlu/lv/6f1b6a4e-3c0e-4c52-9b1e-"
						    "2a7e0d9c4a21", err, sizeof(err)), -ENOENT);
		assert_non_null(strstr(err, "/nonexistent/liveupdate"));
		assert_int_equal(luo_session_retrieve(&ls, "kvmlu/lv/x", err, sizeof(err)),
				 -EINVAL);
		assert_null(strstr(err, "/nonexistent/liveupdate"));
		luo_session_set_device(NULL);
	}
}

static void test_luo_session_tokens_are_fixed(void **state)
{
	(void)state;
	/* A VMM after the kexec may be newer: these values are an ABI. */
	assert_int_equal(LUO_TOKEN_STATE, 0x1);
	assert_int_equal(LUO_TOKEN_RAM(0), 0x100);
	assert_int_equal(LUO_TOKEN_RAM(7), 0x107);
	assert_true(LUO_TOKEN_RAM(0) != LUO_TOKEN_STATE);
}

static void test_luo_session_hint_unpreservable_file(void **state)
{
	(void)state;
	/* No handler for the file type (guest_memfd, hugetlb): ENOENT. */
	assert_non_null(strstr(luo_session_error_hint(LUO_OP_PRESERVE_FD, ENOENT),
			       "file cannot be preserved"));
	assert_non_null(strstr(luo_session_error_hint(LUO_OP_PRESERVE_FD, -EOPNOTSUPP),
			       "guest_memfd is not preservable"));
}

static void test_luo_session_hint_depends_on_request(void **state)
{
	const char *create = luo_session_error_hint(LUO_OP_CREATE, EEXIST);
	const char *preserve = luo_session_error_hint(LUO_OP_PRESERVE_FD, EEXIST);
	const char *retrieve = luo_session_error_hint(LUO_OP_RETRIEVE, ENOENT);
	const char *rfd = luo_session_error_hint(LUO_OP_RETRIEVE_FD, ENOENT);

	(void)state;
	assert_non_null(strstr(create, "session of that name already exists"));
	assert_non_null(strstr(preserve, "token is already used"));
	assert_non_null(strstr(retrieve, "no session of that name"));
	assert_non_null(strstr(rfd, "no file under that token"));
	assert_non_null(strstr(luo_session_error_hint(LUO_OP_RETRIEVE, EINVAL),
			       "already retrieved"));
	assert_non_null(strstr(luo_session_error_hint(LUO_OP_PRESERVE_FD, EBUSY),
			       "another session"));
	assert_non_null(strstr(luo_session_error_hint(LUO_OP_OPEN, EBUSY),
			       "another process holds /dev/liveupdate"));
	assert_non_null(strstr(luo_session_error_hint(LUO_OP_CREATE, ENOSPC), "no room"));
	assert_non_null(strstr(luo_session_error_hint(LUO_OP_FINISH, ENOTTY),
			       "not a Live Update Orchestrator device"));
	assert_non_null(strstr(luo_session_error_hint(LUO_OP_GET_NAME, E2BIG),
			       "refused"));
}

static void test_luo_session_create_without_device_says_why(void **state)
{
	struct luo_session s;
	int before = count_open_fds();

	(void)state;
	luo_session_init(&s);
	luo_session_set_device("/nonexistent/liveupdate");
	assert_int_equal(luo_session_create(&s, "kvmlu/vm/a", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/liveupdate"));
	assert_non_null(strstr(err, "CONFIG_LIVEUPDATE"));
	assert_non_null(strstr(err, "ENOENT"));
	assert_int_equal(s.fd, -1);
	assert_int_equal(count_open_fds(), before);
	luo_session_set_device(NULL);
}

static void test_luo_session_bad_name_refused_before_device(void **state)
{
	struct luo_session s;

	(void)state;
	luo_session_init(&s);
	luo_session_set_device("/nonexistent/liveupdate");
	/* EINVAL, not ENOENT: the name is checked before anything is opened. */
	assert_int_equal(luo_session_create(&s, "kvmlu/vm/../x", err, sizeof(err)), -EINVAL);
	assert_int_equal(luo_session_retrieve(&s, "evil", err, sizeof(err)), -EINVAL);
	assert_int_equal(s.fd, -1);
	luo_session_set_device(NULL);
}

static void test_luo_session_on_non_luo_file_reports_enotty(void **state)
{
	char path[] = "/tmp/kvmlu-test-luo-XXXXXX";
	struct luo_session s;
	int fd = mkstemp(path);
	int before;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	before = count_open_fds();
	luo_session_init(&s);
	luo_session_set_device(path);
	assert_int_equal(luo_session_retrieve(&s, "kvmlu/vm/a", err, sizeof(err)), -ENOTTY);
	assert_non_null(strstr(err, "RETRIEVE_SESSION"));
	assert_non_null(strstr(err, "kvmlu/vm/a"));
	assert_non_null(strstr(err, "not a Live Update Orchestrator device"));
	assert_int_equal(s.fd, -1);
	/* The device fd is closed again whatever happened. */
	assert_int_equal(count_open_fds(), before);
	luo_session_set_device(NULL);
	unlink(path);
}

static void test_luo_session_ops_need_an_open_session(void **state)
{
	struct luo_session s;
	char name[LUO_SESSION_NAME_SIZE];
	int fd = 99;

	(void)state;
	luo_session_init(&s);
	assert_int_equal(luo_session_preserve_fd(&s, 0, LUO_TOKEN_STATE, "state memfd",
						 err, sizeof(err)), -EBADF);
	assert_non_null(strstr(err, "no session open"));
	assert_int_equal(luo_session_retrieve_fd(&s, LUO_TOKEN_STATE, "state memfd", &fd,
						 err, sizeof(err)), -EBADF);
	assert_int_equal(fd, 99);
	assert_int_equal(luo_session_finish(&s, err, sizeof(err)), -EBADF);
	assert_int_equal(luo_session_get_name(&s, name, err, sizeof(err)), -EBADF);
	luo_session_close(&s);	/* harmless on an empty session */
	assert_int_equal(s.fd, -1);
}

static void test_luo_session_ops_check_direction(void **state)
{
	struct luo_session s;
	int fd = -1;

	(void)state;
	luo_session_init(&s);
	s.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(s.fd >= 0);
	strcpy(s.name, "kvmlu/vm/x");
	/* An outgoing session cannot hand files back or be finished. */
	assert_int_equal(luo_session_retrieve_fd(&s, LUO_TOKEN_RAM(0), "RAM region 0", &fd,
						 err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs a retrieved session"));
	assert_int_equal(luo_session_finish(&s, err, sizeof(err)), -EINVAL);
	s.incoming = true;
	assert_int_equal(luo_session_preserve_fd(&s, 0, LUO_TOKEN_STATE, "state memfd",
						 err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs an outgoing session"));
	luo_session_close(&s);
}

static void test_luo_session_preserve_error_names_file_and_token(void **state)
{
	struct luo_session s;

	(void)state;
	luo_session_init(&s);
	s.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(s.fd >= 0);
	strcpy(s.name, "kvmlu/vm/w1");
	assert_int_equal(luo_session_preserve_fd(&s, 5, LUO_TOKEN_RAM(2), "RAM region 2",
						 err, sizeof(err)), -ENOTTY);
	assert_non_null(strstr(err, "'kvmlu/vm/w1'"));
	assert_non_null(strstr(err, "PRESERVE_FD of RAM region 2"));
	assert_non_null(strstr(err, "token 0x102"));
	assert_non_null(strstr(err, "ENOTTY"));
	luo_session_close(&s);
}

/*
 * The rest needs the kernel's LUO (NEED_CAP): where /dev/liveupdate is
 * absent the QEMU host runs it (harness/unit_on_nested_kvm).
 */
static void test_luo_session_real_create_preserve_abort(void **state)
{
	struct luo_session s;
	char name[LUO_SESSION_NAME_SIZE];
	int mfd;

	(void)state;
	NEED_CAP("liveupdate");
	luo_session_init(&s);
	assert_int_equal(luo_session_create(&s, "kvmlu/vm/unit-test", err, sizeof(err)), 0);
	assert_int_equal(luo_session_create(&s, "kvmlu/vm/unit-test2", err, sizeof(err)), -EBUSY);
	assert_int_equal(luo_session_get_name(&s, name, err, sizeof(err)), 0);
	assert_string_equal(name, "kvmlu/vm/unit-test");
	mfd = memfd_create("luo-unit", 0);
	assert_true(mfd >= 0);
	assert_int_equal(ftruncate(mfd, 4096), 0);
	assert_int_equal(luo_session_preserve_fd(&s, mfd, LUO_TOKEN_RAM(0), "memfd",
						 err, sizeof(err)), 0);
	assert_int_equal(luo_session_preserve_fd(&s, mfd, LUO_TOKEN_RAM(1), "memfd",
						 err, sizeof(err)), -EBUSY);
	luo_session_close(&s);	/* abort: the kernel unpreserves */
	close(mfd);
}

static void test_luo_session_real_busy_device_times_out(void **state)
{
	struct luo_session s;
	int dev;

	(void)state;
	NEED_CAP("liveupdate");
	dev = open(LUO_SESSION_DEVICE, O_RDWR);
	if (dev < 0) {
		print_message("SKIP: cannot open %s: %s\n", LUO_SESSION_DEVICE, strerror(errno));
		skip();
	}
	luo_session_init(&s);
	assert_int_equal(luo_session_create(&s, "kvmlu/vm/busy", err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "another process holds /dev/liveupdate"));
	close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_luo_session_name_accepts_vm_names),
		cmocka_unit_test(test_luo_session_name_accepts_longest_that_fits),
		cmocka_unit_test(test_luo_session_name_rejects_too_long),
		cmocka_unit_test(test_luo_session_name_rejects_missing_prefix),
		cmocka_unit_test(test_luo_session_name_rejects_empty_vm_part),
		cmocka_unit_test(test_luo_session_name_rejects_bad_characters),
		cmocka_unit_test(test_luo_session_name_for_vm_builds_checked_name),
		cmocka_unit_test(test_luo_session_vm_name_strips_prefix_of_valid_names_only),
		cmocka_unit_test(test_luo_session_domain_names),
		cmocka_unit_test(test_luo_session_tokens_are_fixed),
		cmocka_unit_test(test_luo_session_hint_unpreservable_file),
		cmocka_unit_test(test_luo_session_hint_depends_on_request),
		cmocka_unit_test(test_luo_session_create_without_device_says_why),
		cmocka_unit_test(test_luo_session_bad_name_refused_before_device),
		cmocka_unit_test(test_luo_session_on_non_luo_file_reports_enotty),
		cmocka_unit_test(test_luo_session_ops_need_an_open_session),
		cmocka_unit_test(test_luo_session_ops_check_direction),
		cmocka_unit_test(test_luo_session_preserve_error_names_file_and_token),
		cmocka_unit_test(test_luo_session_real_create_preserve_abort),
		cmocka_unit_test(test_luo_session_real_busy_device_times_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
