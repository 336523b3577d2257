/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which VMs run on this host: every `<name>.sock` in the configured run
 * directory is the control socket of the VM <name> (start each VMM with
 * `--control <run_dir>/<name>.sock`). Discovery, not registration: a VMM
 * started before the agent, or an agent restarted, sees the same VMs with
 * no state to lose. Sockets that nobody listens on show up as not
 * answering.
 */
#ifndef KVMLU_VM_DISCOVERY_H
#define KVMLU_VM_DISCOVERY_H

#include <stddef.h>

#include "agent/journal/journal.h"

/* Add every VM found in run_dir to j, sorted by name. */
int vm_discovery_scan(const char *run_dir, struct journal *j, char *err, size_t errlen);

#endif /* KVMLU_VM_DISCOVERY_H */
