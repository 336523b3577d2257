// SPDX-License-Identifier: GPL-2.0
/*
 * 8250/16550A UART, transmit side only (see uart8250.h). Every byte the
 * guest writes to THR goes straight to out_fd: the transmitter is
 * infinitely fast, so THR and the shift register always read empty and
 * a guest polling LSR never waits. Nothing is ever received (LSR.DR
 * stays 0). Interrupts follow the 16550 rules a Linux driver expects:
 * a THR-empty interrupt is pending after a THR write or after IER.ETBEI
 * is set, and reading IIR while it is the reported cause clears it.
 *
 * Lifecycle: init at VM creation, register on the bus, then vCPU threads
 * call it under its lock; state capture reads it with the VM paused, a
 * restore sets it before the vCPUs start.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vmm/devices/uart8250.h"
#include "vmm/io_bus.h"

/* Register offsets */
#define UART_RX_TX	0	/* DLAB=0: RBR/THR; DLAB=1: DLL */
#define UART_IER	1	/* DLAB=0: IER; DLAB=1: DLM */
#define UART_IIR_FCR	2
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5
#define UART_MSR	6
#define UART_SCR	7

#define UART_LCR_DLAB	0x80
#define UART_IER_ERBFI	0x01
#define UART_IER_ETBEI	0x02
#define UART_IER_MASK	0x0f
#define UART_IIR_NO_INT	0x01
#define UART_IIR_THRI	0x02
#define UART_IIR_ID	0x0f
#define UART_IIR_FIFO	0xc0	/* both bits: FIFOs enabled */
#define UART_FCR_ENABLE	0x01
#define UART_LSR_THRE	0x20
#define UART_LSR_TEMT	0x40
#define UART_MCR_LOOP	0x10
#define UART_MCR_MASK	0x1f
#define UART_MSR_CTS	0x10
#define UART_MSR_DSR	0x20
#define UART_MSR_DCD	0x80

/* The THR-empty cause lives in iir: the saved state is all there is. */
static void uart_update_irq(struct uart8250 *u)
{
	int level = (u->s.iir & UART_IIR_ID) != UART_IIR_NO_INT;

	if (level == u->irq_level || !u->set_irq)
		return;
	if (u->set_irq(u->irq_ctx, u->irq, level) == 0)
		u->irq_level = level;
}

static void uart_set_thri(struct uart8250 *u, int pending)
{
	uint8_t fifo = u->s.iir & UART_IIR_FIFO;

	if (pending && (u->s.ier & UART_IER_ETBEI))
		u->s.iir = fifo | UART_IIR_THRI;
	else
		u->s.iir = fifo | UART_IIR_NO_INT;
	uart_update_irq(u);
}

static void uart_transmit(struct uart8250 *u, uint8_t c)
{
	ssize_t n;

	/* Loopback sends nothing out, as on real hardware. */
	if (u->s.mcr & UART_MCR_LOOP)
		return;
	do
		n = write(u->out_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		u->tx_bytes++;
	else
		u->tx_errors++;
}

static uint8_t uart_msr(const struct uart8250 *u)
{
	uint8_t m = u->s.mcr;

	if (!(m & UART_MCR_LOOP))
		return UART_MSR_DCD | UART_MSR_DSR | UART_MSR_CTS;
	/* Loopback: DTR->DSR, RTS->CTS, OUT1->RI, OUT2->DCD. */
	return (uint8_t)(((m & 0x01) << 5) | ((m & 0x02) << 3) |
			 ((m & 0x04) << 4) | ((m & 0x08) << 4));
}

static uint8_t uart_read_reg(struct uart8250 *u, unsigned int reg)
{
	uint8_t v;

	switch (reg) {
	case UART_RX_TX:
		return (u->s.lcr & UART_LCR_DLAB) ? u->s.dll : 0;
	case UART_IER:
		return (u->s.lcr & UART_LCR_DLAB) ? u->s.dlm : u->s.ier;
	case UART_IIR_FCR:
		v = u->s.iir;
		if ((v & UART_IIR_ID) == UART_IIR_THRI)
			uart_set_thri(u, 0);
		return v;
	case UART_LCR:
		return u->s.lcr;
	case UART_MCR:
		return u->s.mcr;
	case UART_LSR:
		return u->s.lsr;
	case UART_MSR:
		return uart_msr(u);
	default:
		return u->s.scr;
	}
}

static void uart_write_reg(struct uart8250 *u, unsigned int reg, uint8_t v)
{
	switch (reg) {
	case UART_RX_TX:
		if (u->s.lcr & UART_LCR_DLAB) {
			u->s.dll = v;
			return;
		}
		uart_transmit(u, v);
		uart_set_thri(u, 1);
		return;
	case UART_IER:
		if (u->s.lcr & UART_LCR_DLAB) {
			u->s.dlm = v;
			return;
		}
		u->s.ier = v & UART_IER_MASK;
		/* Enabling ETBEI with THR empty raises the interrupt at once. */
		uart_set_thri(u, 1);
		return;
	case UART_IIR_FCR:
		u->s.fcr = v;
		u->s.iir = (u->s.iir & ~UART_IIR_FIFO) |
			   ((v & UART_FCR_ENABLE) ? UART_IIR_FIFO : 0);
		return;
	case UART_LCR:
		u->s.lcr = v;
		return;
	case UART_MCR:
		u->s.mcr = v & UART_MCR_MASK;
		return;
	case UART_SCR:
		u->s.scr = v;
		return;
	default:
		return;	/* LSR and MSR are read-only */
	}
}

static void uart_io_read(void *dev, uint64_t offset, uint8_t *data, unsigned int len)
{
	struct uart8250 *u = dev;
	unsigned int i;

	pthread_mutex_lock(&u->lock);
	/* A wide access covers consecutive registers, like the bus would. */
	for (i = 0; i < len; i++)
		data[i] = uart_read_reg(u, (unsigned int)(offset + i) & 7);
	pthread_mutex_unlock(&u->lock);
}

static void uart_io_write(void *dev, uint64_t offset, const uint8_t *data, unsigned int len)
{
	struct uart8250 *u = dev;
	unsigned int i;

	pthread_mutex_lock(&u->lock);
	for (i = 0; i < len; i++)
		uart_write_reg(u, (unsigned int)(offset + i) & 7, data[i]);
	pthread_mutex_unlock(&u->lock);
}

static const struct io_dev_ops uart8250_ops = {
	.read = uart_io_read,
	.write = uart_io_write,
};

int uart8250_init(struct uart8250 *u, int out_fd, unsigned int irq,
		  uart8250_irq_fn set_irq, void *irq_ctx)
{
	int err;

	memset(u, 0, sizeof(*u));
	err = pthread_mutex_init(&u->lock, NULL);
	if (err)
		return -err;
	u->out_fd = out_fd;
	u->irq = irq;
	u->set_irq = set_irq;
	u->irq_ctx = irq_ctx;
	u->s.iir = UART_IIR_NO_INT;
	u->s.lsr = UART_LSR_THRE | UART_LSR_TEMT;
	u->s.lcr = 0x03;	/* 8N1 */
	u->s.dll = 0x0c;	/* 9600 baud, what a PC BIOS leaves */
	return 0;
}

int uart8250_register(struct uart8250 *u, struct io_bus *bus, uint16_t base)
{
	return io_bus_register(bus, IO_SPACE_PIO, base, UART8250_NR_PORTS,
			       &uart8250_ops, u, "uart8250");
}

void uart8250_get_state(struct uart8250 *u, struct uart8250_state *out)
{
	pthread_mutex_lock(&u->lock);
	*out = u->s;
	out->msr = uart_msr(u);
	pthread_mutex_unlock(&u->lock);
}

int uart8250_set_state(struct uart8250 *u, const struct uart8250_state *in)
{
	uint8_t id = in->iir & UART_IIR_ID;

	/* Untrusted (it comes from a state file): only states a UART can be in. */
	if ((id != UART_IIR_NO_INT && id != UART_IIR_THRI) ||
	    (in->iir & 0x30) || (in->ier & ~UART_IER_MASK) ||
	    (in->mcr & ~UART_MCR_MASK) ||
	    (in->lsr != (UART_LSR_THRE | UART_LSR_TEMT)))
		return -EINVAL;
	pthread_mutex_lock(&u->lock);
	u->s = *in;
	u->irq_level = -1;	/* resend whatever the restored state says */
	uart_update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

void uart8250_destroy(struct uart8250 *u)
{
	pthread_mutex_destroy(&u->lock);
}
