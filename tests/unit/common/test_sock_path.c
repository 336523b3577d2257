// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of common/sock_path.c: what may be replaced at a socket
 * path. A socket somebody listens on (even with a full backlog) and
 * anything that is not a socket stay as they are; only a socket nobody
 * listens on is removed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/sock_path.h"

static char dir[] = "/tmp/kvmlu-sock-path.XXXXXX";
static char path[100];	/* fits sun_path */
static char err[512];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(path);
	return rmdir(dir);
}

/* A socket bound at path; listening with backlog if backlog >= 0. */
static int bound_socket(int backlog)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (backlog >= 0)
		assert_int_equal(listen(fd, backlog), 0);
	return fd;
}

static void test_sock_path_free_path_is_free(void **state)
{
	(void)state;
	assert_int_equal(sock_path_claim(path, err, sizeof(err)), 0);
}

static void test_sock_path_live_socket_is_left_alone(void **state)
{
	struct stat before, after;
	int fd = bound_socket(4);

	(void)state;
	assert_int_equal(stat(path, &before), 0);
	assert_int_equal(sock_path_claim(path, err, sizeof(err)), -EADDRINUSE);
	assert_non_null(strstr(err, "another process is listening there"));
	assert_int_equal(stat(path, &after), 0);
	assert_true(before.st_ino == after.st_ino);
	close(fd);
	unlink(path);
}

/* A listener too busy to accept is still alive: its backlog full is no licence. */
static void test_sock_path_full_backlog_is_still_live(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = bound_socket(0), c[8], n = 0;

	(void)state;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (; n < 8; n++) {
		c[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (connect(c[n], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			assert_int_equal(errno, EAGAIN);
			close(c[n]);
			break;
		}
	}
	assert_true(n < 8);	/* the backlog is full now */
	assert_int_equal(sock_path_claim(path, err, sizeof(err)), -EADDRINUSE);
	assert_int_equal(access(path, F_OK), 0);
	while (n--)
		close(c[n]);
	close(fd);
	unlink(path);
}

static void test_sock_path_stale_socket_is_removed(void **state)
{
	(void)state;
	close(bound_socket(2));	/* the listener died: its file stays */
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(sock_path_claim(path, err, sizeof(err)), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	close(bound_socket(-1));	/* bound, never listened */
	assert_int_equal(sock_path_claim(path, err, sizeof(err)), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_sock_path_non_socket_is_never_removed(void **state)
{
	FILE *f = fopen(path, "w");
	struct stat st;

	(void)state;
	assert_non_null(f);
	fputs("keep", f);
	fclose(f);
	assert_int_equal(sock_path_claim(path, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "not a socket"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 4);
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(sock_path_claim(path, err, sizeof(err)), -EEXIST);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	rmdir(path);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_int_equal(sock_path_claim(path, err, sizeof(err)), -EEXIST);
	assert_int_equal(lstat(path, &st), 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sock_path_free_path_is_free),
		cmocka_unit_test(test_sock_path_live_socket_is_left_alone),
		cmocka_unit_test(test_sock_path_full_backlog_is_still_live),
		cmocka_unit_test(test_sock_path_stale_socket_is_removed),
		cmocka_unit_test(test_sock_path_non_socket_is_never_removed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
