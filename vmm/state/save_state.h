/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Write a paused VM's state FDT to a file, for inspection with dtc and for
 * tests; behind the `save-state` control command (vmm/vm_commands.c):
 *   -> {"cmd":"save-state","args":{"path":"vm1.dtb","checksum":true}}
 *   <- {"ok":true,"return":{"path":"/run/kvmlu/vms/vm1.dtb","bytes":10607,"vcpus":1}}
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

/*
 * Capture vm (paused by the caller), with the memory checksum if asked,
 * and write it as name in the directory dirfd (state_file.h: which
 * directory and name, and how). The VM is not changed either way.
 */
int save_state(struct vm *vm, int dirfd, const char *name, bool overwrite, bool with_checksum,
	       struct save_state_result *r, char *err, size_t errlen);

#endif /* KVMLU_STATE_SAVE_STATE_H */
