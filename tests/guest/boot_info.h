/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checked copy of the VMM's struct kvmlu_boot_info (see boot_info.c).
 */
#ifndef WITNESS_BOOT_INFO_H
#define WITNESS_BOOT_INFO_H

#include <stdint.h>

#include <kvmlu/payload_abi.h>

#include "pattern.h"

struct boot_params {
	uint32_t nr_cpus;
	uint64_t tsc_khz;
	uint64_t ram_bytes;		/* all RAM regions */
	struct pattern_ram ram;		/* the part the pattern covers */
};

/* Why a boot info was refused: a field name and its value. */
struct boot_info_error {
	const char *what;
	uint64_t value;
};

/* 0, or -WITNESS_EINVAL with *err saying what; *out is then unusable. */
int boot_info_read(const struct kvmlu_boot_info *bi, struct boot_params *out,
		   struct boot_info_error *err);

#define WITNESS_EINVAL 22

#endif /* WITNESS_BOOT_INFO_H */
