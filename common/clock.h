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
#include <time.h>

uint64_t kvmlu_mono_ns(void);
int64_t kvmlu_mono_ms(void);
uint64_t kvmlu_wall_ns(void);

/*
 * *ts = now on clock plus ms: the absolute deadline pthread_cond_timedwait()
 * takes, on the clock its condition variable waits by (CLOCK_REALTIME
 * unless pthread_condattr_setclock() chose another).
 */
void kvmlu_deadline_ms(struct timespec *ts, clockid_t clock, unsigned int ms);

#endif /* KVMLU_COMMON_CLOCK_H */
