/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `kvmlu-vmm incoming --fd N`: the new process of a live upgrade (hidden;
 * started by vmm/upgrade/upgrade.c, never by users). Receives the VM over the
 * socket N, restores and runs it, then lives on as that VM's VMM.
 */
#ifndef KVMLU_VMM_INCOMING_H
#define KVMLU_VMM_INCOMING_H

/*
 * main() of the subcommand; returns the exit status: 1 (and "error" to
 * the old process, which keeps the VM) before "commit", without having
 * run a vCPU; after it, that of `kvmlu-vmm run` (vmm_serve()).
 */
int vmm_incoming_main(int argc, char **argv);

#endif /* KVMLU_VMM_INCOMING_H */
