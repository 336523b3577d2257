/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 8250/16550A UART on COM1 (ports 0x3f8-0x3ff, IRQ 4). Output goes to a
 * file or stdout; the guest never blocks on it (THR is always empty).
 * Its register state is part of the VM state (vmm/state/) so a guest's
 * serial driver sees the same UART after upgrade or kexec.
 */
#ifndef KVMLU_UART8250_H
#define KVMLU_UART8250_H

#include <stdint.h>

/* Everything the guest can observe; saved and restored as is. */
struct uart8250_state {
	uint8_t ier;	/* interrupt enable */
	uint8_t iir;	/* interrupt identification (read side) */
	uint8_t fcr;	/* FIFO control (last written) */
	uint8_t lcr;	/* line control; bit 7 is DLAB */
	uint8_t mcr;	/* modem control */
	uint8_t lsr;	/* line status */
	uint8_t msr;	/* modem status */
	uint8_t scr;	/* scratch */
	uint8_t dll;	/* divisor latch low */
	uint8_t dlm;	/* divisor latch high */
};

#endif /* KVMLU_UART8250_H */
