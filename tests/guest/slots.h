/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-vCPU tick counters and self-checking slots (see slots.c).
 */
#ifndef WITNESS_SLOTS_H
#define WITNESS_SLOTS_H

#include <stdint.h>

#include "pattern.h"

#define SLOTS_PER_CPU 512	/* one 4 KiB page of 8-byte slots per vCPU */

/* Before the first tick: tick 0, every slot in its initial state. */
void slots_init(unsigned int cpu, uint64_t seed);
/* Runs n ticks of this vCPU (each rewrites one slot); returns the tick count. */
uint64_t slots_run(unsigned int cpu, uint64_t seed, uint64_t n);
/* Checks the slots of vCPUs [0, nr_cpus) while they keep running. */
void slots_verify(unsigned int nr_cpus, uint64_t seed, struct pattern_damage *d);
uint64_t slots_ticks(unsigned int cpu);

#endif /* WITNESS_SLOTS_H */
