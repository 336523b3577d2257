// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of guestmem/checksum.c: the sum is a function of the layout
 * and the bytes only (not of the thread count), any changed byte or moved
 * region changes it, and its text form round-trips and rejects junk.
 * Memory is real memfd-backed guest RAM (guestmem_create).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "guestmem/guestmem.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static char err[512];

/* Deterministic, chunk-varying content (xorshift64). */
static void fill(void *p, uint64_t len, uint64_t seed)
{
	uint64_t *w = p, x = seed | 1;
	uint64_t i;

	for (i = 0; i < len / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
}

static int setup_ram(void **state)
{
	static struct guestmem gm;

	/* 38 MiB: 19 chunks of 2 MiB, enough for 7 threads to share. */
	if (guestmem_create(&gm, GUESTMEM_MEMFD, 38 * MiB, -1, "cksum", err, sizeof(err)))
		return -1;
	fill(gm.r[0].hva, gm.r[0].size, 42);
	*state = &gm;
	return 0;
}

static int teardown_ram(void **state)
{
	guestmem_destroy(*state);
	return 0;
}

static struct guestmem_checksum sum(const struct guestmem *gm, unsigned int threads)
{
	struct guestmem_checksum c;

	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(guestmem_checksum(gm, threads, &c), 0);
	return c;
}

static void test_checksum_is_the_same_for_1_2_and_7_threads(void **state)
{
	struct guestmem *gm = *state;
	struct guestmem_checksum c1, c2, c7, c0;

	c1 = sum(gm, 1);
	c2 = sum(gm, 2);
	c7 = sum(gm, 7);
	c0 = sum(gm, 0);
	assert_int_equal(c1.threads, 1);
	assert_int_equal(c2.threads, 2);
	assert_int_equal(c7.threads, 7);
	assert_true(c0.threads >= 1);
	assert_true(c1.hi == c2.hi && c1.lo == c2.lo);
	assert_true(c1.hi == c7.hi && c1.lo == c7.lo);
	assert_true(c1.hi == c0.hi && c1.lo == c0.lo);
	assert_true(c1.bytes == 38 * MiB && c7.bytes == 38 * MiB);
	assert_false(c1.hi == 0 && c1.lo == 0);
}

static void test_checksum_is_stable_while_memory_is_unchanged(void **state)
{
	struct guestmem *gm = *state;
	struct guestmem_checksum a, b;

	a = sum(gm, 3);
	b = sum(gm, 3);
	assert_true(a.hi == b.hi && a.lo == b.lo);
}

static void test_checksum_changes_when_one_byte_flips(void **state)
{
	struct guestmem *gm = *state;
	struct guestmem_checksum before, after, back;
	static const uint64_t where[] = { 0, 2 * MiB - 1, 2 * MiB, 38 * MiB - 1 };
	unsigned char *ram = gm->r[0].hva;
	size_t i;

	before = sum(gm, 2);
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		ram[where[i]] ^= 0x01;
		after = sum(gm, 2);
		assert_false(before.hi == after.hi && before.lo == after.lo);
		ram[where[i]] ^= 0x01;
		back = sum(gm, 7);
		assert_true(before.hi == back.hi && before.lo == back.lo);
	}
}

static void test_checksum_changes_when_chunks_swap(void **state)
{
	struct guestmem *gm = *state;
	struct guestmem_checksum before, after;
	unsigned char *ram = gm->r[0].hva;
	static unsigned char tmp[2 << 20];

	/* Order matters, not only the multiset of chunk digests. */
	before = sum(gm, 2);
	memcpy(tmp, ram, sizeof(tmp));
	memcpy(ram, ram + sizeof(tmp), sizeof(tmp));
	memcpy(ram + sizeof(tmp), tmp, sizeof(tmp));
	after = sum(gm, 2);
	assert_false(before.hi == after.hi && before.lo == after.lo);
	memcpy(ram + sizeof(tmp), ram, sizeof(tmp));
	memcpy(ram, tmp, sizeof(tmp));
	after = sum(gm, 2);
	assert_true(before.hi == after.hi && before.lo == after.lo);
}

static void test_checksum_mixes_in_gpa_and_size(void **state)
{
	struct guestmem *gm = *state;
	struct guestmem_checksum base, moved, split;
	struct guestmem other = *gm;

	base = sum(gm, 2);

	/* Same bytes, region placed 2 MiB higher. */
	other.r[0].gpa += 2 * MiB;
	moved = sum(&other, 2);
	assert_false(base.hi == moved.hi && base.lo == moved.lo);

	/* Same bytes, cut into two regions at 16 MiB. */
	other = *gm;
	other.nr = 2;
	other.r[0].size = 16 * MiB;
	other.r[1] = gm->r[0];
	other.r[1].gpa = 16 * MiB;
	other.r[1].size = 22 * MiB;
	other.r[1].hva = (char *)gm->r[0].hva + 16 * MiB;
	split = sum(&other, 2);
	assert_true(split.bytes == base.bytes);
	assert_false(base.hi == split.hi && base.lo == split.lo);
}

static void test_checksum_covers_both_regions_of_a_split_layout(void **state)
{
	struct guestmem gm, split;
	struct guestmem_checksum a, b, c;
	char *high;

	(void)state;
	/*
	 * A 3 GiB + 4 MiB guest as guestmem_layout() plans it, but backed by
	 * 8 MiB (the checksum only reads hva): 4 MiB at 0, 4 MiB at 4 GiB.
	 */
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 8 * MiB, -1, "split", err, sizeof(err)), 0);
	fill(gm.r[0].hva, 8 * MiB, 7);
	split = gm;
	split.nr = 2;
	split.r[0].size = 4 * MiB;
	split.r[1] = gm.r[0];
	split.r[1].gpa = GUESTMEM_HIGH_RAM_START;
	split.r[1].size = 4 * MiB;
	split.r[1].hva = (char *)gm.r[0].hva + 4 * MiB;
	high = guestmem_gpa_to_hva(&split, GUESTMEM_HIGH_RAM_START, 4 * MiB);
	assert_non_null(high);

	a = sum(&split, 2);
	assert_true(a.bytes == 8 * MiB);
	high[4 * MiB - 1] ^= 0x80;
	b = sum(&split, 2);
	assert_false(a.hi == b.hi && a.lo == b.lo);
	c = sum(&split, 1);
	assert_true(b.hi == c.hi && b.lo == c.lo);
	guestmem_destroy(&gm);
}

static void test_checksum_rejects_unmapped_or_empty_memory(void **state)
{
	struct guestmem gm;
	struct guestmem_checksum c;

	(void)state;
	memset(&gm, 0, sizeof(gm));
	assert_int_equal(guestmem_checksum(&gm, 1, &c), -EINVAL);
	assert_int_equal(guestmem_layout(4 * MiB, &gm), 0);
	assert_int_equal(guestmem_checksum(&gm, 1, &c), -EINVAL);
	assert_int_equal(guestmem_checksum(NULL, 1, &c), -EINVAL);
}

static void test_checksum_text_round_trips(void **state)
{
	struct guestmem_checksum c = { .hi = 0x0123456789abcdefULL, .lo = 0xfedcba9876543210ULL };
	uint64_t hi = 0, lo = 0;
	char buf[33];

	(void)state;
	guestmem_checksum_format(&c, buf);
	assert_string_equal(buf, "0123456789abcdeffedcba9876543210");
	assert_int_equal(guestmem_checksum_parse(buf, &hi, &lo), 0);
	assert_true(hi == c.hi && lo == c.lo);

	c.hi = 0;
	c.lo = 1;
	guestmem_checksum_format(&c, buf);
	assert_string_equal(buf, "00000000000000000000000000000001");
}

static void test_checksum_parse_rejects_junk(void **state)
{
	static const char *const bad[] = {
		"", "0123", "0123456789abcdeffedcba987654321",		/* 31 */
		"0123456789abcdeffedcba98765432100",			/* 33 */
		"0123456789ABCDEFFEDCBA9876543210",			/* not our form */
		"0123456789abcdeffedcba987654321g",
		" 123456789abcdeffedcba9876543210",
		"0x23456789abcdeffedcba9876543210",
	};
	uint64_t hi = 5, lo = 6;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(guestmem_checksum_parse(bad[i], &hi, &lo), -EINVAL);
	assert_true(hi == 5 && lo == 6);
	assert_int_equal(guestmem_checksum_parse(NULL, &hi, &lo), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checksum_is_the_same_for_1_2_and_7_threads),
		cmocka_unit_test(test_checksum_is_stable_while_memory_is_unchanged),
		cmocka_unit_test(test_checksum_changes_when_one_byte_flips),
		cmocka_unit_test(test_checksum_changes_when_chunks_swap),
		cmocka_unit_test(test_checksum_mixes_in_gpa_and_size),
	};
	const struct CMUnitTest standalone[] = {
		cmocka_unit_test(test_checksum_covers_both_regions_of_a_split_layout),
		cmocka_unit_test(test_checksum_rejects_unmapped_or_empty_memory),
		cmocka_unit_test(test_checksum_text_round_trips),
		cmocka_unit_test(test_checksum_parse_rejects_junk),
	};
	int fails;

	fails = cmocka_run_group_tests_name("checksum_of_guest_ram", tests, setup_ram, teardown_ram);
	fails += cmocka_run_group_tests_name("checksum_edges", standalone, NULL, NULL);
	return fails;
}
