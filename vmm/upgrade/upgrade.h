/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live upgrade: the running VM continues in a new kvmlu-vmm process on
 * the same host kernel. The old side is the `upgrade` control command
 * (upgrade.c, which has the whole story and its unhappy paths), the new
 * side `kvmlu-vmm incoming` (incoming.h), the messages between them
 * upgrade_wire.h.
 */
#ifndef KVMLU_VMM_UPGRADE_H
#define KVMLU_VMM_UPGRADE_H

#include <stdbool.h>

/*
 * Register `upgrade` with the control dispatcher; before any server
 * starts. prepared: true while a host update holds the VM's state in a
 * LUO session, which cannot follow to a new process, so `upgrade` is
 * refused then (main passes live_update_prepared(): this layer sits
 * above the host update's and names nothing of it).
 */
int upgrade_register_commands(bool (*prepared)(void));

#endif /* KVMLU_VMM_UPGRADE_H */
