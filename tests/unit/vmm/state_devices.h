/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tests' short names for the i-th disk or NIC of a struct state_vm's
 * device list (state_vm_device()): NULL when it has fewer.
 */
#ifndef KVMLU_TESTS_STATE_DEVICES_H
#define KVMLU_TESTS_STATE_DEVICES_H

#include "vmm/devices/virtio_blk_device.h"
#include "vmm/devices/virtio_net_device.h"
#include "vmm/state/state_vm.h"

#define DISK(s, i) ((struct virtio_blk_state *)state_vm_device((s), &virtio_blk_type, (i)))
#define NET(s, i) ((struct virtio_net_state *)state_vm_device((s), &virtio_net_type, (i)))

#endif /* KVMLU_TESTS_STATE_DEVICES_H */
