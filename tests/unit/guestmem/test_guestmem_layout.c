// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of guestmem/layout.c: the --memory and --memory-backend
 * parsers (user input) and the guest physical layout around the x86 PCI
 * hole. Pure computation, no files or KVM.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "guestmem/guestmem.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static void test_parse_size_accepts_suffixes_and_plain_bytes(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(guestmem_parse_size("256M", &v), 0);
	assert_true(v == 256 * MiB);
	assert_int_equal(guestmem_parse_size("2G", &v), 0);
	assert_true(v == 2 * GiB);
	assert_int_equal(guestmem_parse_size("2g", &v), 0);
	assert_true(v == 2 * GiB);
	assert_int_equal(guestmem_parse_size("2097152", &v), 0);
	assert_true(v == 2 * MiB);
	assert_int_equal(guestmem_parse_size("4096K", &v), 0);
	assert_true(v == 4 * MiB);
	assert_int_equal(guestmem_parse_size("1T", &v), 0);
	assert_true(v == 1024 * GiB);
}

static void test_parse_size_rejects_malformed_text(void **state)
{
	static const char *const bad[] = {
		"", "M", "-2G", "+2G", " 2G", "2G ", "2GB", "2 G", "2.5G", "0x200000",
		"2Q", "G2", "12MM",
	};
	uint64_t v = 12345;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(guestmem_parse_size(bad[i], &v), -EINVAL);
		assert_true(v == 12345);	/* untouched on error */
	}
	assert_int_equal(guestmem_parse_size(NULL, &v), -EINVAL);
}

static void test_parse_size_rejects_overflow(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(guestmem_parse_size("18446744073709551616", &v), -ERANGE);
	assert_int_equal(guestmem_parse_size("99999999999999999999999", &v), -ERANGE);
	assert_int_equal(guestmem_parse_size("17179869184G", &v), -ERANGE);	/* 2^64 */
	assert_int_equal(guestmem_parse_size("16777216T", &v), -ERANGE);
	assert_true(v == 7);
}

static void test_parse_size_rejects_zero_and_sizes_not_2mib_aligned(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(guestmem_parse_size("0", &v), -EINVAL);
	assert_int_equal(guestmem_parse_size("0M", &v), -EINVAL);
	assert_int_equal(guestmem_parse_size("1M", &v), -EINVAL);
	assert_int_equal(guestmem_parse_size("512K", &v), -EINVAL);
	assert_int_equal(guestmem_parse_size("3M", &v), -EINVAL);
	assert_int_equal(guestmem_parse_size("1048576", &v), -EINVAL);
	assert_int_equal(guestmem_parse_size("2097153", &v), -EINVAL);
	assert_true(v == 7);
}

static void test_backend_names_round_trip_and_unknown_is_rejected(void **state)
{
	enum guestmem_backend b = GUESTMEM_GUEST_MEMFD;

	(void)state;
	assert_int_equal(guestmem_backend_parse("memfd", &b), 0);
	assert_int_equal(b, GUESTMEM_MEMFD);
	assert_int_equal(guestmem_backend_parse("guest_memfd", &b), 0);
	assert_int_equal(b, GUESTMEM_GUEST_MEMFD);
	assert_string_equal(guestmem_backend_name(GUESTMEM_MEMFD), "memfd");
	assert_string_equal(guestmem_backend_name(GUESTMEM_GUEST_MEMFD), "guest_memfd");
	assert_string_equal(guestmem_backend_name((enum guestmem_backend)9), "unknown");
	assert_int_equal(guestmem_backend_parse("hugetlb", &b), -EINVAL);
	assert_int_equal(guestmem_backend_parse("MEMFD", &b), -EINVAL);
	assert_int_equal(guestmem_backend_parse("", &b), -EINVAL);
	assert_int_equal(b, GUESTMEM_GUEST_MEMFD);
}

static void test_layout_below_3g_is_one_region_at_gpa_0(void **state)
{
	struct guestmem gm;

	(void)state;
	assert_int_equal(guestmem_layout(256 * MiB, &gm), 0);
	assert_int_equal(gm.nr, 1);
	assert_true(gm.r[0].gpa == 0);
	assert_true(gm.r[0].size == 256 * MiB);
	assert_int_equal(gm.r[0].fd, -1);
	assert_null(gm.r[0].hva);
	assert_true(gm.total == 256 * MiB);
}

static void test_layout_of_exactly_3g_stays_below_the_hole(void **state)
{
	struct guestmem gm;

	(void)state;
	assert_int_equal(guestmem_layout(3 * GiB, &gm), 0);
	assert_int_equal(gm.nr, 1);
	assert_true(gm.r[0].gpa == 0 && gm.r[0].size == 3 * GiB);
}

static void test_layout_of_4g_splits_3g_at_0_and_1g_at_4g(void **state)
{
	struct guestmem gm;

	(void)state;
	assert_int_equal(guestmem_layout(4 * GiB, &gm), 0);
	assert_int_equal(gm.nr, 2);
	assert_true(gm.r[0].gpa == 0 && gm.r[0].size == 3 * GiB);
	assert_true(gm.r[1].gpa == 4 * GiB && gm.r[1].size == 1 * GiB);
	assert_true(gm.r[0].slot != gm.r[1].slot);
	assert_true(gm.total == 4 * GiB);
	/* Nothing of the planned RAM lands in [3 GiB, 4 GiB). */
	assert_true(gm.r[0].gpa + gm.r[0].size <= GUESTMEM_LOW_RAM_END);
	assert_true(gm.r[1].gpa >= GUESTMEM_HIGH_RAM_START);
}

static void test_layout_just_over_3g_puts_2m_above_4g(void **state)
{
	struct guestmem gm;

	(void)state;
	assert_int_equal(guestmem_layout(3 * GiB + 2 * MiB, &gm), 0);
	assert_int_equal(gm.nr, 2);
	assert_true(gm.r[1].gpa == 4 * GiB && gm.r[1].size == 2 * MiB);
}

static void test_layout_rejects_zero_unaligned_and_too_large(void **state)
{
	struct guestmem gm;

	(void)state;
	assert_int_equal(guestmem_layout(0, &gm), -EINVAL);
	assert_int_equal(guestmem_layout(3 * MiB, &gm), -EINVAL);
	assert_int_equal(guestmem_layout(GUESTMEM_MAX_RAM + 2 * MiB, &gm), -E2BIG);
	assert_int_equal(guestmem_layout(GUESTMEM_MAX_RAM, &gm), 0);
	assert_int_equal(guestmem_layout(2 * MiB, NULL), -EINVAL);
}

/* gpa_to_hva only does arithmetic: fake mappings are enough here. */
static void fake_map(struct guestmem *gm)
{
	gm->r[0].hva = (void *)(uintptr_t)0x100000000000ULL;
	gm->r[1].hva = (void *)(uintptr_t)0x200000000000ULL;
}

static void test_gpa_to_hva_at_region_edges(void **state)
{
	struct guestmem gm;
	char *lo, *hi;

	(void)state;
	assert_int_equal(guestmem_layout(4 * GiB, &gm), 0);
	fake_map(&gm);
	lo = gm.r[0].hva;
	hi = gm.r[1].hva;
	assert_ptr_equal(guestmem_gpa_to_hva(&gm, 0, 1), lo);
	assert_ptr_equal(guestmem_gpa_to_hva(&gm, 0, 3 * GiB), lo);
	assert_ptr_equal(guestmem_gpa_to_hva(&gm, 3 * GiB - 8, 8), lo + 3 * GiB - 8);
	assert_null(guestmem_gpa_to_hva(&gm, 3 * GiB - 8, 9));
	assert_ptr_equal(guestmem_gpa_to_hva(&gm, 4 * GiB, 4096), hi);
	assert_ptr_equal(guestmem_gpa_to_hva(&gm, 5 * GiB - 1, 1), hi + GiB - 1);
	assert_null(guestmem_gpa_to_hva(&gm, 5 * GiB - 1, 2));
	assert_null(guestmem_gpa_to_hva(&gm, 5 * GiB, 1));
}

static void test_gpa_to_hva_in_or_across_the_hole_is_null(void **state)
{
	struct guestmem gm;

	(void)state;
	assert_int_equal(guestmem_layout(4 * GiB, &gm), 0);
	fake_map(&gm);
	assert_null(guestmem_gpa_to_hva(&gm, 3 * GiB, 1));
	assert_null(guestmem_gpa_to_hva(&gm, 0xFEE00000ULL, 4));	/* LAPIC */
	assert_null(guestmem_gpa_to_hva(&gm, 4 * GiB - 1, 1));
	/* One range covering both regions and the hole is not inside one region. */
	assert_null(guestmem_gpa_to_hva(&gm, 3 * GiB - 4096, 2 * GiB));
	assert_null(guestmem_gpa_to_hva(&gm, 4 * GiB - 4096, 8192));
}

static void test_gpa_to_hva_does_not_wrap_on_huge_lengths(void **state)
{
	struct guestmem gm;

	(void)state;
	assert_int_equal(guestmem_layout(4 * GiB, &gm), 0);
	fake_map(&gm);
	assert_null(guestmem_gpa_to_hva(&gm, 4096, UINT64_MAX));
	assert_null(guestmem_gpa_to_hva(&gm, UINT64_MAX, 2));
	assert_null(guestmem_gpa_to_hva(&gm, 4 * GiB + 4096, UINT64_MAX - 4095));
}

static void test_gpa_to_hva_of_unmapped_layout_is_null(void **state)
{
	struct guestmem gm;

	(void)state;
	assert_int_equal(guestmem_layout(256 * MiB, &gm), 0);
	assert_null(guestmem_gpa_to_hva(&gm, 0, 1));
	assert_null(guestmem_gpa_to_hva(NULL, 0, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size_accepts_suffixes_and_plain_bytes),
		cmocka_unit_test(test_parse_size_rejects_malformed_text),
		cmocka_unit_test(test_parse_size_rejects_overflow),
		cmocka_unit_test(test_parse_size_rejects_zero_and_sizes_not_2mib_aligned),
		cmocka_unit_test(test_backend_names_round_trip_and_unknown_is_rejected),
		cmocka_unit_test(test_layout_below_3g_is_one_region_at_gpa_0),
		cmocka_unit_test(test_layout_of_exactly_3g_stays_below_the_hole),
		cmocka_unit_test(test_layout_of_4g_splits_3g_at_0_and_1g_at_4g),
		cmocka_unit_test(test_layout_just_over_3g_puts_2m_above_4g),
		cmocka_unit_test(test_layout_rejects_zero_unaligned_and_too_large),
		cmocka_unit_test(test_gpa_to_hva_at_region_edges),
		cmocka_unit_test(test_gpa_to_hva_in_or_across_the_hole_is_null),
		cmocka_unit_test(test_gpa_to_hva_does_not_wrap_on_huge_lengths),
		cmocka_unit_test(test_gpa_to_hva_of_unmapped_layout_is_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
