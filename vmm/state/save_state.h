/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Write a paused VM's state FDT to a file, for inspection with dtc and for
 * tests; behind the `save-state` control command (vmm/main/vm_commands.c):
 *   -> {"cmd":"save-state","args":{"path":"vm1.dtb","checksum":true}}
 *   <- {"ok":true,"return":{"path":"/run/kvmlu/vms/vm1.dtb","bytes":10607,"vcpus":1}}
 */
#ifndef KVMLU_STATE_SAVE_STATE_H
#define KVMLU_STATE_SAVE_STATE_H

#include <limits.h>
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

/* Where a save-state writes: a directory kept open and a name in it. */
struct save_state_target {
	int dirfd;
	char dir[PATH_MAX];		/* resolved, for messages and the reply */
	const char *name;		/* points into the client's path */
};

/*
 * The target a client's path means: the directory of control_path (the
 * VM's control socket) and a file name in it (state_file.h gives the
 * rules). -EINVAL or -EPERM: the path is refused, the reason in err;
 * another -errno: the directory could not be opened. On success close it
 * with save_state_target_close().
 */
int save_state_target_open(const char *control_path, const char *path,
			   struct save_state_target *t, char *err, size_t errlen);
void save_state_target_close(struct save_state_target *t);

/*
 * Capture vm (paused by the caller), with the memory checksum if asked,
 * and write it to t (state_file.h: how). -EEXIST: the name exists and
 * overwrite is false; -EPERM: it exists and is not a regular file. The
 * VM is not changed either way.
 */
int save_state(struct vm *vm, const struct save_state_target *t, bool overwrite,
	       bool with_checksum, struct save_state_result *r, char *err, size_t errlen);

#endif /* KVMLU_STATE_SAVE_STATE_H */
