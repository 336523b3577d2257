/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few x86 instructions the witness guest needs, as inline functions.
 * All of them work at CPL 3 here: IOPL is 3 (in/out), CR4.TSD is clear
 * (rdtsc), and rdrand/cpuid are never privileged.
 */
#ifndef WITNESS_X86_H
#define WITNESS_X86_H

#include <stdint.h>

static inline void x86_outb(uint16_t port, uint8_t val)
{
	__asm__ volatile("outb %0, %1" : : "a"(val), "Nd"(port) : "memory");
}

static inline void x86_outl(uint16_t port, uint32_t val)
{
	__asm__ volatile("outl %0, %1" : : "a"(val), "Nd"(port) : "memory");
}

static inline uint32_t x86_inl(uint16_t port)
{
	uint32_t val;

	__asm__ volatile("inl %1, %0" : "=a"(val) : "Nd"(port) : "memory");
	return val;
}

static inline uint64_t x86_rdtsc(void)
{
	uint32_t lo, hi;

	/* No serialization needed: one-second pacing and millisecond uptime. */
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* 1 and the value on success, 0 when the DRNG had nothing (CF clear). */
static inline int x86_rdrand64(uint64_t *val)
{
	uint8_t ok;

	__asm__ volatile("rdrand %0; setc %1" : "=r"(*val), "=qm"(ok) : : "cc");
	return ok;
}

static inline void x86_cpuid(uint32_t leaf, uint32_t sub, uint32_t *a,
			     uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid"
			 : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d)
			 : "a"(leaf), "c"(sub));
}

static inline void x86_pause(void)
{
	__asm__ volatile("pause" : : : "memory");
}

#endif /* WITNESS_X86_H */
