// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the test programs' hooks (tests/hooks/test_hooks.c, which
 * the unit tests link in place of libcommon's no-ops):
 *  - stop_at: a child process stops at exactly the <who>:<point> named,
 *    and at nothing else (another VM, another point, a name that only
 *    starts the same, no variable at all); the parent sees the stop with
 *    waitpid(WUNTRACED).
 *  - restore_fail: only the steps named, whole names only, each once when
 *    consumed, with the reason the harness looks for.
 *  - lazy_fault_only: set or not.
 * That the release programs have none of this:
 * tests/lint/test_hooks_out_of_release.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_hooks.h"
#include "tests/hooks/test_hooks_env.h"

/* Runs test_hook_stop_at(who, point) in a child with the variable set to
 * want (NULL: unset); true if the child stopped there. */
static bool child_stops(const char *want, const char *who, const char *point)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (want)
			setenv(TEST_HOOK_STOP_AT_ENV, want, 1);
		else
			unsetenv(TEST_HOOK_STOP_AT_ENV);
		test_hook_stop_at(who, point);
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

/* The hook keeps which steps failed for the life of the process: each
 * case runs in a child of its own. */
static void test_restore_fails_named_steps_once(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char why[128] = "";
		bool ok = true;

		unsetenv(TEST_HOOK_RESTORE_FAIL_ENV);
		ok &= !test_hook_restore_fail("build", true, why, sizeof(why));
		setenv(TEST_HOOK_RESTORE_FAIL_ENV, "serial,build", 1);
		ok &= !test_hook_restore_fail("files", true, why, sizeof(why));
		ok &= !test_hook_restore_fail("buil", true, why, sizeof(why));
		ok &= !test_hook_restore_fail("build,", true, why, sizeof(why));
		/* Not consumed: asked again, it fails again. */
		ok &= test_hook_restore_fail("build", false, why, sizeof(why));
		ok &= test_hook_restore_fail("build", true, why, sizeof(why));
		ok &= !strcmp(why, "build: failure injected by " TEST_HOOK_RESTORE_FAIL_ENV);
		ok &= !test_hook_restore_fail("build", true, why, sizeof(why));
		ok &= test_hook_restore_fail("serial", true, why, sizeof(why));
		ok &= !test_hook_restore_fail("serial", true, why, sizeof(why));
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_lazy_fault_only_follows_the_variable(void **state)
{
	(void)state;
	unsetenv(TEST_HOOK_LAZY_FAULT_ONLY_ENV);
	assert_false(test_hook_lazy_fault_only());
	setenv(TEST_HOOK_LAZY_FAULT_ONLY_ENV, "1", 1);
	assert_true(test_hook_lazy_fault_only());
	unsetenv(TEST_HOOK_LAZY_FAULT_ONLY_ENV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stops_at_the_named_point_only),
		cmocka_unit_test(test_restore_fails_named_steps_once),
		cmocka_unit_test(test_lazy_fault_only_follows_the_variable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
