// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of where and how save-state writes (vmm/state/state_file.c):
 * names a client may and may not give, and hostile files under the name
 * (a symlink, a FIFO, a directory, an existing file) left as they were.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vmm/state/state_file.h"

static char dir[PATH_MAX], err[512];
static int dirfd_;

static int setup(void **state)
{
	char tmpl[] = "/tmp/kvmlu-test-state-file.XXXXXX", sock[PATH_MAX + 16];

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(sock, sizeof(sock), "%s/ctl.sock", tmpl);
	assert_int_equal(state_file_dir_open(sock, &dirfd_, dir, sizeof(dir), err, sizeof(err)), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	close(dirfd_);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static const char *name_of(const char *path)
{
	const char *name = NULL;

	if (state_file_name(dir, path, &name, err, sizeof(err)))
		return NULL;
	return name;
}

static void test_names_in_the_directory_only(void **state)
{
	char p[PATH_MAX + 64];

	(void)state;
	assert_string_equal(name_of("s.dtb"), "s.dtb");
	snprintf(p, sizeof(p), "%s/s.dtb", dir);
	assert_string_equal(name_of(p), "s.dtb");
	assert_null(name_of("/tmp/s.dtb"));
	assert_non_null(strstr(err, "is not in"));
	snprintf(p, sizeof(p), "%s/../s.dtb", dir);
	assert_null(name_of(p));
	snprintf(p, sizeof(p), "%s/sub/s.dtb", dir);
	assert_null(name_of(p));
	assert_null(name_of("sub/s.dtb"));
	assert_null(name_of("/dev/null"));
	assert_null(name_of(".."));
	assert_null(name_of(".hidden"));
	assert_null(name_of(""));
	assert_null(name_of("vm2.sock"));
	assert_non_null(strstr(err, ".sock"));
}

static void read_file(const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd_, name, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
}

static void assert_no_temp_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".tmp"))
			fail_msg("temp file %s left", e->d_name);
	closedir(d);
}

static void test_new_and_existing_files(void **state)
{
	struct stat st;
	char buf[64];

	(void)state;
	assert_int_equal(state_file_write_at(dirfd_, "a.dtb", "one", 3, false, err, sizeof(err)), 0);
	assert_int_equal(fstatat(dirfd_, "a.dtb", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	read_file("a.dtb", buf, sizeof(buf));
	assert_string_equal(buf, "one");
	/* Not without overwrite; then yes. */
	assert_int_equal(state_file_write_at(dirfd_, "a.dtb", "two", 3, false, err, sizeof(err)),
			 -EEXIST);
	assert_non_null(strstr(err, "\"overwrite\":true"));
	read_file("a.dtb", buf, sizeof(buf));
	assert_string_equal(buf, "one");
	assert_int_equal(state_file_write_at(dirfd_, "a.dtb", "two", 3, true, err, sizeof(err)), 0);
	read_file("a.dtb", buf, sizeof(buf));
	assert_string_equal(buf, "two");
	assert_no_temp_files();
}

static void test_hostile_files_stay(void **state)
{
	char target[PATH_MAX + 16];
	struct stat st;

	(void)state;
	snprintf(target, sizeof(target), "%s/target", dir);
	assert_int_equal(symlinkat(target, dirfd_, "link"), 0);
	assert_int_equal(mkfifoat(dirfd_, "fifo", 0600), 0);
	assert_int_equal(mkdirat(dirfd_, "adir", 0700), 0);
	for (int overwrite = 0; overwrite <= 1; overwrite++) {
		assert_int_equal(state_file_write_at(dirfd_, "link", "x", 1, overwrite, err,
						     sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "a symlink"));
		assert_int_equal(state_file_write_at(dirfd_, "fifo", "x", 1, overwrite, err,
						     sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "a FIFO"));
		assert_int_equal(state_file_write_at(dirfd_, "adir", "x", 1, overwrite, err,
						     sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "a directory"));
	}
	assert_int_equal(fstatat(dirfd_, "link", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(fstatat(dirfd_, "target", &st, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(fstatat(dirfd_, "fifo", &st, 0), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(fstatat(dirfd_, "adir", &st, 0), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_no_temp_files();
}

static void test_no_control_socket_no_directory(void **state)
{
	int fd;
	char d[PATH_MAX];

	(void)state;
	assert_int_equal(state_file_dir_open(NULL, &fd, d, sizeof(d), err, sizeof(err)), -ENOENT);
	assert_int_equal(fd, -1);
	assert_int_not_equal(state_file_dir_open("/nonexistent-kvmlu/ctl.sock", &fd, d, sizeof(d), err,
						 sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_names_in_the_directory_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_and_existing_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_files_stay, setup, teardown),
		cmocka_unit_test(test_no_control_socket_no_directory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
