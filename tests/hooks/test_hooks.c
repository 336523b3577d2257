// SPDX-License-Identifier: GPL-2.0
/*
 * The test hooks of the test programs (common/test_hooks.h), driven by the
 * environment (test_hooks_env.h). Linked ahead of libcommon into
 * build/test/bin, build/san/bin and the unit tests, never into build/bin;
 * it defines exactly the functions common/test_hooks_noop.c does.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/test_hooks.h"
#include "tests/hooks/test_hooks_env.h"

void test_hook_stop_at(const char *who, const char *point)
{
	const char *want = getenv(TEST_HOOK_STOP_AT_ENV);
	size_t n = strlen(who);

	if (!want || strncmp(want, who, n) || want[n] != ':' || strcmp(want + n + 1, point))
		return;
	/* The line first: a test that sees it knows where the process is. */
	fprintf(stderr, "kvmlu: %s=%s: pid %d stopped\n", TEST_HOOK_STOP_AT_ENV, want,
		(int)getpid());
	fflush(stderr);
	raise(SIGSTOP);
}

bool test_hook_restore_fail(const char *step, bool consume, char *why, size_t whylen)
{
	/* The steps failed already, as ",a,b,": each fails once. */
	static char failed[128];
	const char *want = getenv(TEST_HOOK_RESTORE_FAIL_ENV);
	char item[40], list[160];

	if (!want)
		return false;
	/* Match whole names in ",a,b," forms of the list and of those done. */
	snprintf(item, sizeof(item), ",%s,", step);
	snprintf(list, sizeof(list), ",%s,", want);
	if (!strstr(list, item) || strstr(failed, item))
		return false;
	if (consume)
		snprintf(failed + strlen(failed), sizeof(failed) - strlen(failed), "%s", item);
	snprintf(why, whylen, "%s: failure injected by %s", step, TEST_HOOK_RESTORE_FAIL_ENV);
	return true;
}

bool test_hook_lazy_fault_only(void)
{
	return getenv(TEST_HOOK_LAZY_FAULT_ONLY_ENV) != NULL;
}

bool test_hook_lvram_corrupt(void)
{
	return getenv(TEST_HOOK_LVRAM_CORRUPT_ENV) != NULL;
}

bool test_hook_lvram_tcg(void)
{
	return getenv(TEST_HOOK_LVRAM_TCG_ENV) != NULL;
}
