// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of guestmem/checksum.c: the sum is a function of the layout
 * and the bytes only (not of the thread count), any changed byte or moved
 * region changes it, and its text form round-trips and rejects junk.
 * Holes in the files hash as zeros without being allocated, and the sum
 * of a given content is the value recorded by earlier versions.
 * Memory is real memfd-backed guest RAM (guestmem_create).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	other.r[1].fd_offset = 16 * MiB;
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
	split.r[1].fd_offset = 4 * MiB;
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

/*
 * Sparse guest RAM: four memfds as four regions, mostly holes. Data at
 * both sides of a chunk edge, a run across a chunk edge, the region's last
 * byte, a region whose size ends inside a chunk (5 MiB of a 6 MiB file),
 * one all hole and one all data. dense writes every byte first (memset 0),
 * so the same content has no hole: what the old checksum read.
 */
struct sparse_ram {
	struct guestmem part[4];
	struct guestmem gm;
};

static void sparse_ram_build(struct sparse_ram *s, bool dense)
{
	static const uint64_t fsz[4] = { 256 * MiB, 6 * MiB, 4 * MiB, 2 * MiB };
	static const uint64_t rsz[4] = { 256 * MiB, 5 * MiB, 4 * MiB, 2 * MiB };
	static const uint64_t gpa[4] = { 0, 4 * GiB, 4 * GiB + 64 * MiB, 4 * GiB + 128 * MiB };
	unsigned char *p;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < 4; i++) {
		assert_int_equal(guestmem_create(&s->part[i], GUESTMEM_MEMFD, fsz[i], -1,
						 "sparse", err, sizeof(err)), 0);
		if (dense)
			memset(s->part[i].r[0].hva, 0, fsz[i]);
		s->gm.r[i] = s->part[i].r[0];
		s->gm.r[i].gpa = gpa[i];
		s->gm.r[i].size = rsz[i];
		s->gm.r[i].slot = i;
		s->gm.total += rsz[i];
	}
	s->gm.nr = 4;
	p = s->gm.r[0].hva;
	fill(p, 4096, 1);
	p[2 * MiB - 1] = 0x5a;
	p[2 * MiB] = 0xa5;
	fill(p + 100 * MiB + 12 * 1024, 3 * MiB, 2);
	p[256 * MiB - 1] = 0x77;
	p = s->gm.r[1].hva;
	p[4 * MiB + 3 * 4096] = 0x11;
	fill(s->gm.r[3].hva, 2 * MiB, 3);
}

static void sparse_ram_free(struct sparse_ram *s)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		guestmem_destroy(&s->part[i]);
}

static uint64_t allocated(const struct guestmem *gm)
{
	uint64_t bytes = 0;
	unsigned int i;
	struct stat st;

	for (i = 0; i < gm->nr; i++) {
		assert_int_equal(fstat(gm->r[i].fd, &st), 0);
		bytes += (uint64_t)st.st_blocks * 512;
	}
	return bytes;
}

static void test_checksum_keeps_the_sum_recorded_before_holes_were_skipped(void **state)
{
	struct sparse_ram s;
	struct guestmem_checksum c;
	char buf[33];

	(void)state;
	/* Computed by the version that read every byte through the mapping. */
	sparse_ram_build(&s, false);
	c = sum(&s.gm, 2);
	guestmem_checksum_format(&c, buf);
	assert_string_equal(buf, "0d97b335ba9f14cf4bddc5be363baf34");
	assert_true(c.bytes == 267 * MiB);
	sparse_ram_free(&s);
}

static void test_checksum_of_holes_equals_checksum_of_written_zeros(void **state)
{
	struct sparse_ram s, d;
	struct guestmem_checksum cs1, cs2, cs7, cd;

	(void)state;
	sparse_ram_build(&s, false);
	sparse_ram_build(&d, true);
	assert_true(allocated(&s.gm) < 16 * MiB);
	assert_true(allocated(&d.gm) >= 268 * MiB);
	cs1 = sum(&s.gm, 1);
	cs2 = sum(&s.gm, 2);
	cs7 = sum(&s.gm, 7);
	cd = sum(&d.gm, 2);
	assert_true(cs1.hi == cd.hi && cs1.lo == cd.lo);
	assert_true(cs2.hi == cd.hi && cs2.lo == cd.lo);
	assert_true(cs7.hi == cd.hi && cs7.lo == cd.lo);
	sparse_ram_free(&s);
	sparse_ram_free(&d);
}

static void test_checksum_allocates_no_page_of_a_hole(void **state)
{
	struct sparse_ram s;
	uint64_t before, after;

	(void)state;
	sparse_ram_build(&s, false);
	before = allocated(&s.gm);
	sum(&s.gm, 1);
	sum(&s.gm, 3);
	after = allocated(&s.gm);
	print_message("allocated before %llu KiB, after %llu KiB, of %llu KiB\n",
		      (unsigned long long)(before >> 10), (unsigned long long)(after >> 10),
		      (unsigned long long)(s.gm.total >> 10));
	assert_true(after == before);
	sparse_ram_free(&s);
}

static void test_checksum_sees_each_byte_written_next_to_a_hole(void **state)
{
	struct sparse_ram s;
	struct guestmem_checksum base, c;
	/* Region 0 offsets: chunk edges, the edges of the 3 MiB run, the end. */
	static const uint64_t where[] = {
		0, 4095, 4096, 2 * MiB - 2, 2 * MiB + 1, 100 * MiB + 12 * 1024 - 1,
		103 * MiB + 12 * 1024, 128 * MiB, 256 * MiB - 2,
	};
	unsigned char *p;
	size_t i;

	(void)state;
	sparse_ram_build(&s, false);
	p = s.gm.r[0].hva;
	base = sum(&s.gm, 2);
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		p[where[i]] ^= 0x40;
		c = sum(&s.gm, 2);
		assert_false(base.hi == c.hi && base.lo == c.lo);
		p[where[i]] ^= 0x40;
		c = sum(&s.gm, 2);
		assert_true(base.hi == c.hi && base.lo == c.lo);
	}
	/* Past the region's size (5 MiB of 6): not guest RAM, not hashed. */
	p = s.gm.r[1].hva;
	p[5 * MiB + 4096] = 0x99;
	c = sum(&s.gm, 2);
	assert_true(base.hi == c.hi && base.lo == c.lo);
	sparse_ram_free(&s);
}

static void test_checksum_of_an_all_hole_region_equals_written_zeros(void **state)
{
	struct guestmem hole, zero;
	struct guestmem_checksum ch, cz;

	(void)state;
	assert_int_equal(guestmem_create(&hole, GUESTMEM_MEMFD, 10 * MiB, -1, "hole", err, sizeof(err)), 0);
	assert_int_equal(guestmem_create(&zero, GUESTMEM_MEMFD, 10 * MiB, -1, "zero", err, sizeof(err)), 0);
	memset(zero.r[0].hva, 0, 10 * MiB);
	/* 9 MiB: four whole chunks and a short one. */
	hole.r[0].size = zero.r[0].size = 9 * MiB;
	ch = sum(&hole, 2);
	cz = sum(&zero, 1);
	assert_true(ch.hi == cz.hi && ch.lo == cz.lo);
	assert_true(allocated(&hole) == 0);
	guestmem_destroy(&hole);
	guestmem_destroy(&zero);
}

static void test_checksum_reads_everything_when_the_file_cannot_seek_holes(void **state)
{
	struct sparse_ram s;
	struct guestmem_checksum c, p;
	int pipefd[2];
	unsigned int i;

	(void)state;
	/* A pipe answers lseek with ESPIPE, as a guest_memfd does. */
	sparse_ram_build(&s, false);
	c = sum(&s.gm, 2);
	assert_int_equal(pipe(pipefd), 0);
	for (i = 0; i < s.gm.nr; i++)
		s.gm.r[i].fd = pipefd[0];
	p = sum(&s.gm, 2);
	assert_true(c.hi == p.hi && c.lo == p.lo);
	for (i = 0; i < s.gm.nr; i++)
		s.gm.r[i].fd = s.part[i].r[0].fd;
	/* Read through the mapping, the holes were allocated as before. */
	assert_true(allocated(&s.gm) >= 267 * MiB);
	close(pipefd[0]);
	close(pipefd[1]);
	sparse_ram_free(&s);
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
	const struct CMUnitTest holes[] = {
		cmocka_unit_test(test_checksum_keeps_the_sum_recorded_before_holes_were_skipped),
		cmocka_unit_test(test_checksum_of_holes_equals_checksum_of_written_zeros),
		cmocka_unit_test(test_checksum_allocates_no_page_of_a_hole),
		cmocka_unit_test(test_checksum_sees_each_byte_written_next_to_a_hole),
		cmocka_unit_test(test_checksum_of_an_all_hole_region_equals_written_zeros),
		cmocka_unit_test(test_checksum_reads_everything_when_the_file_cannot_seek_holes),
	};
	int fails;

	fails = cmocka_run_group_tests_name("checksum_of_guest_ram", tests, setup_ram, teardown_ram);
	fails += cmocka_run_group_tests_name("checksum_edges", standalone, NULL, NULL);
	fails += cmocka_run_group_tests_name("checksum_of_holes", holes, NULL, NULL);
	return fails;
}
