// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/virtio/virtq.c, the split virtqueue, with hostile
 * drivers: every bad ring or chain must be refused (-EIO or -EINVAL with
 * a reason) without reading or writing outside guest RAM (ASan watches
 * the two malloc'ed regions), and good chains come back exactly as built.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "tests/unit/vmm/virtio_test_support.h"
#include "vmm/virtio/virtq.h"

struct fixture {
	struct guestmem gm;
	struct virtq q;
	struct virtq_chain c;
	char err[256];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	tg_mem_init(&f->gm);
	f->q.size = 8;
	f->q.desc_gpa = TG_DESC;
	f->q.avail_gpa = TG_AVAIL;
	f->q.used_gpa = TG_USED;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tg_mem_free(&f->gm);
	free(f);
	return 0;
}

static void enable(struct fixture *f)
{
	assert_int_equal(virtq_enable(&f->q, &f->gm, f->err, sizeof(f->err)), 0);
}

static void test_virtq_pops_a_chain_with_readable_then_writable_buffers(void **state)
{
	struct fixture *f = *state;

	enable(f);
	tg_desc(&f->gm, 3, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 5);
	tg_desc(&f->gm, 5, TG_DATA + 0x100, 512, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, 1);
	tg_desc(&f->gm, 1, TG_HIGH_GPA + 0x10, 1, VIRTQ_DESC_F_WRITE, 0);
	tg_avail(&f->gm, 8, 0, 3);
	assert_int_equal(virtq_pending(&f->q), 1);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 1);
	assert_int_equal(f->c.head, 3);
	assert_int_equal(f->c.nr, 3);
	assert_int_equal(f->c.nr_readable, 1);
	assert_int_equal(f->c.readable_len, 16);
	assert_int_equal(f->c.writable_len, 513);
	assert_ptr_equal(f->c.bufs[0].hva, tg_ptr(&f->gm, TG_DATA));
	assert_ptr_equal(f->c.bufs[2].hva, tg_ptr(&f->gm, TG_HIGH_GPA + 0x10));
	assert_true(f->c.bufs[1].writable);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 0);

	virtq_push(&f->q, 3, 513);
	{
		uint32_t id, len;

		assert_int_equal(tg_used_idx(&f->gm), 1);
		tg_used_elem(&f->gm, 8, 0, &id, &len);
		assert_int_equal(id, 3);
		assert_int_equal(len, 513);
	}
}

static void test_virtq_refuses_a_descriptor_loop(void **state)
{
	struct fixture *f = *state;

	enable(f);
	tg_desc(&f->gm, 0, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 1);
	tg_desc(&f->gm, 1, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 0);
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
	assert_non_null(strstr(f->err, "longer than the queue size 8"));
}

static void test_virtq_refuses_a_self_loop(void **state)
{
	struct fixture *f = *state;

	enable(f);
	tg_desc(&f->gm, 2, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 2);
	tg_avail(&f->gm, 8, 0, 2);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
	assert_int_equal(f->q.last_avail, 0);	/* nothing consumed */
}

static void test_virtq_accepts_a_chain_of_exactly_the_queue_size(void **state)
{
	struct fixture *f = *state;

	enable(f);
	for (uint16_t i = 0; i < 8; i++)
		tg_desc(&f->gm, i, TG_DATA + 16 * i, 16, i < 7 ? VIRTQ_DESC_F_NEXT : 0,
			(uint16_t)(i + 1));
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 1);
	assert_int_equal(f->c.nr, 8);
	assert_int_equal(f->c.readable_len, 128);
}

static void test_virtq_refuses_a_next_index_beyond_the_queue(void **state)
{
	struct fixture *f = *state;

	enable(f);
	tg_desc(&f->gm, 0, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 8);
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
	assert_non_null(strstr(f->err, "next 8 >= queue size 8"));
}

static void test_virtq_refuses_a_head_beyond_the_queue(void **state)
{
	struct fixture *f = *state;

	enable(f);
	tg_avail(&f->gm, 8, 0, 0xffff);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
	assert_non_null(strstr(f->err, "head 65535"));
}

static void test_virtq_refuses_buffers_outside_guest_ram(void **state)
{
	struct fixture *f = *state;
	static const struct { uint64_t addr; uint32_t len; } bad[] = {
		{ TG_LOW_SIZE, 1 },			/* just past region 0 */
		{ TG_LOW_SIZE - 8, 16 },		/* straddles its end */
		{ TG_HIGH_GPA - 4, 8 },			/* straddles into region 1 */
		{ TG_HIGH_GPA + TG_HIGH_SIZE - 1, 2 },	/* past region 1 */
		{ UINT64_MAX - 3, 8 },			/* wraps */
		{ 0x80000000ULL, 4096 },		/* in the hole */
		{ TG_DATA, UINT32_MAX },		/* too long */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		virtq_reset(&f->q);
		f->q.size = 8;
		f->q.desc_gpa = TG_DESC;
		f->q.avail_gpa = TG_AVAIL;
		f->q.used_gpa = TG_USED;
		enable(f);
		tg_desc(&f->gm, 0, bad[i].addr, bad[i].len, 0, 0);
		tg_avail(&f->gm, 8, 0, 0);
		assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
		assert_non_null(strstr(f->err, "not in guest RAM"));
	}
}

static void test_virtq_refuses_an_avail_idx_too_far_ahead(void **state)
{
	struct fixture *f = *state;

	enable(f);
	tg_desc(&f->gm, 0, TG_DATA, 16, 0, 0);
	tg_set_avail_idx(&f->gm, 9);
	assert_int_equal(virtq_pending(&f->q), -EIO);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
	assert_non_null(strstr(f->err, "avail idx 9 is 9 ahead of 0"));
	/* Backwards is "far ahead" too, mod 2^16. */
	tg_set_avail_idx(&f->gm, 0xffff);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
}

static void test_virtq_follows_idx_across_the_16_bit_wrap(void **state)
{
	struct fixture *f = *state;
	uint32_t id, len;

	f->q.last_avail = 0xfffe;
	f->q.used_idx = 0xfffe;
	enable(f);
	tg_desc(&f->gm, 0, TG_DATA, 16, 0, 0);
	tg_desc(&f->gm, 1, TG_DATA, 16, 0, 0);
	tg_desc(&f->gm, 2, TG_DATA, 16, 0, 0);
	tg_avail(&f->gm, 8, 0xfffe, 0);
	tg_avail(&f->gm, 8, 0xffff, 1);
	tg_avail(&f->gm, 8, 0x0000, 2);	/* avail idx is now 1: three ahead of 0xfffe */
	assert_int_equal(virtq_pending(&f->q), 3);
	for (uint16_t i = 0; i < 3; i++) {
		assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 1);
		assert_int_equal(f->c.head, i);
		virtq_push(&f->q, f->c.head, 7);
	}
	assert_int_equal(f->q.last_avail, 1);
	assert_int_equal(tg_used_idx(&f->gm), 1);
	tg_used_elem(&f->gm, 8, 0, &id, &len);
	assert_int_equal(id, 2);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 0);
}

static void test_virtq_refuses_indirect_descriptors(void **state)
{
	struct fixture *f = *state;

	enable(f);
	tg_desc(&f->gm, 0, TG_DATA, 32, VIRTQ_DESC_F_INDIRECT, 0);
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
	assert_non_null(strstr(f->err, "indirect"));
}

static void test_virtq_refuses_readable_after_writable(void **state)
{
	struct fixture *f = *state;

	enable(f);
	tg_desc(&f->gm, 0, TG_DATA, 1, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1);
	tg_desc(&f->gm, 1, TG_DATA, 16, 0, 0);
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
	assert_non_null(strstr(f->err, "readable after device-writable"));
}

static void test_virtq_enable_refuses_bad_sizes_and_rings(void **state)
{
	struct fixture *f = *state;
	static const uint16_t sizes[] = { 0, 3, 6, 512, 0xffff };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		f->q.size = sizes[i];
		assert_int_equal(virtq_enable(&f->q, &f->gm, f->err, sizeof(f->err)), -EINVAL);
		assert_false(f->q.ready);
		assert_non_null(strstr(f->err, "power of two"));
	}
	f->q.size = 8;
	f->q.desc_gpa = TG_DESC + 8;	/* misaligned */
	assert_int_equal(virtq_enable(&f->q, &f->gm, f->err, sizeof(f->err)), -EINVAL);
	f->q.desc_gpa = TG_LOW_SIZE - 64;	/* 8 x 16 bytes do not fit */
	assert_int_equal(virtq_enable(&f->q, &f->gm, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "descriptor table"));
	f->q.desc_gpa = TG_DESC;
	f->q.used_gpa = TG_HIGH_GPA + TG_HIGH_SIZE - 8;
	assert_int_equal(virtq_enable(&f->q, &f->gm, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "used ring"));
	f->q.used_gpa = TG_USED + 2;
	assert_int_equal(virtq_enable(&f->q, &f->gm, f->err, sizeof(f->err)), -EINVAL);
	assert_false(f->q.ready);
	f->q.used_gpa = TG_USED;
	enable(f);
	assert_true(f->q.ready);
}

#define TG_TABLE (TG_DATA + 0x8000)	/* indirect tables from here */

/* Entry i of an indirect table at gpa. */
static void tg_idesc(struct guestmem *gm, uint64_t gpa, uint16_t i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	uint8_t *d = (uint8_t *)tg_ptr(gm, gpa) + 16 * i;

	memcpy(d, &addr, 8);
	memcpy(d + 8, &len, 4);
	memcpy(d + 12, &flags, 2);
	memcpy(d + 14, &next, 2);
}

static void enable_with(struct fixture *f, uint64_t features)
{
	virtq_set_features(&f->q, features);
	enable(f);
}

#define F_INDIRECT (1ULL << VIRTIO_RING_F_INDIRECT_DESC)
#define F_EVENT_IDX (1ULL << VIRTIO_RING_F_EVENT_IDX)

/* Pop expecting a refusal whose reason contains why; nothing consumed. */
static void pop_refused(struct fixture *f, const char *why)
{
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
	if (!strstr(f->err, why))
		fail_msg("reason \"%s\" lacks \"%s\"", f->err, why);
	assert_int_equal(f->q.last_avail, 0);
}

static void test_virtq_walks_an_indirect_table_after_direct_descriptors(void **state)
{
	struct fixture *f = *state;

	enable_with(f, F_INDIRECT);
	tg_desc(&f->gm, 4, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 6);
	/* WRITE on the indirect descriptor itself is ignored (2.7.5.3.2). */
	tg_desc(&f->gm, 6, TG_TABLE, 3 * 16, VIRTQ_DESC_F_INDIRECT | VIRTQ_DESC_F_WRITE, 0);
	tg_idesc(&f->gm, TG_TABLE, 0, TG_DATA + 0x10, 8, VIRTQ_DESC_F_NEXT, 2);
	tg_idesc(&f->gm, TG_TABLE, 2, TG_DATA + 0x200, 512,
		 VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, 1);
	tg_idesc(&f->gm, TG_TABLE, 1, TG_HIGH_GPA, 1, VIRTQ_DESC_F_WRITE, 0);
	tg_avail(&f->gm, 8, 0, 4);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 1);
	assert_int_equal(f->c.head, 4);
	assert_int_equal(f->c.nr, 4);
	assert_int_equal(f->c.nr_readable, 2);
	assert_int_equal(f->c.readable_len, 24);
	assert_int_equal(f->c.writable_len, 513);
	assert_ptr_equal(f->c.bufs[1].hva, tg_ptr(&f->gm, TG_DATA + 0x10));
	assert_ptr_equal(f->c.bufs[3].hva, tg_ptr(&f->gm, TG_HIGH_GPA));
	assert_int_equal(f->q.last_avail, 1);
}

static void test_virtq_accepts_an_indirect_table_longer_than_the_queue(void **state)
{
	struct fixture *f = *state;

	enable_with(f, F_INDIRECT);
	for (uint16_t i = 0; i < VIRTQ_MAX_SIZE; i++)
		tg_idesc(&f->gm, TG_TABLE, i, TG_DATA + i, 1,
			 i + 1 < VIRTQ_MAX_SIZE ? VIRTQ_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	tg_desc(&f->gm, 0, TG_TABLE, 16 * VIRTQ_MAX_SIZE, VIRTQ_DESC_F_INDIRECT, 0);
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 1);
	assert_int_equal(f->c.nr, VIRTQ_MAX_SIZE);
	assert_int_equal(f->c.readable_len, VIRTQ_MAX_SIZE);
}

static void test_virtq_refuses_more_buffers_than_the_chain_limit(void **state)
{
	struct fixture *f = *state;

	/* One direct buffer plus a full table: VIRTQ_MAX_SIZE + 1 in all. */
	enable_with(f, F_INDIRECT);
	for (uint16_t i = 0; i < VIRTQ_MAX_SIZE; i++)
		tg_idesc(&f->gm, TG_TABLE, i, TG_DATA, 1,
			 i + 1 < VIRTQ_MAX_SIZE ? VIRTQ_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	tg_desc(&f->gm, 0, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 1);
	tg_desc(&f->gm, 1, TG_TABLE, 16 * VIRTQ_MAX_SIZE, VIRTQ_DESC_F_INDIRECT, 0);
	tg_avail(&f->gm, 8, 0, 0);
	pop_refused(f, "more than 256 buffers");
}

static void test_virtq_refuses_indirect_tables_that_loop(void **state)
{
	struct fixture *f = *state;

	enable_with(f, F_INDIRECT);
	tg_desc(&f->gm, 0, TG_TABLE, 4 * 16, VIRTQ_DESC_F_INDIRECT, 0);
	tg_avail(&f->gm, 8, 0, 0);
	/* 0 -> 1 -> 2 -> 1 */
	tg_idesc(&f->gm, TG_TABLE, 0, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 1);
	tg_idesc(&f->gm, TG_TABLE, 1, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 2);
	tg_idesc(&f->gm, TG_TABLE, 2, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 1);
	pop_refused(f, "a loop");
	/* An entry pointing at itself. */
	tg_idesc(&f->gm, TG_TABLE, 0, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 0);
	pop_refused(f, "a loop");
	/* A next outside the table (but inside the ring's size). */
	tg_idesc(&f->gm, TG_TABLE, 0, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 4);
	pop_refused(f, "next 4 >= 4 entries");
}

static void test_virtq_refuses_indirect_tables_outside_guest_ram(void **state)
{
	struct fixture *f = *state;
	static const struct { uint64_t addr; uint32_t len; } bad[] = {
		{ TG_LOW_SIZE - 16, 32 },		/* straddles region 0's end */
		{ TG_LOW_SIZE, 16 },			/* in the hole */
		{ TG_HIGH_GPA - 16, 32 },		/* straddles into region 1 */
		{ TG_HIGH_GPA + TG_HIGH_SIZE - 16, 32 },	/* past region 1 */
		{ UINT64_MAX - 15, 32 },		/* wraps */
	};

	enable_with(f, F_INDIRECT);
	tg_avail(&f->gm, 8, 0, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tg_desc(&f->gm, 0, bad[i].addr, bad[i].len, VIRTQ_DESC_F_INDIRECT, 0);
		pop_refused(f, "indirect table");
		assert_non_null(strstr(f->err, "not in guest RAM"));
	}
	/* The table is inside, one of its buffers is not. */
	tg_desc(&f->gm, 0, TG_TABLE, 16, VIRTQ_DESC_F_INDIRECT, 0);
	tg_idesc(&f->gm, TG_TABLE, 0, TG_LOW_SIZE - 4, 8, 0, 0);
	pop_refused(f, "indirect entry 0: buffer");
}

static void test_virtq_refuses_indirect_tables_of_bad_size(void **state)
{
	struct fixture *f = *state;
	static const uint32_t lens[] = { 0, 8, 17, 16 * VIRTQ_MAX_SIZE + 16, UINT32_MAX & ~15u };

	enable_with(f, F_INDIRECT);
	tg_avail(&f->gm, 8, 0, 0);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		tg_desc(&f->gm, 0, TG_TABLE, lens[i], VIRTQ_DESC_F_INDIRECT, 0);
		pop_refused(f, "indirect table of");
	}
}

static void test_virtq_refuses_nested_indirect_and_indirect_with_next(void **state)
{
	struct fixture *f = *state;

	enable_with(f, F_INDIRECT);
	tg_avail(&f->gm, 8, 0, 0);
	tg_desc(&f->gm, 0, TG_TABLE, 2 * 16, VIRTQ_DESC_F_INDIRECT, 0);
	tg_idesc(&f->gm, TG_TABLE, 0, TG_DATA, 16, VIRTQ_DESC_F_NEXT, 1);
	tg_idesc(&f->gm, TG_TABLE, 1, TG_TABLE, 2 * 16, VIRTQ_DESC_F_INDIRECT, 0);
	pop_refused(f, "entry 1 is indirect too");
	tg_desc(&f->gm, 0, TG_TABLE, 16, VIRTQ_DESC_F_INDIRECT | VIRTQ_DESC_F_NEXT, 1);
	pop_refused(f, "indirect and next");
}

static void test_virtq_without_event_idx_always_interrupts_and_writes_no_avail_event(void **state)
{
	struct fixture *f = *state;
	uint16_t sentinel = 0xabcd, v;

	enable_with(f, 0);
	memcpy((uint8_t *)tg_ptr(&f->gm, TG_USED) + 4 + 8 * 8, &sentinel, 2);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 0);
	memcpy(&v, (uint8_t *)tg_ptr(&f->gm, TG_USED) + 4 + 8 * 8, 2);
	assert_int_equal(v, 0xabcd);
	assert_true(virtq_need_interrupt(&f->q));
	assert_true(virtq_need_interrupt(&f->q));
}

static uint16_t avail_event(struct fixture *f)
{
	uint16_t v;

	memcpy(&v, (uint8_t *)tg_ptr(&f->gm, TG_USED) + 4 + 8 * 8, 2);
	return v;
}

static void set_used_event(struct fixture *f, uint16_t v)
{
	memcpy((uint8_t *)tg_ptr(&f->gm, TG_AVAIL) + 4 + 2 * 8, &v, 2);
}

static void test_virtq_event_idx_needs_the_two_extra_ring_words_in_ram(void **state)
{
	struct fixture *f = *state;

	/* Used ring ending exactly at region 1's end: fine without, not with EVENT_IDX. */
	f->q.used_gpa = TG_HIGH_GPA + TG_HIGH_SIZE - (4 + 8 * 8);
	enable_with(f, 0);
	virtq_reset(&f->q);
	f->q.size = 8;
	f->q.desc_gpa = TG_DESC;
	f->q.avail_gpa = TG_AVAIL;
	f->q.used_gpa = TG_HIGH_GPA + TG_HIGH_SIZE - (4 + 8 * 8);
	virtq_set_features(&f->q, F_EVENT_IDX);
	assert_int_equal(virtq_enable(&f->q, &f->gm, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "used ring"));
	f->q.used_gpa = TG_USED;
	f->q.avail_gpa = TG_LOW_SIZE - (4 + 2 * 8);
	assert_int_equal(virtq_enable(&f->q, &f->gm, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "avail ring"));
	assert_false(f->q.ready);
}

static void test_virtq_event_idx_asks_for_a_notify_when_it_finds_the_ring_empty(void **state)
{
	struct fixture *f = *state;

	f->q.last_avail = f->q.used_idx = 0xfffe;
	enable_with(f, F_EVENT_IDX);
	tg_desc(&f->gm, 0, TG_DATA, 16, 0, 0);
	tg_avail(&f->gm, 8, 0xfffe, 0);
	tg_avail(&f->gm, 8, 0xffff, 0);
	/* Busy: the avail_event word is left alone, so the driver does not kick. */
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 1);
	assert_int_equal(avail_event(f), 0);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 1);
	/* Empty: notify me at the next one (across the wrap). */
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 0);
	assert_int_equal(avail_event(f), 0);
	assert_int_equal(f->q.last_avail, 0);
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 1);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 0);
	assert_int_equal(avail_event(f), 1);
	/* A hostile avail idx is still refused with EVENT_IDX on. */
	tg_set_avail_idx(&f->gm, 0x8000);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), -EIO);
}

static void push_n(struct fixture *f, unsigned int n)
{
	while (n--)
		virtq_push(&f->q, 0, 1);
}

static void test_virtq_event_idx_interrupts_as_used_event_says_across_the_wrap(void **state)
{
	struct fixture *f = *state;

	f->q.last_avail = f->q.used_idx = 0xfffd;
	enable_with(f, F_EVENT_IDX);
	/* The first decision after enable (or a restore) always interrupts. */
	set_used_event(f, 0x1234);
	assert_true(virtq_need_interrupt(&f->q));
	/* Nothing new since: no interrupt, whatever used_event says. */
	set_used_event(f, 0xfffd);
	assert_false(virtq_need_interrupt(&f->q));
	/* 0xfffd -> 0x0000: used_event 0xfffe is stepped over. */
	push_n(f, 3);
	set_used_event(f, 0xfffe);
	assert_true(virtq_need_interrupt(&f->q));
	/* 0x0000 -> 0x0002: used_event 0xffff is behind (already announced): none. */
	push_n(f, 2);
	set_used_event(f, 0xffff);
	assert_false(virtq_need_interrupt(&f->q));
	/* 0x0002 -> 0x0004: used_event 0x0003 is in (2, 4]: interrupt. */
	push_n(f, 2);
	set_used_event(f, 0x0003);
	assert_true(virtq_need_interrupt(&f->q));
	/* 0x0004 -> 0x0005: used_event 0x0005 (equal to the new idx) is not passed yet. */
	push_n(f, 1);
	set_used_event(f, 0x0005);
	assert_false(virtq_need_interrupt(&f->q));
	/* Out of range: far ahead of anything used, or far behind: no interrupt, no harm. */
	push_n(f, 1);
	set_used_event(f, 0x8000);
	assert_false(virtq_need_interrupt(&f->q));
	push_n(f, 1);
	set_used_event(f, 0xffff);
	assert_false(virtq_need_interrupt(&f->q));
	/* The driver catches up (used_event = last seen): the next push interrupts again. */
	set_used_event(f, 0x0007);
	push_n(f, 1);
	assert_true(virtq_need_interrupt(&f->q));
	assert_int_equal(tg_used_idx(&f->gm), 0x0008);
}

static void test_virtq_does_nothing_while_not_ready(void **state)
{
	struct fixture *f = *state;

	tg_desc(&f->gm, 0, TG_DATA, 16, 0, 0);
	tg_avail(&f->gm, 8, 0, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c, f->err, sizeof(f->err)), 0);
	virtq_push(&f->q, 0, 1);
	assert_int_equal(tg_used_idx(&f->gm), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_virtq_pops_a_chain_with_readable_then_writable_buffers),
		T(test_virtq_refuses_a_descriptor_loop),
		T(test_virtq_refuses_a_self_loop),
		T(test_virtq_accepts_a_chain_of_exactly_the_queue_size),
		T(test_virtq_refuses_a_next_index_beyond_the_queue),
		T(test_virtq_refuses_a_head_beyond_the_queue),
		T(test_virtq_refuses_buffers_outside_guest_ram),
		T(test_virtq_refuses_an_avail_idx_too_far_ahead),
		T(test_virtq_follows_idx_across_the_16_bit_wrap),
		T(test_virtq_refuses_indirect_descriptors),
		T(test_virtq_refuses_readable_after_writable),
		T(test_virtq_walks_an_indirect_table_after_direct_descriptors),
		T(test_virtq_accepts_an_indirect_table_longer_than_the_queue),
		T(test_virtq_refuses_more_buffers_than_the_chain_limit),
		T(test_virtq_refuses_indirect_tables_that_loop),
		T(test_virtq_refuses_indirect_tables_outside_guest_ram),
		T(test_virtq_refuses_indirect_tables_of_bad_size),
		T(test_virtq_refuses_nested_indirect_and_indirect_with_next),
		T(test_virtq_without_event_idx_always_interrupts_and_writes_no_avail_event),
		T(test_virtq_event_idx_needs_the_two_extra_ring_words_in_ram),
		T(test_virtq_event_idx_asks_for_a_notify_when_it_finds_the_ring_empty),
		T(test_virtq_event_idx_interrupts_as_used_event_says_across_the_wrap),
		T(test_virtq_enable_refuses_bad_sizes_and_rings),
		T(test_virtq_does_nothing_while_not_ready),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
