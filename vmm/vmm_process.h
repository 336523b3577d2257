/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Process plumbing shared by every kvmlu-vmm entry point (`run`, the
 * hidden `incoming` side of a live upgrade, `restore` after a kexec):
 * the signal mask and its signalfd, waiting for the VM to stop or for a
 * termination signal, and the exit status a stop reason maps to.
 */
#ifndef KVMLU_VMM_PROCESS_H
#define KVMLU_VMM_PROCESS_H

#include "vmm/vm.h"

/*
 * Block SIGTERM, SIGINT and the vCPU kick signal in this thread (so in
 * every thread created after), ignore SIGPIPE, and return a signalfd for
 * the termination signals, or -1 with errno set.
 */
int vmm_signals_setup(void);

/*
 * Wait until the VM asks to stop, or a termination signal arrives on
 * sig_fd (which requests the stop). 0, or -errno from poll.
 */
int vmm_wait_for_stop(struct vm *vm, int sig_fd);

/* The process exit status for why the VM stopped: 0 for a clean stop. */
int vmm_exit_status(enum vm_stop_reason r);

#endif /* KVMLU_VMM_PROCESS_H */
