/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 8250/16550A UART on COM1 (ports 0x3f8-0x3ff, IRQ 4). Output goes to a
 * file or stdout; the guest never blocks on it (THR is always empty).
 * Its register state is part of the VM state (vmm/state/) so a guest's
 * serial driver sees the same UART after upgrade or kexec.
 */
#ifndef KVMLU_UART8250_H
#define KVMLU_UART8250_H

#include <pthread.h>
#include <stdint.h>

struct io_bus;

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

#define UART8250_NR_PORTS 8
#define UART8250_COM1_IRQ 4

/*
 * Raises or lowers an interrupt line (KVM_IRQ_LINE in the VMM, a recorder
 * in unit tests). Returns 0 or -errno.
 */
typedef int (*uart8250_irq_fn)(void *ctx, unsigned int irq, int level);

struct uart8250 {
	struct uart8250_state s;
	pthread_mutex_t lock;	/* vCPUs and state capture may touch it at once */
	int out_fd;		/* where transmitted bytes go; not owned */
	unsigned int irq;
	int irq_level;		/* last level sent, to send changes only */
	uart8250_irq_fn set_irq;
	void *irq_ctx;
	uint64_t tx_bytes;
	uint64_t tx_errors;	/* writes to out_fd that failed (output lost) */
};

/* Power-on state; out_fd receives output (stdout or the --serial file). */
int uart8250_init(struct uart8250 *u, int out_fd, unsigned int irq,
		  uart8250_irq_fn set_irq, void *irq_ctx);

/* Claim the 8 ports at base on the bus. */
int uart8250_register(struct uart8250 *u, struct io_bus *bus, uint16_t base);

/* Register state for capture, and restore from a captured copy. */
void uart8250_get_state(struct uart8250 *u, struct uart8250_state *out);
int uart8250_set_state(struct uart8250 *u, const struct uart8250_state *in);

void uart8250_destroy(struct uart8250 *u);

#endif /* KVMLU_UART8250_H */
