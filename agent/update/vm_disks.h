/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Preflight of a VM's disks (docs/devices.md). Disk fds do not cross a kexec:
 * after it, `kvmlu-vmm restore` reopens each disk by its path and holds
 * the VM if the file is not the one recorded at pause. A VM whose disk
 * cannot be found again that way would be held, so the update is refused
 * before anything is paused. The cases: the path no longer names a file
 * (removed), it names another file than the one the VMM has open
 * (replaced), or the disk is on tmpfs or ramfs, whose files do not
 * survive the kexec.
 */
#ifndef KVMLU_AGENT_VM_DISKS_H
#define KVMLU_AGENT_VM_DISKS_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * The "disks" of a VMM's status reply (docs/control-protocol.md); none
 * is fine. 0 if each can be identified again after a kexec, else -errno
 * with the first disk's problem in why.
 */
int vm_disks_check(json_object *status_return, char *why, size_t whylen);

#endif /* KVMLU_AGENT_VM_DISKS_H */
