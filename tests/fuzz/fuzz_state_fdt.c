// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the restore path's parser and validator
 * (state_fdt_load) on arbitrary bytes. Any crash, sanitizer report or
 * leak is a bug; refusals are the expected outcome. Seeds in
 * tests/fuzz/corpus/fuzz_state_fdt/ are a good state and the bad states
 * of tests/state-corpus/bad/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/state/state_fdt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state_vm s;
	char err[256];
	void *copy;

	/* libfdt wants the blob 8-byte aligned, as the receiving side maps it. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (state_fdt_load(copy, size, 0, &s, err, sizeof(err)) == 0)
		state_vm_free(&s);
	free(copy);
	return 0;
}
