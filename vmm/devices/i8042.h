/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PC keyboard controller (i8042, ports 0x60 data and 0x64
 * status/command), only as far as a Linux guest needs it: its boot-time
 * probe finds a controller with no keyboard and no aux port behind it,
 * and `reboot` (reboot=k, or the fallback without ACPI) pulses the reset
 * line with command 0xfe, which ends the VM as a guest reset. No
 * interrupts are ever raised: nothing is behind the controller to type.
 *
 * Lifecycle: init and register at VM creation; vCPU threads call it
 * under its lock. Its state is a few bytes of controller configuration
 * that Linux rewrites at probe time; a restored VM starts it at power-on.
 */
#ifndef KVMLU_I8042_H
#define KVMLU_I8042_H

#include <pthread.h>
#include <stdint.h>

struct io_bus;

#define I8042_DATA_PORT		0x60
#define I8042_CMD_PORT		0x64

/* Runs on the vCPU thread that asked for the reset, without the lock. */
typedef void (*i8042_reset_fn)(void *ctx);

struct i8042 {
	pthread_mutex_t lock;
	uint8_t ctr;		/* controller configuration ("command byte") */
	uint8_t out;		/* output buffer */
	uint8_t status;
	uint8_t outport;	/* bit 0: reset line (0 = in reset), bit 1: A20 */
	uint8_t pending;	/* command waiting for its data byte, or 0 */
	i8042_reset_fn on_reset;
	void *ctx;
	unsigned long resets;	/* reset requests seen */
};

int i8042_init(struct i8042 *d, i8042_reset_fn on_reset, void *ctx);
/* Claim ports 0x60 and 0x64. */
int i8042_register(struct i8042 *d, struct io_bus *bus);
void i8042_destroy(struct i8042 *d);

/* The port accesses, for the bus and for tests: port is 0x60 or 0x64. */
uint8_t i8042_read(struct i8042 *d, uint16_t port);
void i8042_write(struct i8042 *d, uint16_t port, uint8_t val);

#endif /* KVMLU_I8042_H */
