/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The devices in an upgrade's "prepare" message (upgrade_wire.h): each
 * device type's array under its handover_key ("disks", "nets"), one
 * object per device in slot order, with the fds it passes. Both ends
 * walk the types (vmm/device.h): the old process writes each device's
 * object with its type's handover, the new one reads each into its
 * entry of the resume plan's device configs with its type's
 * handover_read. The keys are the wire's format, which old and new
 * VMMs read alike: a type without devices writes no key, and a key
 * that is absent means none.
 */
#ifndef KVMLU_VMM_UPGRADE_DEVICES_H
#define KVMLU_VMM_UPGRADE_DEVICES_H

#include <json-c/json.h>

#include "vmm/device_config.h"

struct vm_virtio;

/*
 * The old process: every device of vv into o, its fds appended at
 * fds[*nr_fds] (room for max_fds). -E2BIG when they do not fit.
 */
int upgrade_devices_write(const struct vm_virtio *vv, json_object *o, int *fds,
			  unsigned int *nr_fds, unsigned int max_fds);

/*
 * The new process: the devices of the untrusted message o into list (*nr
 * entries, room for max), in slot order, each with the fd it names among
 * the nr_fds received (borrowed: the caller closes them). -EPROTO with
 * why in err.
 */
int upgrade_devices_read(json_object *o, const int *fds, unsigned int nr_fds,
			 struct vm_device_config *list, unsigned int *nr, unsigned int max,
			 char *err, size_t errlen);

#endif /* KVMLU_VMM_UPGRADE_DEVICES_H */
