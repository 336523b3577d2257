// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of common/clock.c's deadlines: now plus the milliseconds,
 * on the clock asked for, with tv_nsec kept below a second as
 * pthread_cond_timedwait() requires (else it fails with EINVAL).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <time.h>

#include "common/clock.h"

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static int64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts_ns(&ts);
}

static void check_deadline(clockid_t clock, unsigned int ms)
{
	struct timespec dl;
	int64_t before, after;

	before = now_ns(clock);
	kvmlu_deadline_ms(&dl, clock, ms);
	after = now_ns(clock);
	assert_in_range(dl.tv_nsec, 0, 999999999);
	assert_true(ts_ns(&dl) >= before + (int64_t)ms * 1000000LL);
	assert_true(ts_ns(&dl) <= after + (int64_t)ms * 1000000LL);
}

/* 999 and 2500 ms carry into tv_sec unless now is within a ms of a whole second. */
static void test_deadline_is_now_plus_ms(void **state)
{
	static const unsigned int ms[] = { 0, 1, 999, 1000, 1001, 2500, 3600000 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		check_deadline(CLOCK_MONOTONIC, ms[i]);
		check_deadline(CLOCK_REALTIME, ms[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline_is_now_plus_ms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
