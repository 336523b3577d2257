// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the i8042 keyboard controller (vmm/devices/i8042.c)
 * through the io bus, as a Linux guest drives it: its probe (self-test,
 * controller configuration, no aux port), and the ways `reboot` pulses
 * the reset line, which must call the VM's reset hook exactly once each.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "vmm/devices/i8042.h"
#include "vmm/io_bus.h"

struct kbc_fixture {
	struct io_bus bus;
	struct i8042 kbc;
	unsigned int resets;
};

static void on_reset(void *ctx)
{
	((struct kbc_fixture *)ctx)->resets++;
}

static int setup(void **state)
{
	static struct kbc_fixture f;

	io_bus_init(&f.bus);
	f.resets = 0;
	if (i8042_init(&f.kbc, on_reset, &f) || i8042_register(&f.kbc, &f.bus))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct kbc_fixture *f = *state;

	i8042_destroy(&f->kbc);
	return 0;
}

static uint8_t in8(struct kbc_fixture *f, uint16_t port)
{
	uint8_t v = 0;

	assert_true(io_bus_access(&f->bus, IO_SPACE_PIO, port, &v, 1, false));
	return v;
}

static void out8(struct kbc_fixture *f, uint16_t port, uint8_t v)
{
	assert_true(io_bus_access(&f->bus, IO_SPACE_PIO, port, &v, 1, true));
}

/* A controller command with a reply: Linux polls OBF, then reads 0x60. */
static uint8_t command(struct kbc_fixture *f, uint8_t cmd)
{
	out8(f, I8042_CMD_PORT, cmd);
	assert_int_equal(in8(f, I8042_CMD_PORT) & 0x01, 0x01);
	return in8(f, I8042_DATA_PORT);
}

static void test_i8042_probe_sees_a_controller_without_aux_port(void **state)
{
	struct kbc_fixture *f = *state;
	uint8_t ctr;

	/* Never busy: Linux's kb_wait() before a reset would spin otherwise. */
	assert_int_equal(in8(f, I8042_CMD_PORT) & 0x02, 0);
	assert_int_equal(in8(f, I8042_CMD_PORT) & 0x01, 0);	/* nothing to read */
	assert_int_equal(in8(f, I8042_CMD_PORT) & 0x14, 0x14);	/* self-tested, no keylock */
	assert_int_equal(command(f, 0xaa), 0x55);		/* self-test */
	assert_int_equal(in8(f, I8042_CMD_PORT) & 0x01, 0);	/* read empties it */
	assert_int_equal(command(f, 0xab), 0x00);		/* keyboard port ok */
	assert_int_not_equal(command(f, 0xa9), 0x00);		/* aux port test fails */
	ctr = command(f, 0x20);
	assert_int_equal(ctr & 0x20, 0x20);			/* aux disabled */
	out8(f, I8042_CMD_PORT, 0x60);				/* write CTR */
	out8(f, I8042_DATA_PORT, 0x45);
	assert_int_equal(command(f, 0x20), 0x45 | 0x20);	/* aux stays disabled */
	out8(f, I8042_CMD_PORT, 0xa8);				/* enable aux: no effect */
	assert_int_equal(command(f, 0x20) & 0x20, 0x20);
	/* A byte for the (absent) keyboard produces nothing. */
	out8(f, I8042_DATA_PORT, 0xf2);
	assert_int_equal(in8(f, I8042_CMD_PORT) & 0x01, 0);
	assert_int_equal(f->resets, 0);
}

static void test_i8042_pulse_fe_resets_once(void **state)
{
	struct kbc_fixture *f = *state;

	out8(f, I8042_CMD_PORT, 0xfe);
	assert_int_equal(f->resets, 1);
	assert_int_equal(f->kbc.resets, 1);
	/* 0xff pulses no line: no reset. */
	out8(f, I8042_CMD_PORT, 0xff);
	assert_int_equal(f->resets, 1);
}

static void test_i8042_output_port_write_resets_only_with_bit0_clear(void **state)
{
	struct kbc_fixture *f = *state;

	out8(f, I8042_CMD_PORT, 0xd1);
	out8(f, I8042_DATA_PORT, 0x03);		/* A20 on, reset line high */
	assert_int_equal(f->resets, 0);
	assert_int_equal(command(f, 0xd0) & 0x01, 0x01);
	out8(f, I8042_CMD_PORT, 0xd1);
	out8(f, I8042_DATA_PORT, 0x02);		/* reset line low */
	assert_int_equal(f->resets, 1);
	/* The next data byte is for the keyboard again, not the output port. */
	out8(f, I8042_DATA_PORT, 0x00);
	assert_int_equal(f->resets, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_i8042_probe_sees_a_controller_without_aux_port,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_i8042_pulse_fe_resets_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_i8042_output_port_write_resets_only_with_bit0_clear,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
