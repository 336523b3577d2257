/* SPDX-License-Identifier: GPL-2.0 */
/*
 * COM1 output of the witness guest: a line is formatted in a buffer
 * first, then written byte by byte to the UART's THR under a spinlock,
 * so the lines of several vCPUs never interleave. Each byte is one VM
 * exit (~110 us here), which is why the guest prints only a few lines a
 * second. No LSR polling: kvmlu-vmm's 8250 always has THR empty.
 *
 * Lifecycle: the lock lives in the bss (cleared by vCPU 0 before any
 * other vCPU prints). A VM paused or saved with a vCPU inside the lock
 * resumes inside it, with the same RAM and registers, so that is fine.
 */
#include <stdint.h>

#include <kvmlu/payload_abi.h>

#include "serial.h"
#include "x86.h"

static uint32_t serial_lock;

static void serial_line_putc(struct serial_line *l, char c)
{
	if (l->len < SERIAL_LINE_MAX)
		l->buf[l->len++] = c;
}

void serial_line_str(struct serial_line *l, const char *s)
{
	while (*s)
		serial_line_putc(l, *s++);
}

void serial_line_dec(struct serial_line *l, uint64_t v)
{
	char tmp[20];
	unsigned int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		serial_line_putc(l, tmp[--n]);
}

void serial_line_hex(struct serial_line *l, uint64_t v, unsigned int digits)
{
	static const char hex[] = "0123456789abcdef";
	int shift;

	if (digits == 0 || digits > 16) {
		digits = 1;
		while (digits < 16 && (v >> (4 * digits)))
			digits++;
	}
	for (shift = 4 * ((int)digits - 1); shift >= 0; shift -= 4)
		serial_line_putc(l, hex[(v >> shift) & 0xf]);
}

static int serial_trylock(void)
{
	return __atomic_exchange_n(&serial_lock, 1, __ATOMIC_ACQUIRE) == 0;
}

static void serial_unlock(void)
{
	__atomic_store_n(&serial_lock, 0, __ATOMIC_RELEASE);
}

static void serial_emit_bytes(const struct serial_line *l)
{
	uint32_t i;

	for (i = 0; i < l->len; i++)
		x86_outb(KVMLU_COM1_BASE, (uint8_t)l->buf[i]);
}

static void serial_emit(const struct serial_line *l)
{
	serial_emit_bytes(l);
	x86_outb(KVMLU_COM1_BASE, '\n');
}

static void serial_lock_wait(void)
{
	while (!serial_trylock()) {
		while (__atomic_load_n(&serial_lock, __ATOMIC_RELAXED))
			x86_pause();
	}
}

void serial_line_send(const struct serial_line *l)
{
	serial_lock_wait();
	serial_emit(l);
	serial_unlock();
}

void serial_line_send_ended(const struct serial_line *l,
			    void (*end)(struct serial_line *tail))
{
	struct serial_line tail;

	serial_lock_wait();
	serial_emit_bytes(l);
	serial_line_init(&tail);
	end(&tail);
	serial_emit(&tail);
	serial_unlock();
}

void serial_line_send_force(const struct serial_line *l)
{
	/*
	 * The fault may have hit this vCPU while it held the lock; a few
	 * lines' worth of waiting, then print regardless (at CPL 0 every
	 * instruction is slow, so the bound is small).
	 */
	unsigned int spins = 20000;
	int locked;

	while (!(locked = serial_trylock()) && spins--)
		x86_pause();
	serial_emit(l);
	if (locked)
		serial_unlock();
}
