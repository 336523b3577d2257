// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of common/accept_spare.c: a process out of file descriptors
 * still accepts a waiting client (so it can be told why) instead of
 * leaving it in the backlog, where poll() reports it again at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/accept_spare.h"

static struct sockaddr_un addr = { .sun_family = AF_UNIX };

static int listener(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	/* abstract name: nothing to clean up in the file system */
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "kvmlu-accept-spare-%d",
		 (int)getpid());
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(fd, 8), 0);
	return fd;
}

static int client(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

/* Use every free descriptor; returns how many were taken, their fds in fill[]. */
static int exhaust(int *fill, int max)
{
	int n = 0;

	while (n < max) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			assert_int_equal(errno, EMFILE);
			return n;
		}
		fill[n++] = fd;
	}
	fail_msg("descriptor limit not reached after %d opens", max);
	return n;
}

static void test_accept_spare_answers_when_out_of_fds(void **state)
{
	struct rlimit old, low;
	struct accept_spare sp;
	int fill[256], n, lfd, c1, c2, fd;
	bool out = true;

	(void)state;
	lfd = listener();
	assert_int_equal(accept_spare_init(&sp), 0);
	c1 = client();
	c2 = client();
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)c2 + 32;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	n = exhaust(fill, 256);

	/* Plain accept4() leaves the client waiting: the condition is real. */
	assert_int_equal(accept4(lfd, NULL, NULL, SOCK_CLOEXEC), -1);
	assert_int_equal(errno, EMFILE);

	fd = accept_spare_accept(&sp, lfd, SOCK_CLOEXEC, &out);
	assert_true(fd >= 0);
	assert_true(out);
	assert_int_equal(sp.fd, -1);
	assert_int_equal(write(fd, "busy\n", 5), 5);
	close(fd);
	accept_spare_refill(&sp);
	assert_true(sp.fd >= 0);

	/* The second client was taken too; the spare is back for the next one. */
	fd = accept_spare_accept(&sp, lfd, SOCK_CLOEXEC, &out);
	assert_true(fd >= 0 && out);
	close(fd);
	accept_spare_refill(&sp);

	/* Still out of fds, nobody waiting: -EMFILE, the spare kept. */
	assert_int_equal(accept_spare_accept(&sp, lfd, SOCK_CLOEXEC, &out), -EMFILE);
	assert_false(out);
	assert_true(sp.fd >= 0);

	for (int i = 0; i < n; i++)
		close(fill[i]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	{
		char buf[8] = { 0 };

		assert_int_equal(read(c1, buf, sizeof(buf)), 5);
		assert_string_equal(buf, "busy\n");
	}
	close(c1);
	close(c2);
	accept_spare_fini(&sp);
	close(lfd);
}

/*
 * A blocking listener out of fds with nobody waiting: -EMFILE at once,
 * the spare kept. Lending it to a blocking accept4() would refuse the
 * next client even after descriptors were freed.
 */
static void test_accept_spare_blocking_listener_nobody_waiting(void **state)
{
	struct rlimit old, low;
	struct accept_spare sp;
	int fill[256], n, lfd, fd, c;
	bool out = true;

	(void)state;
	lfd = listener();
	assert_int_equal(fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) & ~O_NONBLOCK), 0);
	assert_int_equal(accept_spare_init(&sp), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)sp.fd + 32;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	n = exhaust(fill, 256);
	alarm(10);	/* a blocked accept4() ends the test (SIGALRM) */
	assert_int_equal(accept_spare_accept(&sp, lfd, SOCK_CLOEXEC, &out), -EMFILE);
	alarm(0);
	assert_false(out);
	assert_true(sp.fd >= 0);
	assert_true(fcntl(lfd, F_GETFL) >= 0 && !(fcntl(lfd, F_GETFL) & O_NONBLOCK));
	for (int i = 0; i < n; i++)
		close(fill[i]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);

	/* Descriptors free again: the next client is served, not refused. */
	c = client();
	fd = accept_spare_accept(&sp, lfd, SOCK_CLOEXEC, &out);
	assert_true(fd >= 0);
	assert_false(out);
	close(fd);
	close(c);
	accept_spare_fini(&sp);
	close(lfd);
}

static void test_accept_spare_plain_accept_when_fds_free(void **state)
{
	struct accept_spare sp;
	int lfd, c, fd;
	bool out = true;

	(void)state;
	lfd = listener();
	assert_int_equal(accept_spare_init(&sp), 0);
	c = client();
	fd = accept_spare_accept(&sp, lfd, SOCK_CLOEXEC, &out);
	assert_true(fd >= 0);
	assert_false(out);
	assert_true(sp.fd >= 0);
	close(fd);
	close(c);
	accept_spare_fini(&sp);
	assert_int_equal(sp.fd, -1);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept_spare_answers_when_out_of_fds),
		cmocka_unit_test(test_accept_spare_blocking_listener_nobody_waiting),
		cmocka_unit_test(test_accept_spare_plain_accept_when_fds_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
