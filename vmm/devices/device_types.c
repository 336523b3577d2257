// SPDX-License-Identifier: GPL-2.0
/*
 * Every device type the VM knows (vmm/device.h), one line each. The
 * order is the slot order: a VM's disks take the first virtio-mmio
 * slots, its NICs the ones after (docs/devices.md), and a state lists
 * its device nodes in that order. A new type adds its line here.
 */
#include <stddef.h>

#include "vmm/devices/virtio_blk_device.h"
#include "vmm/devices/virtio_net_device.h"

const struct vm_device_type *const vm_device_types[] = {
	&virtio_blk_type,
	&virtio_net_type,
	NULL,
};
