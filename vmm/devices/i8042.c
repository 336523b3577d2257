// SPDX-License-Identifier: GPL-2.0
/*
 * i8042 keyboard controller, reset and probe only (see i8042.h).
 * Controller commands are answered through the output buffer, which Linux
 * polls through the status port; bytes meant for the keyboard or the aux
 * device are dropped, as if nothing were plugged in.
 */
#include <errno.h>
#include <string.h>

#include "vmm/devices/i8042.h"
#include "vmm/io_bus.h"

#define STS_OBF		0x01	/* output buffer full */
#define STS_SYS		0x04	/* system flag: self-test passed */
#define STS_CMD		0x08	/* last write went to the command port */
#define STS_UNLOCKED	0x10	/* keyboard not inhibited (else "Keylock active") */

#define CTR_KBD_INT	0x01
#define CTR_SYS		0x04
#define CTR_KBD_OFF	0x10
#define CTR_AUX_OFF	0x20
#define CTR_XLATE	0x40

#define OUTPORT_RESET	0x01	/* 0 holds the CPU in reset */
#define OUTPORT_A20	0x02

enum i8042_cmd {
	CMD_READ_CTR = 0x20,
	CMD_WRITE_CTR = 0x60,
	CMD_AUX_DISABLE = 0xa7,
	CMD_AUX_ENABLE = 0xa8,
	CMD_AUX_TEST = 0xa9,
	CMD_SELF_TEST = 0xaa,
	CMD_KBD_TEST = 0xab,
	CMD_KBD_DISABLE = 0xad,
	CMD_KBD_ENABLE = 0xae,
	CMD_READ_INPORT = 0xc0,
	CMD_READ_OUTPORT = 0xd0,
	CMD_WRITE_OUTPORT = 0xd1,
	CMD_WRITE_KBD_OUT = 0xd2,
	CMD_WRITE_AUX_OUT = 0xd3,
	CMD_WRITE_AUX = 0xd4,
	CMD_PULSE_FIRST = 0xf0,	/* 0xf0-0xff: pulse output lines low */
};

#define SELF_TEST_OK	0x55
#define PORT_TEST_OK	0x00
#define PORT_TEST_CLOCK_LOW 0x01	/* "clock line stuck low": no aux port */

static void i8042_power_on(struct i8042 *d)
{
	d->ctr = CTR_KBD_INT | CTR_SYS | CTR_AUX_OFF | CTR_XLATE;
	d->status = STS_SYS | STS_UNLOCKED;
	d->out = 0;
	d->outport = OUTPORT_RESET | OUTPORT_A20;
	d->pending = 0;
}

static void i8042_put(struct i8042 *d, uint8_t v)
{
	d->out = v;
	d->status |= STS_OBF;
}

/* Returns nonzero if the guest asked for a reset. */
static int i8042_command(struct i8042 *d, uint8_t cmd)
{
	switch (cmd) {
	case CMD_READ_CTR:
		i8042_put(d, d->ctr);
		break;
	case CMD_WRITE_CTR:
	case CMD_WRITE_OUTPORT:
	case CMD_WRITE_KBD_OUT:
	case CMD_WRITE_AUX_OUT:
	case CMD_WRITE_AUX:
		d->pending = cmd;
		break;
	case CMD_AUX_DISABLE:
		d->ctr |= CTR_AUX_OFF;
		break;
	case CMD_AUX_ENABLE:
		/* No aux port: the bit stays set, which is how Linux tells. */
		break;
	case CMD_AUX_TEST:
		i8042_put(d, PORT_TEST_CLOCK_LOW);
		break;
	case CMD_SELF_TEST:
		i8042_put(d, SELF_TEST_OK);
		break;
	case CMD_KBD_TEST:
		i8042_put(d, PORT_TEST_OK);
		break;
	case CMD_KBD_DISABLE:
		d->ctr |= CTR_KBD_OFF;
		break;
	case CMD_KBD_ENABLE:
		d->ctr &= (uint8_t)~CTR_KBD_OFF;
		break;
	case CMD_READ_INPORT:
		i8042_put(d, 0);
		break;
	case CMD_READ_OUTPORT:
		i8042_put(d, d->outport);
		break;
	default:
		/* Pulse commands: a 0 in bit 0 of the mask pulses the reset line. */
		if (cmd >= CMD_PULSE_FIRST && !(cmd & OUTPORT_RESET))
			return 1;
		break;
	}
	return 0;
}

static int i8042_data(struct i8042 *d, uint8_t val)
{
	uint8_t cmd = d->pending;

	d->pending = 0;
	switch (cmd) {
	case CMD_WRITE_CTR:
		/* Without an aux port its disable bit cannot be cleared. */
		d->ctr = val | CTR_AUX_OFF;
		d->status = (uint8_t)((d->status & ~STS_SYS) | (val & CTR_SYS));
		break;
	case CMD_WRITE_OUTPORT:
		d->outport = val;
		if (!(val & OUTPORT_RESET))
			return 1;
		break;
	case CMD_WRITE_KBD_OUT:
		i8042_put(d, val);
		break;
	default:
		/* For the keyboard or the aux device: nobody is there. */
		break;
	}
	return 0;
}

uint8_t i8042_read(struct i8042 *d, uint16_t port)
{
	uint8_t v;

	pthread_mutex_lock(&d->lock);
	if (port == I8042_CMD_PORT) {
		v = d->status;
	} else {
		v = d->out;
		d->status &= (uint8_t)~STS_OBF;
	}
	pthread_mutex_unlock(&d->lock);
	return v;
}

void i8042_write(struct i8042 *d, uint16_t port, uint8_t val)
{
	int reset;

	pthread_mutex_lock(&d->lock);
	if (port == I8042_CMD_PORT) {
		d->status |= STS_CMD;
		reset = i8042_command(d, val);
	} else {
		d->status &= (uint8_t)~STS_CMD;
		reset = i8042_data(d, val);
	}
	if (reset) {
		d->resets++;
		/* The line comes back up: a restarted guest finds it released. */
		d->outport |= OUTPORT_RESET;
	}
	pthread_mutex_unlock(&d->lock);
	if (reset && d->on_reset)
		d->on_reset(d->ctx);
}

/* Each port is its own one-byte range; wider reads see all-ones above it. */
static void i8042_port_read(struct i8042 *d, uint16_t port, uint8_t *data, unsigned int len)
{
	memset(data, 0xff, len);
	data[0] = i8042_read(d, port);
}

static void i8042_data_read(void *dev, uint64_t offset, uint8_t *data, unsigned int len)
{
	(void)offset;
	i8042_port_read(dev, I8042_DATA_PORT, data, len);
}

static void i8042_data_write(void *dev, uint64_t offset, const uint8_t *data, unsigned int len)
{
	(void)offset;
	(void)len;
	i8042_write(dev, I8042_DATA_PORT, data[0]);
}

static void i8042_cmd_read(void *dev, uint64_t offset, uint8_t *data, unsigned int len)
{
	(void)offset;
	i8042_port_read(dev, I8042_CMD_PORT, data, len);
}

static void i8042_cmd_write(void *dev, uint64_t offset, const uint8_t *data, unsigned int len)
{
	(void)offset;
	(void)len;
	i8042_write(dev, I8042_CMD_PORT, data[0]);
}

static const struct io_dev_ops i8042_data_ops = {
	.read = i8042_data_read,
	.write = i8042_data_write,
};

static const struct io_dev_ops i8042_cmd_ops = {
	.read = i8042_cmd_read,
	.write = i8042_cmd_write,
};

int i8042_init(struct i8042 *d, i8042_reset_fn on_reset, void *ctx)
{
	int rc;

	memset(d, 0, sizeof(*d));
	rc = pthread_mutex_init(&d->lock, NULL);
	if (rc)
		return -rc;
	d->on_reset = on_reset;
	d->ctx = ctx;
	i8042_power_on(d);
	return 0;
}

int i8042_register(struct i8042 *d, struct io_bus *bus)
{
	int rc;

	rc = io_bus_register(bus, IO_SPACE_PIO, I8042_DATA_PORT, 1, &i8042_data_ops, d,
			     "i8042-data");
	if (rc)
		return rc;
	return io_bus_register(bus, IO_SPACE_PIO, I8042_CMD_PORT, 1, &i8042_cmd_ops, d,
			       "i8042-cmd");
}

void i8042_destroy(struct i8042 *d)
{
	pthread_mutex_destroy(&d->lock);
}
