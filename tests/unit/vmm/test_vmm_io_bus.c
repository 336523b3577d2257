// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/io_bus.c: the guest picks every address and size, so
 * the bus must route only accesses that lie wholly inside a device, give
 * all-ones for the rest, count them, and never touch bytes past len.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "vmm/io_bus.h"

struct rec_dev {
	unsigned int reads, writes;
	uint64_t last_off;
	unsigned int last_len;
	uint8_t last_data[8];
};

static void rec_read(void *dev, uint64_t off, uint8_t *data, unsigned int len)
{
	struct rec_dev *d = dev;

	d->reads++;
	d->last_off = off;
	d->last_len = len;
	memset(data, 0x5a, len);
}

static void rec_write(void *dev, uint64_t off, const uint8_t *data, unsigned int len)
{
	struct rec_dev *d = dev;

	d->writes++;
	d->last_off = off;
	d->last_len = len;
	memcpy(d->last_data, data, len);
}

static const struct io_dev_ops rec_ops = { rec_read, rec_write };

static void test_io_bus_routes_inside_accesses_with_offsets(void **state)
{
	struct io_bus bus;
	struct rec_dev d = { 0 };
	uint8_t buf[8] = { 1, 2, 3, 4 };

	(void)state;
	io_bus_init(&bus);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x3f8, 8, &rec_ops, &d, "u"), 0);
	assert_true(io_bus_access(&bus, IO_SPACE_PIO, 0x3fd, buf, 1, false));
	assert_int_equal(d.reads, 1);
	assert_int_equal(d.last_off, 5);
	assert_int_equal(buf[0], 0x5a);
	assert_true(io_bus_access(&bus, IO_SPACE_PIO, 0x3fc, buf, 4, true));
	assert_int_equal(d.writes, 1);
	assert_int_equal(d.last_off, 4);
	assert_int_equal(d.last_len, 4);
	/* The last bytes of the range, exactly. */
	assert_true(io_bus_access(&bus, IO_SPACE_PIO, 0x3fe, buf, 2, false));
	assert_int_equal(d.last_off, 6);
	assert_int_equal(io_bus_unhandled(&bus, IO_SPACE_PIO, false), 0);
}

static void test_io_bus_refuses_straddling_accesses(void **state)
{
	struct io_bus bus;
	struct rec_dev d = { 0 };
	uint8_t buf[8];

	(void)state;
	io_bus_init(&bus);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x510, 8, &rec_ops, &d, "t"), 0);
	memset(buf, 0, sizeof(buf));
	/* 4 bytes at 0x516: two inside, two past the end. */
	assert_false(io_bus_access(&bus, IO_SPACE_PIO, 0x516, buf, 4, false));
	assert_memory_equal(buf, "\xff\xff\xff\xff\0\0\0\0", 8);
	/* Starting just below the range. */
	assert_false(io_bus_access(&bus, IO_SPACE_PIO, 0x50f, buf, 2, true));
	assert_int_equal(d.reads + d.writes, 0);
	assert_int_equal(io_bus_unhandled(&bus, IO_SPACE_PIO, false), 1);
	assert_int_equal(io_bus_unhandled(&bus, IO_SPACE_PIO, true), 1);
}

static void test_io_bus_unknown_reads_all_ones_and_counts(void **state)
{
	struct io_bus bus;
	uint8_t buf[8] = { 0 };
	unsigned int i;

	(void)state;
	io_bus_init(&bus);
	for (i = 0; i < 100; i++)
		assert_false(io_bus_access(&bus, IO_SPACE_PIO, 0x80, buf, 1, true));
	assert_false(io_bus_access(&bus, IO_SPACE_PIO, 0x61, buf, 2, false));
	assert_int_equal(buf[0], 0xff);
	assert_int_equal(buf[1], 0xff);
	assert_int_equal(buf[2], 0);	/* nothing past len */
	assert_false(io_bus_access(&bus, IO_SPACE_MMIO, 0xfee00000, buf, 8, false));
	assert_memory_equal(buf, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	assert_int_equal(io_bus_unhandled(&bus, IO_SPACE_PIO, true), 100);
	assert_int_equal(io_bus_unhandled(&bus, IO_SPACE_PIO, false), 1);
	assert_int_equal(io_bus_unhandled(&bus, IO_SPACE_MMIO, false), 1);
	assert_int_equal(io_bus_unhandled(&bus, IO_SPACE_MMIO, true), 0);
}

static void test_io_bus_odd_sizes_and_wrapping_addresses(void **state)
{
	struct io_bus bus;
	struct rec_dev d = { 0 };
	uint8_t buf[16];

	(void)state;
	io_bus_init(&bus);
	/* A range may not end past 2^64; one ending just below it is fine. */
	assert_int_equal(io_bus_register(&bus, IO_SPACE_MMIO, 0xfffffffffffff000ULL, 0x1000,
					 &rec_ops, &d, "wraps"), -EINVAL);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_MMIO, 0xffffffffffffe000ULL, 0x1000,
					 &rec_ops, &d, "top"), 0);
	memset(buf, 0, sizeof(buf));
	/* An access wrapping past 2^64 reaches nobody. */
	assert_false(io_bus_access(&bus, IO_SPACE_MMIO, 0xfffffffffffffffcULL, buf, 8, false));
	assert_int_equal(d.reads, 0);
	/* len 0 and over 8: refused, at most 8 bytes written. */
	assert_false(io_bus_access(&bus, IO_SPACE_MMIO, 0xffffffffffffe000ULL, buf, 0, false));
	assert_false(io_bus_access(&bus, IO_SPACE_MMIO, 0xffffffffffffe000ULL, buf, 16, false));
	assert_int_equal(buf[8], 0);
	assert_int_equal(d.reads, 0);
	assert_true(io_bus_access(&bus, IO_SPACE_MMIO, 0xffffffffffffeff8ULL, buf, 8, false));
	assert_int_equal(d.reads, 1);
	assert_int_equal(d.last_off, 0xff8);
	assert_false(io_bus_access(&bus, IO_SPACE_MMIO, 0xffffffffffffeffcULL, buf, 8, false));
	assert_int_equal(d.reads, 1);
	assert_false(io_bus_access(&bus, (enum io_space)7, 0, buf, 1, false));
}

static void test_io_bus_register_checks_ranges(void **state)
{
	struct io_bus bus;
	struct rec_dev d = { 0 };
	unsigned int i;

	(void)state;
	io_bus_init(&bus);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x3f8, 8, &rec_ops, &d, "a"), 0);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x3ff, 1, &rec_ops, &d, "b"), -EEXIST);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x3f0, 9, &rec_ops, &d, "c"), -EEXIST);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x400, 0, &rec_ops, &d, "d"), -EINVAL);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0xfff0, 0x20, &rec_ops, &d, "e"), -EINVAL);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_MMIO, ~0ULL, 2, &rec_ops, &d, "f"), -EINVAL);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x400, 1, NULL, &d, "g"), -EINVAL);
	/* Same addresses in the other space do not collide. */
	assert_int_equal(io_bus_register(&bus, IO_SPACE_MMIO, 0x3f8, 8, &rec_ops, &d, "h"), 0);
	for (i = 1; i < IO_BUS_MAX_RANGES; i++)
		assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x1000 + i * 16, 16,
						 &rec_ops, &d, "n"), 0);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x2000, 1, &rec_ops, &d, "full"),
			 -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_io_bus_routes_inside_accesses_with_offsets),
		cmocka_unit_test(test_io_bus_refuses_straddling_accesses),
		cmocka_unit_test(test_io_bus_unknown_reads_all_ones_and_counts),
		cmocka_unit_test(test_io_bus_odd_sizes_and_wrapping_addresses),
		cmocka_unit_test(test_io_bus_register_checks_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
