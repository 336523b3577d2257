// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/pci/pci_host.c and io_bus_unregister(): conf1
 * addressing (enable bit, bus, device, function, reserved bits), the host
 * bridge at device 0, byte and word access through the data port,
 * accesses that straddle or miss it, and the reset port at 0xcf9 that
 * keeps working inside the 0xcf8 dword once the host takes the ports.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/io_bus.h"
#include "vmm/pci/pci_host.h"

/* A function whose config space is 256 bytes of a pattern, recording writes. */
struct fake_fn {
	uint8_t cfg[256];
	unsigned int writes;
	uint32_t last_off, last_len;
};

static void fake_read(void *ctx, uint32_t off, uint8_t *data, unsigned int len)
{
	struct fake_fn *f = ctx;

	assert_true(off < 256 && len <= 4 && off + len <= 256);
	memcpy(data, f->cfg + off, len);
}

static void fake_write(void *ctx, uint32_t off, const uint8_t *data, unsigned int len)
{
	struct fake_fn *f = ctx;

	assert_true(off < 256 && len <= 4 && off + len <= 256);
	memcpy(f->cfg + off, data, len);
	f->writes++;
	f->last_off = off;
	f->last_len = len;
}

static const struct pci_function_ops fake_ops = { fake_read, fake_write };

/* The reset port stand-in: counts byte writes at 0xcf9. */
static unsigned int resets;
static void cf9_write(void *dev, uint64_t off, const uint8_t *data, unsigned int len)
{
	(void)dev;
	(void)data;
	assert_int_equal(off, 0);
	if (len == 1)
		resets++;
}
static const struct io_dev_ops cf9_ops = { NULL, cf9_write };

struct fixture {
	struct io_bus bus;
	struct pci_host h;
	struct fake_fn fn;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	io_bus_init(&f->bus);
	pci_host_init(&f->h);
	for (unsigned int i = 0; i < 256; i++)
		f->fn.cfg[i] = (uint8_t)i;
	assert_int_equal(io_bus_register(&f->bus, IO_SPACE_PIO, 0xcf9, 1, &cf9_ops, NULL, "cf9"), 0);
	assert_int_equal(pci_host_add(&f->h, 3, &fake_ops, &f->fn), 0);
	assert_int_equal(pci_host_attach(&f->h, &f->bus), 0);
	resets = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	pci_host_destroy(&f->h);
	free(f);
	return 0;
}

static void outl(struct fixture *f, uint16_t port, uint32_t v)
{
	io_bus_access(&f->bus, IO_SPACE_PIO, port, (uint8_t *)&v, 4, true);
}

static uint32_t in(struct fixture *f, uint16_t port, unsigned int len)
{
	uint32_t v = 0;

	io_bus_access(&f->bus, IO_SPACE_PIO, port, (uint8_t *)&v, len, false);
	return v;
}

static uint32_t addr(unsigned int bus, unsigned int dev, unsigned int fn, unsigned int reg)
{
	return 0x80000000u | bus << 16 | dev << 11 | fn << 8 | reg;
}

static void test_conf1_reaches_the_function_and_the_bridge(void **state)
{
	struct fixture *f = *state;

	outl(f, 0xcf8, addr(0, 3, 0, 0x10));
	assert_int_equal(in(f, 0xcf8, 4), addr(0, 3, 0, 0x10));
	assert_int_equal(in(f, 0xcfc, 4), 0x13121110);
	assert_int_equal(in(f, 0xcfd, 1), 0x11);
	assert_int_equal(in(f, 0xcfe, 2), 0x1312);
	/* Device 0: the host bridge, class 06/00. */
	outl(f, 0xcf8, addr(0, 0, 0, 0x08));
	assert_int_equal(in(f, 0xcfc, 4) >> 16, 0x0600);
	outl(f, 0xcf8, addr(0, 0, 0, 0));
	assert_int_equal(in(f, 0xcfc, 4), PCI_HOST_BRIDGE_VENDOR | PCI_HOST_BRIDGE_DEVICE << 16);
	/* A write lands at the register plus the port's byte. */
	outl(f, 0xcf8, addr(0, 3, 0, 0x3c));
	{
		uint8_t b = 0x0b;

		io_bus_access(&f->bus, IO_SPACE_PIO, 0xcfc, &b, 1, true);
	}
	assert_int_equal(f->fn.last_off, 0x3c);
	assert_int_equal(f->fn.cfg[0x3c], 0x0b);
}

static void test_conf1_nothing_there_reads_all_ones(void **state)
{
	struct fixture *f = *state;
	static const uint32_t nowhere[] = {
		0x00000000u | 3 << 11,		/* enable bit clear */
		0x80010000u | 3 << 11,		/* bus 1 */
		0x80000000u | 3 << 11 | 1 << 8,	/* function 1 */
		0x80000000u | 5 << 11,		/* empty slot */
		0x81000000u | 3 << 11,		/* reserved bits 30:24 */
		0xffffffffu,
	};

	for (size_t i = 0; i < sizeof(nowhere) / sizeof(nowhere[0]); i++) {
		outl(f, 0xcf8, nowhere[i]);
		assert_int_equal(in(f, 0xcfc, 4), 0xffffffffu);
		outl(f, 0xcfc, 0);
	}
	assert_int_equal(f->fn.writes, 0);
	/* Straddling the data port, or wider than the ports: nobody gets it. */
	outl(f, 0xcf8, addr(0, 3, 0, 0));
	assert_int_equal(in(f, 0xcfe, 4), 0xffffffffu);
	outl(f, 0xcfe, 0);
	assert_int_equal(f->fn.writes, 0);
	/* Bits 1:0 of CONFIG_ADDRESS read as 0. */
	outl(f, 0xcf8, addr(0, 3, 0, 0) | 3);
	assert_int_equal(in(f, 0xcf8, 4), addr(0, 3, 0, 0));
}

static void test_conf1_keeps_the_reset_port_inside_its_dword(void **state)
{
	struct fixture *f = *state;
	uint8_t b = 0x06;

	/* The dword write at 0xcf8 is CONFIG_ADDRESS, not a reset. */
	outl(f, 0xcf8, addr(0, 3, 0, 0));
	assert_int_equal(resets, 0);
	io_bus_access(&f->bus, IO_SPACE_PIO, 0xcf9, &b, 1, true);
	assert_int_equal(resets, 1);
	/* Linux's conf1 probe writes a byte at 0xcfb: nothing happens. */
	io_bus_access(&f->bus, IO_SPACE_PIO, 0xcfb, &b, 1, true);
	assert_int_equal(resets, 1);
	assert_int_equal(in(f, 0xcf8, 4), addr(0, 3, 0, 0));
	/* A reset port read has no read op: all ones. */
	assert_int_equal(in(f, 0xcf9, 1), 0xff);
}

static void test_pci_host_add_refuses_bad_slots(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(pci_host_add(&f->h, 0, &fake_ops, NULL), -EINVAL);
	assert_int_equal(pci_host_add(&f->h, 32, &fake_ops, NULL), -EINVAL);
	assert_int_equal(pci_host_add(&f->h, 3, &fake_ops, NULL), -EEXIST);
	assert_int_equal(pci_host_add(&f->h, 4, NULL, NULL), -EINVAL);
}

static void test_io_bus_unregister_takes_the_range_off(void **state)
{
	struct io_bus bus;
	struct io_range r;

	(void)state;
	io_bus_init(&bus);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x10, 2, &cf9_ops, NULL, "a"), 0);
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x20, 2, &cf9_ops, NULL, "b"), 0);
	assert_int_equal(io_bus_unregister(&bus, IO_SPACE_PIO, 0x11, &r), -ENOENT);
	assert_int_equal(io_bus_unregister(&bus, IO_SPACE_MMIO, 0x10, &r), -ENOENT);
	assert_int_equal(io_bus_unregister(&bus, IO_SPACE_PIO, 0x10, &r), 0);
	assert_string_equal(r.name, "a");
	assert_int_equal(r.len, 2);
	assert_int_equal(bus.nr_pio, 1);
	assert_string_equal(bus.pio[0].name, "b");
	/* The room is free again. */
	assert_int_equal(io_bus_register(&bus, IO_SPACE_PIO, 0x10, 4, &cf9_ops, NULL, "c"), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_conf1_reaches_the_function_and_the_bridge),
		T(test_conf1_nothing_there_reads_all_ones),
		T(test_conf1_keeps_the_reset_port_inside_its_dword),
		T(test_pci_host_add_refuses_bad_slots),
		cmocka_unit_test(test_io_bus_unregister_takes_the_range_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
