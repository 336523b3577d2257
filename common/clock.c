// SPDX-License-Identifier: GPL-2.0
#include <time.h>

#include "common/clock.h"

static uint64_t read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t kvmlu_mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

int64_t kvmlu_mono_ms(void)
{
	return (int64_t)(read_ns(CLOCK_MONOTONIC) / 1000000);
}

uint64_t kvmlu_wall_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

void kvmlu_deadline_ms(struct timespec *ts, clockid_t clock, unsigned int ms)
{
	clock_gettime(clock, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}
