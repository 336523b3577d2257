// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the agent's peer credential rule (agent/daemon/peer_auth.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/daemon/peer_auth.h"

static void test_peer_auth_root_always_allowed(void **state)
{
	(void)state;
	assert_true(peer_auth_allowed(0, 0, NULL, 0, false, 0));
	assert_true(peer_auth_allowed(0, 1234, NULL, 0, true, 999));
}

static void test_peer_auth_group_by_primary_or_supplementary(void **state)
{
	gid_t groups[] = { 10, 20, 999 };

	(void)state;
	assert_true(peer_auth_allowed(1000, 999, NULL, 0, true, 999));
	assert_true(peer_auth_allowed(1000, 1000, groups, 3, true, 999));
	assert_false(peer_auth_allowed(1000, 1000, groups, 2, true, 999));
	/* No such group configured: nobody but root, even with gid 0 groups. */
	assert_false(peer_auth_allowed(1000, 0, groups, 3, false, 0));
}

static void test_peer_auth_check_reads_real_credentials(void **state)
{
	int sv[2];
	char err[128];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	if (getuid() == 0)
		assert_int_equal(peer_auth_check(sv[0], false, 0, err, sizeof(err)), 0);
	else
		assert_int_equal(peer_auth_check(sv[0], true, getgid(), err, sizeof(err)), 0);
	/* Our own process is in our group but not in an unrelated one. */
	if (getuid() != 0)
		assert_int_equal(peer_auth_check(sv[0], true, 54321, err, sizeof(err)), -13);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peer_auth_root_always_allowed),
		cmocka_unit_test(test_peer_auth_group_by_primary_or_supplementary),
		cmocka_unit_test(test_peer_auth_check_reads_real_credentials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
