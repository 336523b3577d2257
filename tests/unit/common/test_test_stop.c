// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the KVMLU_TEST_STOP_AT hook (common/test_stop.c): a child
 * process stops at exactly the <who>:<point> named, and at nothing else
 * (another VM, another point, a name that only starts the same, no
 * variable at all). The parent sees the stop with waitpid(WUNTRACED).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_stop.h"

/* Runs test_stop_at(who, point) in a child with the variable set to want
 * (NULL: unset); true if the child stopped there. */
static bool child_stops(const char *want, const char *who, const char *point)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (want)
			setenv(KVMLU_TEST_STOP_ENV, want, 1);
		else
			unsetenv(KVMLU_TEST_STOP_ENV);
		test_stop_at(who, point);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
	if (WIFSTOPPED(status)) {
		assert_int_equal(WSTOPSIG(status), SIGSTOP);
		/* A stopped child is where a test would SIGKILL it. */
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		return true;
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return false;
}

static void test_stops_at_the_named_point_only(void **state)
{
	(void)state;
	assert_true(child_stops("vm-a:restore-taken", "vm-a", "restore-taken"));
	assert_true(child_stops("kvmlu-agent:kexec", "kvmlu-agent", "kexec"));
	assert_false(child_stops("vm-a:restore-taken", "vm-b", "restore-taken"));
	assert_false(child_stops("vm-a:restore-taken", "vm-a", "prepare-preserved"));
	assert_false(child_stops("vm-a:restore-taken", "vm", "a:restore-taken"));
	assert_false(child_stops("vm-ab:restore-taken", "vm-a", "restore-taken"));
	assert_false(child_stops("vm-a:restore-taken-x", "vm-a", "restore-taken"));
	assert_false(child_stops("vm-a", "vm-a", ""));
	assert_false(child_stops(NULL, "vm-a", "restore-taken"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stops_at_the_named_point_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
