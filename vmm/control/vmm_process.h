/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Process plumbing shared by every kvmlu-vmm entry point (`run`, the
 * hidden `incoming` side of a live upgrade, `restore` after a kexec):
 * the signal mask and its signalfd, and the one serve/exit path each
 * takes once its VM runs (vmm_serve()): wait for the VM to stop or for a
 * termination signal, join the vCPUs, close the control socket, print
 * the "stopped" line and map the stop reason to the exit status.
 */
#ifndef KVMLU_VMM_PROCESS_H
#define KVMLU_VMM_PROCESS_H

#include "vmm/control/server.h"
#include "vmm/vm.h"

/*
 * Block SIGTERM, SIGINT, SIGHUP and the vCPU kick signal in this thread
 * (so in every thread created after), ignore SIGPIPE, start the thread
 * that logs and ignores SIGHUP, and return a signalfd for the
 * termination signals, or -1 with errno set.
 */
int vmm_signals_setup(void);

/*
 * Wait until the VM asks to stop, or a termination signal arrives on
 * sig_fd (which requests the stop). 0, or -errno from poll.
 */
int vmm_wait_for_stop(struct vm *vm, int sig_fd);

/* The process exit status for why the VM stopped: 0 for a clean stop. */
int vmm_exit_status(enum vm_stop_reason r);

/*
 * Serve a VM whose vCPUs were started (or whose start failed and asked
 * for a stop) until it stops: wait, join the vCPUs, then stop server
 * (NULL: none; the control thread may be in a command that touches the
 * VM, so it goes after the join), print "kvmlu-vmm: <vm>: stopped
 * (<reason>): <why>" and return the exit status (vmm_exit_status()).
 * The VM is left for the caller to destroy.
 */
int vmm_serve(struct vm *vm, int sig_fd, struct control_server *server);

#endif /* KVMLU_VMM_PROCESS_H */
