/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A running kvmlu VM (struct vm) to and from its struct state_vm: the
 * glue between the VMM core and the state library. state_vm_capture()
 * runs while the VM is paused (save-state, upgrade, prepare-update);
 * state_vm_restore() runs in a new process on a VM built by vm_create()
 * from the state's own parameters, before any vCPU thread starts.
 */
#ifndef KVMLU_STATE_VM_CAPTURE_H
#define KVMLU_STATE_VM_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/state/state_vm.h"

struct vm;

/*
 * Capture everything of a paused vm into s (initialized here; free with
 * state_vm_free()). with_checksum adds the XXH3-128 of all guest RAM: it
 * costs time proportional to RAM, so it is optional.
 */
int state_vm_capture(struct vm *vm, bool with_checksum, struct state_vm *s,
		     char *err, size_t errlen);

/*
 * Put a validated state into vm, whose vCPUs have not run. vm must have
 * been created with the state's vCPU count and memory map; both are
 * checked again here.
 */
int state_vm_restore(struct vm *vm, const struct state_vm *s, char *err, size_t errlen);

/* The uuid captures of this process write; a restore keeps the saved one. */
const char *state_vm_uuid(void);
void state_vm_uuid_set(const char *uuid);

#endif /* KVMLU_STATE_VM_CAPTURE_H */
