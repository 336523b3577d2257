// SPDX-License-Identifier: GPL-2.0
/* The KVMLU_TEST_STOP_AT test hook (see test_stop.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/test_stop.h"

void test_stop_at(const char *who, const char *point)
{
	const char *want = getenv(KVMLU_TEST_STOP_ENV);
	size_t n = strlen(who);

	if (!want || strncmp(want, who, n) || want[n] != ':' || strcmp(want + n + 1, point))
		return;
	/* The line first: a test that sees it knows where the process is. */
	fprintf(stderr, "kvmlu: %s=%s: pid %d stopped\n", KVMLU_TEST_STOP_ENV, want,
		(int)getpid());
	fflush(stderr);
	raise(SIGSTOP);
}
