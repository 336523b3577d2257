/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Write a paused VM's state FDT to a file, for inspection with dtc and for
 * tests; behind the `save-state` control command (vmm/vm_commands.c):
 *   -> {"cmd":"save-state","args":{"path":"/tmp/vm1.dtb","checksum":true}}
 *   <- {"ok":true,"return":{"path":"/tmp/vm1.dtb","bytes":10607,"vcpus":1}}
 */
#ifndef KVMLU_STATE_SAVE_STATE_H
#define KVMLU_STATE_SAVE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/state/state_vm.h"

struct vm;

struct save_state_result {
	size_t bytes;			/* size of the file */
	uint32_t nr_vcpus;
	char uuid[STATE_UUID_LEN + 1];	/* the state's */
};

/* Write blob to path atomically (temp file + rename), mode 0600. */
int state_file_write(const char *path, const void *blob, size_t size,
		     char *err, size_t errlen);

/*
 * Capture vm (paused by the caller), with the memory checksum if asked,
 * and write it to path atomically. The VM is not changed either way.
 */
int save_state(struct vm *vm, const char *path, bool with_checksum,
	       struct save_state_result *r, char *err, size_t errlen);

#endif /* KVMLU_STATE_SAVE_STATE_H */
