/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Range and consistency checks of a parsed VM state, run before a single
 * byte of it reaches KVM: a state that fails here changes nothing. The
 * FDT reader already checked structure and sizes; this checks values
 * (memory map alignment and overlap, vCPU ids and count, register
 * sanity, device presence).
 */
#ifndef KVMLU_STATE_VALIDATE_H
#define KVMLU_STATE_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/state/state_vm.h"

/* expect_vcpus: the count the restoring VMM will create, 0 for any. */
int state_validate(const struct state_vm *s, uint32_t expect_vcpus,
		   char *err, size_t errlen);

#endif /* KVMLU_STATE_VALIDATE_H */
