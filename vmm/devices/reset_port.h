/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PC reset control register (port 0xcf9). A guest writing the reset
 * bit asks for a reboot; kvmlu-vmm has no firmware to reboot into, so it
 * stops the VM and reports "guest reset". Lifecycle: registered with the
 * VM, stateless.
 */
#ifndef KVMLU_RESET_PORT_H
#define KVMLU_RESET_PORT_H

struct io_bus;

#define RESET_PORT_CF9 0xcf9

/* on_reset(ctx) runs on the vCPU thread that wrote the port. */
typedef void (*reset_port_fn)(void *ctx);

struct reset_port {
	reset_port_fn on_reset;
	void *ctx;
};

int reset_port_register(struct reset_port *rp, struct io_bus *bus,
			reset_port_fn on_reset, void *ctx);

#endif /* KVMLU_RESET_PORT_H */
