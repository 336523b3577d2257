/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The update_ops of the host after the kexec (update_machine.h says what
 * each must do): start a `kvmlu-vmm restore` for a VM, wait for it to
 * resume the VM or give up, and read what it verified. ctx is the
 * struct update_host_ctx of update_ops_host.h.
 */
#ifndef KVMLU_AGENT_UPDATE_OPS_HOST_RESTORE_H
#define KVMLU_AGENT_UPDATE_OPS_HOST_RESTORE_H

#include <stddef.h>

#include "agent/journal/journal.h"

int host_vm_restore_start_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen);
int host_vm_restore_wait_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen);
int host_vm_restore_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen);
int host_vm_verify_op(void *vctx, struct journal_vm *vm, char *err, size_t errlen);

#endif /* KVMLU_AGENT_UPDATE_OPS_HOST_RESTORE_H */
