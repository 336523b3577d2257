// SPDX-License-Identifier: GPL-2.0
/*
 * The device thread handshake every device with a thread uses
 * (vmm/devices/device_thread.c): a quiesce runs the device's drain in the
 * device's own thread and returns only once it is done; the thread is
 * paused until resume; stop ends it; a thread that ended on its own does
 * not leave a quiescer waiting; with no thread the caller drains.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "vmm/devices/device_thread.h"

struct fake {
	struct device_thread io;
	pthread_t drained_by;
	int drains;
	bool end_now;		/* the thread ends on its own at its next wake-up */
};

static void fake_drain(void *arg)
{
	struct fake *f = arg;

	/* Slow on purpose: the quiescer must wait for it. */
	nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	f->drained_by = pthread_self();
	f->drains++;
}

static void *fake_thread(void *arg)
{
	struct fake *f = arg;
	struct pollfd p = { .fd = f->io.ctl_fd, .events = POLLIN };

	for (;;) {
		if (poll(&p, 1, -1) < 0)
			continue;
		if (__atomic_load_n(&f->end_now, __ATOMIC_ACQUIRE))
			break;
		if (!device_thread_control(&f->io, fake_drain, f))
			break;
	}
	device_thread_exit(&f->io);
	return NULL;
}

static bool paused_within(struct fake *f, bool want)
{
	for (int i = 0; i < 200; i++) {
		if (device_thread_paused(&f->io) == want)
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
	}
	return false;
}

static void test_device_thread_quiesce_drains_in_the_device_thread_until_resume(void **state)
{
	struct fake f = { 0 };
	char err[160];

	(void)state;
	device_thread_init(&f.io);
	assert_int_equal(device_thread_start(&f.io, "fake", fake_thread, &f, err, sizeof(err)), 0);
	assert_true(device_thread_quiesce(&f.io));
	/* Done when quiesce returns, and not by the caller. */
	assert_int_equal(f.drains, 1);
	assert_false(pthread_equal(f.drained_by, pthread_self()));
	assert_true(device_thread_paused(&f.io));
	device_thread_resume(&f.io);
	assert_true(paused_within(&f, false));
	assert_true(device_thread_quiesce(&f.io));
	assert_int_equal(f.drains, 2);
	device_thread_stop(&f.io);
	assert_false(f.io.started);
	device_thread_fini(&f.io);
}

static void test_device_thread_without_a_thread_leaves_the_drain_to_the_caller(void **state)
{
	struct fake f = { 0 };

	(void)state;
	device_thread_init(&f.io);
	assert_false(device_thread_quiesce(&f.io));
	assert_int_equal(f.drains, 0);
	device_thread_resume(&f.io);
	device_thread_stop(&f.io);
	device_thread_fini(&f.io);
}

static void test_device_thread_gone_does_not_hold_a_quiescer(void **state)
{
	struct fake f = { 0 };
	char err[160];

	(void)state;
	device_thread_init(&f.io);
	assert_int_equal(device_thread_start(&f.io, "fake", fake_thread, &f, err, sizeof(err)), 0);
	__atomic_store_n(&f.end_now, true, __ATOMIC_RELEASE);
	device_thread_wake(f.io.ctl_fd);
	/* The thread ends without draining; quiesce must still return. */
	assert_true(device_thread_quiesce(&f.io));
	assert_int_equal(f.drains, 0);
	device_thread_stop(&f.io);
	device_thread_fini(&f.io);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_thread_quiesce_drains_in_the_device_thread_until_resume),
		cmocka_unit_test(test_device_thread_without_a_thread_leaves_the_drain_to_the_caller),
		cmocka_unit_test(test_device_thread_gone_does_not_hold_a_quiescer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
