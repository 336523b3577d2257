/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whole lines on COM1 (see serial.c).
 */
#ifndef WITNESS_SERIAL_H
#define WITNESS_SERIAL_H

#include <stdint.h>

#define SERIAL_LINE_MAX 160

/* A line being built; text beyond SERIAL_LINE_MAX is dropped. */
struct serial_line {
	uint32_t len;
	char buf[SERIAL_LINE_MAX];
};

static inline void serial_line_init(struct serial_line *l)
{
	l->len = 0;
}

void serial_line_str(struct serial_line *l, const char *s);
void serial_line_dec(struct serial_line *l, uint64_t v);
/* digits 0: as many as needed; else zero-padded to that many. */
void serial_line_hex(struct serial_line *l, uint64_t v, unsigned int digits);

/* Sends the line and a newline; lines of different vCPUs never mix. */
void serial_line_send(const struct serial_line *l);
/*
 * Sends the line, then what end() appends to it, then a newline. end()
 * runs once this vCPU holds the lock and the line is out, so a clock read
 * there is at most a few bytes older than the line: one read before
 * waiting for the lock was seen 6 s old on a loaded nested host.
 */
void serial_line_send_ended(const struct serial_line *l,
			    void (*end)(struct serial_line *tail));
/* For the fatal path: waits for the lock a bounded time, then sends anyway. */
void serial_line_send_force(const struct serial_line *l);

#endif /* WITNESS_SERIAL_H */
