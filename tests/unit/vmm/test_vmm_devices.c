// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the emulated devices through the io bus, as a guest
 * sees them: the 8250 UART (vmm/devices/uart8250.c) and the kvmlu test
 * port (vmm/devices/test_port.c). The UART writes into a pipe and raises
 * its IRQ through a recorder instead of KVM.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "kvmlu/payload_abi.h"
#include "vmm/devices/test_port.h"
#include "vmm/devices/uart8250.h"
#include "vmm/io_bus.h"

#define COM1 0x3f8

struct irq_rec {
	int level;
	unsigned int changes;
	unsigned int irq;
};

static int rec_irq(void *ctx, unsigned int irq, int level)
{
	struct irq_rec *r = ctx;

	r->irq = irq;
	r->level = level;
	r->changes++;
	return 0;
}

struct uart_fixture {
	struct io_bus bus;
	struct uart8250 u;
	struct irq_rec irq;
	int pipe[2];
};

static int uart_setup(void **state)
{
	static struct uart_fixture f;

	memset(&f, 0, sizeof(f));
	if (pipe2(f.pipe, O_NONBLOCK))
		return -1;
	io_bus_init(&f.bus);
	if (uart8250_init(&f.u, f.pipe[1], UART8250_COM1_IRQ, rec_irq, &f.irq) ||
	    uart8250_register(&f.u, &f.bus, COM1))
		return -1;
	*state = &f;
	return 0;
}

static int uart_teardown(void **state)
{
	struct uart_fixture *f = *state;

	uart8250_destroy(&f->u);
	close(f->pipe[0]);
	close(f->pipe[1]);
	return 0;
}

static uint8_t inb(struct uart_fixture *f, uint16_t port)
{
	uint8_t v = 0;

	assert_true(io_bus_access(&f->bus, IO_SPACE_PIO, port, &v, 1, false));
	return v;
}

static void outb(struct uart_fixture *f, uint16_t port, uint8_t v)
{
	assert_true(io_bus_access(&f->bus, IO_SPACE_PIO, port, &v, 1, true));
}

static void test_uart_transmits_and_thr_is_always_empty(void **state)
{
	struct uart_fixture *f = *state;
	const char *msg = "witness tick=1\n";
	char out[64];
	ssize_t n;
	size_t i;

	for (i = 0; msg[i]; i++) {
		/* What a polling driver does: wait for THRE, then write. */
		assert_int_equal(inb(f, COM1 + 5) & 0x60, 0x60);
		outb(f, COM1, (uint8_t)msg[i]);
	}
	n = read(f->pipe[0], out, sizeof(out));
	assert_int_equal(n, (ssize_t)strlen(msg));
	assert_memory_equal(out, msg, strlen(msg));
	assert_int_equal(f->u.tx_bytes, strlen(msg));
	/* No receive data, ever. */
	assert_int_equal(inb(f, COM1 + 5) & 0x01, 0);
	assert_int_equal(f->irq.changes, 0);	/* IER is 0: no interrupts */
}

static void test_uart_dlab_selects_divisor_latch(void **state)
{
	struct uart_fixture *f = *state;
	char c;

	outb(f, COM1 + 3, 0x83);	/* DLAB, 8N1 */
	outb(f, COM1, 0x01);		/* 115200 */
	outb(f, COM1 + 1, 0x00);
	assert_int_equal(inb(f, COM1), 0x01);
	assert_int_equal(inb(f, COM1 + 1), 0x00);
	outb(f, COM1 + 3, 0x03);
	assert_int_equal(inb(f, COM1 + 3), 0x03);
	assert_int_equal(inb(f, COM1 + 1), 0x00);	/* IER, not DLM */
	/* The divisor write did not transmit anything. */
	assert_int_equal(read(f->pipe[0], &c, 1), -1);
	outb(f, COM1 + 7, 0xa5);
	assert_int_equal(inb(f, COM1 + 7), 0xa5);
}

static void test_uart_thr_empty_interrupt_follows_16550_rules(void **state)
{
	struct uart_fixture *f = *state;
	char sink[8];

	assert_int_equal(inb(f, COM1 + 2) & 0x0f, 0x01);	/* nothing pending */
	outb(f, COM1 + 1, 0x02);				/* ETBEI */
	assert_int_equal(f->irq.level, 1);
	assert_int_equal(f->irq.irq, 4);
	/* Reading IIR while THRI is the cause clears it and drops the line. */
	assert_int_equal(inb(f, COM1 + 2) & 0x0f, 0x02);
	assert_int_equal(f->irq.level, 0);
	assert_int_equal(inb(f, COM1 + 2) & 0x0f, 0x01);
	/* Each THR write raises it again. */
	outb(f, COM1, 'x');
	assert_int_equal(f->irq.level, 1);
	outb(f, COM1 + 1, 0x00);
	assert_int_equal(f->irq.level, 0);
	assert_int_equal(read(f->pipe[0], sink, sizeof(sink)), 1);
}

static void test_uart_state_roundtrip_and_bad_state_refused(void **state)
{
	struct uart_fixture *f = *state;
	struct uart8250_state s, bad;

	outb(f, COM1 + 3, 0x1b);
	outb(f, COM1 + 4, 0x0b);
	outb(f, COM1 + 7, 0x42);
	uart8250_get_state(&f->u, &s);
	assert_int_equal(s.lcr, 0x1b);
	assert_int_equal(s.mcr, 0x0b);
	assert_int_equal(s.scr, 0x42);
	assert_int_equal(s.lsr, 0x60);
	assert_int_equal(uart8250_set_state(&f->u, &s), 0);
	bad = s;
	bad.iir = 0x04;		/* "receive data available": impossible here */
	assert_int_equal(uart8250_set_state(&f->u, &bad), -EINVAL);
	bad = s;
	bad.lsr = 0x01;
	assert_int_equal(uart8250_set_state(&f->u, &bad), -EINVAL);
	bad = s;
	bad.ier = 0xf0;
	assert_int_equal(uart8250_set_state(&f->u, &bad), -EINVAL);
	/* The refused states left the UART as it was. */
	assert_int_equal(inb(f, COM1 + 7), 0x42);
	assert_int_equal(inb(f, COM1 + 3), 0x1b);
}

/* --- test port --- */

struct guest_thread_arg {
	struct test_port *tp;
	struct io_bus *bus;
	uint32_t answer;
	uint32_t seen_request;
};

/* Plays the witness: poll the request port, then write a result. */
static void *guest_polls(void *p)
{
	struct guest_thread_arg *a = p;
	uint32_t req = 0;
	int i;

	for (i = 0; i < 2000 && !req; i++) {
		io_bus_access(a->bus, IO_SPACE_PIO, KVMLU_PORT_REQUEST, (uint8_t *)&req, 4, false);
		if (!req)
			usleep(1000);
	}
	a->seen_request = req;
	if (req & KVMLU_REQ_VERIFY)
		io_bus_access(a->bus, IO_SPACE_PIO, KVMLU_PORT_RESULT, (uint8_t *)&a->answer, 4, true);
	return NULL;
}

static void test_port_request_gets_the_guest_answer(void **state)
{
	struct guest_thread_arg a;
	struct test_port tp;
	struct io_bus bus;
	uint32_t result = 0, again = 0;
	pthread_t t;

	(void)state;
	io_bus_init(&bus);
	assert_int_equal(test_port_init(&tp), 0);
	assert_int_equal(test_port_register(&tp, &bus), 0);
	a = (struct guest_thread_arg){ &tp, &bus, KVMLU_RESULT_VERIFY_FAILED, 0 };
	assert_int_equal(pthread_create(&t, NULL, guest_polls, &a), 0);
	assert_int_equal(test_port_request(&tp, KVMLU_REQ_VERIFY, 10000, &result), 0);
	pthread_join(t, NULL);
	assert_int_equal(a.seen_request, KVMLU_REQ_VERIFY);
	assert_int_equal(result, KVMLU_RESULT_VERIFY_FAILED);
	/* Reading the request port handed the bits over: now it is 0. */
	io_bus_access(&bus, IO_SPACE_PIO, KVMLU_PORT_REQUEST, (uint8_t *)&again, 4, false);
	assert_int_equal(again, 0);
	test_port_destroy(&tp);
}

static void test_port_request_times_out_and_withdraws(void **state)
{
	struct test_port tp;
	struct io_bus bus;
	uint32_t result = 0, req = 0;
	uint8_t byte = 0;

	(void)state;
	io_bus_init(&bus);
	assert_int_equal(test_port_init(&tp), 0);
	assert_int_equal(test_port_register(&tp, &bus), 0);
	assert_int_equal(test_port_request(&tp, KVMLU_REQ_VERIFY, 50, &result), -ETIMEDOUT);
	io_bus_access(&bus, IO_SPACE_PIO, KVMLU_PORT_REQUEST, (uint8_t *)&req, 4, false);
	assert_int_equal(req, 0);
	/* A byte read of the 32-bit port gets all-ones and hands nothing over. */
	tp.pending = KVMLU_REQ_VERIFY;
	io_bus_access(&bus, IO_SPACE_PIO, KVMLU_PORT_REQUEST, &byte, 1, false);
	assert_int_equal(byte, 0xff);
	assert_int_equal(tp.pending, KVMLU_REQ_VERIFY);
	test_port_abort(&tp);
	assert_int_equal(test_port_request(&tp, KVMLU_REQ_VERIFY, 5000, &result), -ECANCELED);
	test_port_destroy(&tp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_uart_transmits_and_thr_is_always_empty,
						uart_setup, uart_teardown),
		cmocka_unit_test_setup_teardown(test_uart_dlab_selects_divisor_latch,
						uart_setup, uart_teardown),
		cmocka_unit_test_setup_teardown(test_uart_thr_empty_interrupt_follows_16550_rules,
						uart_setup, uart_teardown),
		cmocka_unit_test_setup_teardown(test_uart_state_roundtrip_and_bad_state_refused,
						uart_setup, uart_teardown),
		cmocka_unit_test(test_port_request_gets_the_guest_answer),
		cmocka_unit_test(test_port_request_times_out_and_withdraws),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
