// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/virtio/virtio_mmio.c: the register block and state
 * machine as a driver (or a hostile guest) drives it through 32-bit
 * MMIO accesses. Feature negotiation, status rules, queue setup refused
 * for bad sizes and rings, device errors, interrupts and their eventfd,
 * notify through kick_fd, and a reset that waits for requests in flight.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#define KVMLU_TEST_VIRTIO_MMIO
#include "tests/unit/vmm/virtio_test_support.h"
#include "vmm/virtio/virtio_mmio_state.h"

#define F_VERSION_1	(1ULL << VIRTIO_F_VERSION_1)
#define F_DEV		(1ULL << 9)	/* what the test device offers besides VERSION_1 */

struct fixture {
	struct guestmem gm;
	struct virtio_mmio t;
	struct virtq_chain c;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint8_t config[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

	tg_mem_init(&f->gm);
	assert_int_equal(virtio_mmio_init(&f->t, "test", 2, F_DEV, 1, config, sizeof(config),
					  &f->gm), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	virtio_mmio_destroy(&f->t);
	tg_mem_free(&f->gm);
	free(f);
	return 0;
}

static void test_mmio_identifies_as_a_version_2_device(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_MAGIC_VALUE), 0x74726976);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_VERSION_REG), 2);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_DEVICE_ID), 2);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_QUEUE_NUM_MAX), VIRTQ_MAX_SIZE);
	tg_wr(&f->t, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_DEVICE_FEATURES), (uint32_t)F_DEV);
	tg_wr(&f->t, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_DEVICE_FEATURES), 1);	/* bit 32 */
	tg_wr(&f->t, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 2);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_DEVICE_FEATURES), 0);
	/* No shared memory regions. */
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_SHM_LEN_LOW), 0xffffffff);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_SHM_LEN_HIGH), 0xffffffff);
	/* A queue that does not exist has no size. */
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_SEL, 1);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_QUEUE_NUM_MAX), 0);
}

static void test_mmio_accepts_offered_features_with_version_1(void **state)
{
	struct fixture *f = *state;

	tg_negotiate(&f->t, F_VERSION_1 | F_DEV);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS), 1 | 2 | 8);
	assert_true(virtio_mmio_feature(&f->t, 9));
	/* Fixed once FEATURES_OK is set. */
	tg_wr(&f->t, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	tg_wr(&f->t, VIRTIO_MMIO_DRIVER_FEATURES, 0);
	assert_true(virtio_mmio_feature(&f->t, 9));
}

static void test_mmio_refuses_features_without_version_1(void **state)
{
	struct fixture *f = *state;

	tg_negotiate(&f->t, F_DEV);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK, 0);
	/* DRIVER_OK without FEATURES_OK does not stick either. */
	tg_driver_ok(&f->t);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS) &
			 (VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK), 0);
}

static void test_mmio_refuses_features_it_does_not_offer(void **state)
{
	struct fixture *f = *state;

	tg_negotiate(&f->t, F_VERSION_1 | (1ULL << 28));	/* INDIRECT_DESC */
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK, 0);
}

static void test_mmio_status_bits_are_cleared_only_by_reset(void **state)
{
	struct fixture *f = *state;

	tg_negotiate(&f->t, F_VERSION_1);
	tg_wr(&f->t, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS), 1 | 2 | 8);
	/* NEEDS_RESET is the device's to set. */
	tg_wr(&f->t, VIRTIO_MMIO_STATUS, 1 | 2 | 8 | VIRTIO_STATUS_NEEDS_RESET);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS), 1 | 2 | 8);
	tg_wr(&f->t, VIRTIO_MMIO_STATUS, 0);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS), 0);
	assert_false(virtio_mmio_feature(&f->t, VIRTIO_F_VERSION_1));
}

static void test_mmio_queue_setup_before_features_ok_is_ignored(void **state)
{
	struct fixture *f = *state;

	tg_queue(&f->t, 8);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_QUEUE_READY), 0);
	assert_int_equal(f->t.queues[0].size, 0);
	assert_false(f->t.broken);
}

static void test_mmio_queue_setup_refused_for_bad_sizes(void **state)
{
	struct fixture *f = *state;
	static const uint32_t sizes[] = { 0, 5, 512, 0x10000, 0xffffffff };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		tg_negotiate(&f->t, F_VERSION_1);
		tg_queue(&f->t, sizes[i]);
		assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_QUEUE_READY), 0);
		assert_true(tg_rd(&f->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
		assert_non_null(strstr(f->t.broken_why, "power of two"));
	}
	/* A reset clears the error and a good size works. */
	tg_negotiate(&f->t, F_VERSION_1);
	tg_queue(&f->t, 256);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_QUEUE_READY), 1);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET, 0);
}

static void test_mmio_queue_setup_refused_for_rings_outside_ram(void **state)
{
	struct fixture *f = *state;

	tg_negotiate(&f->t, F_VERSION_1);
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_SEL, 0);
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_NUM, 8);
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_DESC_LOW, 0);
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0x10);	/* 64 GiB: no RAM */
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)TG_AVAIL);
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)TG_USED);
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_READY, 1);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_QUEUE_READY), 0);
	assert_true(tg_rd(&f->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	assert_non_null(strstr(f->t.broken_why, "descriptor table"));
	/* Queue registers are frozen while broken. */
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	assert_int_equal(f->t.queues[0].desc_gpa, 0x1000000000ULL);
}

static void test_mmio_pops_only_after_driver_ok(void **state)
{
	struct fixture *f = *state;

	tg_negotiate(&f->t, F_VERSION_1);
	tg_queue(&f->t, 8);
	tg_desc(&f->gm, 0, TG_DATA, 16, 0, 0);
	tg_avail(&f->gm, 8, 0, 0);
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	assert_int_equal(tg_eventfd(f->t.kick_fd[0]), 1);
	assert_int_equal(virtio_mmio_pop(&f->t, 0, &f->c), 0);
	tg_driver_ok(&f->t);
	/* DRIVER_OK kicks, so a request made available earlier is seen. */
	assert_int_equal(tg_eventfd(f->t.kick_fd[0]), 1);
	assert_int_equal(virtio_mmio_pop(&f->t, 0, &f->c), 1);
	assert_int_equal(f->t.inflight, 1);
	virtio_mmio_push(&f->t, 0, f->c.head, 1, true);
	assert_int_equal(f->t.inflight, 0);
	assert_int_equal(tg_used_idx(&f->gm), 1);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_INT_USED_RING);
	assert_int_equal(tg_eventfd(f->t.irq_fd), 1);
	tg_wr(&f->t, VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_INT_USED_RING);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_INTERRUPT_STATUS), 0);
	/* A notify for a queue that does not exist goes nowhere. */
	tg_wr(&f->t, VIRTIO_MMIO_QUEUE_NOTIFY, 7);
	assert_int_equal(tg_eventfd(f->t.kick_fd[0]), 0);
}

static void test_mmio_hostile_chain_sets_needs_reset_until_reset(void **state)
{
	struct fixture *f = *state;

	tg_negotiate(&f->t, F_VERSION_1);
	tg_queue(&f->t, 8);
	tg_driver_ok(&f->t);
	tg_desc(&f->gm, 0, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 0);	/* loop */
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtio_mmio_pop(&f->t, 0, &f->c), 0);
	assert_true(tg_rd(&f->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_INT_CONFIG);
	assert_int_equal(tg_eventfd(f->t.irq_fd), 1);
	/* Fixing the ring is not enough: the device waits for a reset. */
	tg_desc(&f->gm, 0, TG_DATA, 16, 0, 0);
	assert_int_equal(virtio_mmio_pop(&f->t, 0, &f->c), 0);
	assert_int_equal(tg_used_idx(&f->gm), 0);
	tg_negotiate(&f->t, F_VERSION_1);
	tg_queue(&f->t, 8);
	tg_driver_ok(&f->t);
	tg_set_avail_idx(&f->gm, 0);
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtio_mmio_pop(&f->t, 0, &f->c), 1);
	virtio_mmio_push(&f->t, 0, f->c.head, 0, false);
	assert_int_equal(tg_used_idx(&f->gm), 1);
}

static void test_mmio_ignores_narrow_and_unaligned_register_access(void **state)
{
	struct fixture *f = *state;
	uint8_t b[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint16_t w = 0x0f;

	virtio_mmio_read(&f->t, VIRTIO_MMIO_MAGIC_VALUE, b, 2);
	assert_int_equal(b[0], 0);
	virtio_mmio_write(&f->t, VIRTIO_MMIO_STATUS, (uint8_t *)&w, 2);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS), 0);
	virtio_mmio_read(&f->t, VIRTIO_MMIO_MAGIC_VALUE + 1, b, 4);
	assert_int_equal(b[0] | b[1] | b[2] | b[3], 0);
}

static void test_mmio_config_reads_any_width_inside_only(void **state)
{
	struct fixture *f = *state;
	uint8_t b[8];
	uint64_t q;

	virtio_mmio_read(&f->t, VIRTIO_MMIO_CONFIG + 1, b, 1);
	assert_int_equal(b[0], 2);
	virtio_mmio_read(&f->t, VIRTIO_MMIO_CONFIG, (uint8_t *)&q, 8);
	assert_int_equal(q, 0x0807060504030201ULL);
	virtio_mmio_read(&f->t, VIRTIO_MMIO_CONFIG + 8, b, 4);
	assert_int_equal(b[3], 12);
	virtio_mmio_read(&f->t, VIRTIO_MMIO_CONFIG + 10, b, 4);	/* crosses the end */
	assert_int_equal(b[0] | b[1] | b[2] | b[3], 0);
	virtio_mmio_read(&f->t, 0xff8, b, 8);
	assert_int_equal(b[0], 0);
}

struct reset_arg {
	struct fixture *f;
	bool done;
};

static void *reset_thread(void *p)
{
	struct reset_arg *a = p;

	tg_wr(&a->f->t, VIRTIO_MMIO_STATUS, 0);
	__atomic_store_n(&a->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

#define F_RING ((1ULL << VIRTIO_RING_F_EVENT_IDX) | (1ULL << VIRTIO_RING_F_INDIRECT_DESC))

/* The fixture's transport again, offering the two ring features. */
static void reinit_with_ring_features(struct fixture *f)
{
	uint8_t config[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

	virtio_mmio_destroy(&f->t);
	assert_int_equal(virtio_mmio_init(&f->t, "test", 2, F_DEV | F_RING, 1, config,
					  sizeof(config), &f->gm), 0);
}

static void one_request(struct fixture *f, uint16_t idx, bool interrupt)
{
	tg_desc(&f->gm, 0, TG_DATA, 16, 0, 0);
	tg_avail(&f->gm, 8, idx, 0);
	assert_int_equal(virtio_mmio_pop(&f->t, 0, &f->c), 1);
	virtio_mmio_push(&f->t, 0, f->c.head, 1, interrupt);
}

static void set_used_event(struct fixture *f, uint16_t v)
{
	memcpy((uint8_t *)tg_ptr(&f->gm, TG_AVAIL) + 4 + 2 * 8, &v, 2);
}

static void test_mmio_ring_features_not_acked_interrupt_every_batch(void **state)
{
	struct fixture *f = *state;

	reinit_with_ring_features(f);
	tg_negotiate(&f->t, F_VERSION_1);
	tg_queue(&f->t, 8);
	tg_driver_ok(&f->t);
	assert_false(f->t.queues[0].event_idx);
	assert_false(f->t.queues[0].indirect);
	set_used_event(f, 0x4000);	/* not a used_event: not read */
	one_request(f, 0, true);
	one_request(f, 1, true);
	assert_int_equal(tg_eventfd(f->t.irq_fd), 2);
	tg_desc(&f->gm, 0, TG_DATA, 16, VIRTQ_DESC_F_INDIRECT, 0);
	tg_avail(&f->gm, 8, 2, 0);
	assert_int_equal(virtio_mmio_pop(&f->t, 0, &f->c), 0);
	assert_true(tg_rd(&f->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
}

static void test_mmio_event_idx_interrupts_only_as_used_event_asks(void **state)
{
	struct fixture *f = *state;
	struct virtio_mmio_state s;
	struct virtio_mmio t2;
	uint8_t config[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	char err[256];

	reinit_with_ring_features(f);
	tg_negotiate(&f->t, F_VERSION_1 | F_RING);
	tg_queue(&f->t, 8);
	tg_driver_ok(&f->t);
	assert_true(f->t.queues[0].event_idx);
	assert_true(f->t.queues[0].indirect);
	tg_eventfd(f->t.kick_fd[0]);
	one_request(f, 0, true);	/* the first decision always interrupts */
	assert_int_equal(tg_eventfd(f->t.irq_fd), 1);
	set_used_event(f, 5);		/* "not before the 6th" */
	one_request(f, 1, true);
	one_request(f, 2, false);
	virtio_mmio_notify(&f->t, 0);
	assert_int_equal(tg_eventfd(f->t.irq_fd), 0);
	for (uint16_t i = 3; i < 6; i++)
		one_request(f, i, false);
	virtio_mmio_notify(&f->t, 0);	/* used idx 3 -> 6 steps over 5 */
	assert_int_equal(tg_eventfd(f->t.irq_fd), 1);

	/* A restored transport takes the ring features from the negotiated ones. */
	assert_int_equal(virtio_mmio_get_state(&f->t, &s), 0);
	assert_int_equal(virtio_mmio_init(&t2, "test2", 2, F_DEV | F_RING, 1, config,
					  sizeof(config), &f->gm), 0);
	assert_int_equal(virtio_mmio_set_state(&t2, &s, err, sizeof(err)), 0);
	assert_true(t2.queues[0].event_idx);
	assert_true(t2.queues[0].indirect);
	assert_int_equal(t2.queues[0].used_idx, 6);
	virtio_mmio_destroy(&t2);
	/* The same state into a transport that does not offer them is refused. */
	assert_int_equal(virtio_mmio_init(&t2, "test2", 2, F_DEV, 1, config, sizeof(config),
					  &f->gm), 0);
	assert_int_equal(virtio_mmio_set_state(&t2, &s, err, sizeof(err)), -EINVAL);
	virtio_mmio_destroy(&t2);
}

static void test_mmio_reset_waits_for_requests_in_flight(void **state)
{
	struct fixture *f = *state;
	struct timespec ms20 = { 0, 20 * 1000 * 1000 };
	struct reset_arg a = { f, false };
	pthread_t th;

	tg_negotiate(&f->t, F_VERSION_1);
	tg_queue(&f->t, 8);
	tg_driver_ok(&f->t);
	tg_desc(&f->gm, 0, TG_DATA, 16, 0, 0);
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtio_mmio_pop(&f->t, 0, &f->c), 1);
	assert_int_equal(pthread_create(&th, NULL, reset_thread, &a), 0);
	nanosleep(&ms20, NULL);
	assert_false(__atomic_load_n(&a.done, __ATOMIC_SEQ_CST));
	virtio_mmio_push(&f->t, 0, f->c.head, 1, true);
	pthread_join(th, NULL);
	assert_true(a.done);
	assert_int_equal(tg_used_idx(&f->gm), 1);	/* completed before the reset */
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_STATUS), 0);
	assert_int_equal(tg_rd(&f->t, VIRTIO_MMIO_QUEUE_READY), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_mmio_identifies_as_a_version_2_device),
		T(test_mmio_accepts_offered_features_with_version_1),
		T(test_mmio_refuses_features_without_version_1),
		T(test_mmio_refuses_features_it_does_not_offer),
		T(test_mmio_status_bits_are_cleared_only_by_reset),
		T(test_mmio_queue_setup_before_features_ok_is_ignored),
		T(test_mmio_queue_setup_refused_for_bad_sizes),
		T(test_mmio_queue_setup_refused_for_rings_outside_ram),
		T(test_mmio_pops_only_after_driver_ok),
		T(test_mmio_hostile_chain_sets_needs_reset_until_reset),
		T(test_mmio_ignores_narrow_and_unaligned_register_access),
		T(test_mmio_config_reads_any_width_inside_only),
		T(test_mmio_reset_waits_for_requests_in_flight),
		T(test_mmio_ring_features_not_acked_interrupt_every_batch),
		T(test_mmio_event_idx_interrupts_only_as_used_event_asks),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
