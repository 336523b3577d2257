/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The witness's boot id (see boot_id.c).
 */
#ifndef WITNESS_BOOT_ID_H
#define WITNESS_BOOT_ID_H

#include <stdint.h>

enum boot_id_source {
	BOOT_ID_RDRAND,
	BOOT_ID_RDTSC,
};

/* Called once, by vCPU 0 at CPL 3 at first start. */
uint64_t boot_id_take(enum boot_id_source *source);

#endif /* WITNESS_BOOT_ID_H */
