/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The boot id names one start of the witness guest: every line it prints
 * carries it, and the memory pattern is seeded from it. It is taken once
 * at first start and then lives only in guest RAM, so a paused, restored
 * or kexec-surviving guest keeps it, and a guest that restarted (RAM
 * lost or the payload re-entered) shows a different one.
 */
#include <stdint.h>

#include "boot_id.h"
#include "mix.h"
#include "x86.h"

#define CPUID_1_ECX_RDRAND (1u << 30)
/* The DRNG may be briefly empty; Intel's guidance is 10 tries. */
#define BOOT_ID_RDRAND_TRIES 10

static int boot_id_has_rdrand(void)
{
	uint32_t a, b, c, d;

	x86_cpuid(0, 0, &a, &b, &c, &d);
	if (a < 1)
		return 0;
	x86_cpuid(1, 0, &a, &b, &c, &d);
	return (c & CPUID_1_ECX_RDRAND) != 0;
}

uint64_t boot_id_take(enum boot_id_source *source)
{
	uint64_t v;
	int i;

	if (boot_id_has_rdrand()) {
		for (i = 0; i < BOOT_ID_RDRAND_TRIES; i++) {
			if (x86_rdrand64(&v)) {
				*source = BOOT_ID_RDRAND;
				return v;
			}
		}
	}
	/* The TSC counts from the VM's creation; mix it so ids look unrelated. */
	*source = BOOT_ID_RDTSC;
	return mix64(x86_rdtsc());
}
