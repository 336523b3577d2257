/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two clocks kvmlu reads. Monotonic for durations within a process;
 * CLOCK_REALTIME for moments that must mean the same on both sides of a
 * kexec (pause and resume times, the journal), the only clock both
 * kernels share.
 */
#ifndef KVMLU_COMMON_CLOCK_H
#define KVMLU_COMMON_CLOCK_H

#include <stdint.h>

uint64_t kvmlu_mono_ns(void);
int64_t kvmlu_mono_ms(void);
uint64_t kvmlu_wall_ns(void);

#endif /* KVMLU_COMMON_CLOCK_H */
