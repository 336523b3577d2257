/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-blk as a device of the VM (vmm/device.h): the type the VM
 * creates its disks with (one per --disk, in order, from the VM's
 * config), and what `status` shows of one.
 */
#ifndef KVMLU_VMM_DEVICES_VIRTIO_BLK_DEVICE_H
#define KVMLU_VMM_DEVICES_VIRTIO_BLK_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/device.h"
#include "vmm/devices/virtio_blk.h"

extern const struct vm_device_type virtio_blk_type;

/* The disk d is; d must be of virtio_blk_type. */
struct virtio_blk *virtio_blk_of(struct vm_device *d);

/* One disk as `status` reports it. */
struct virtio_blk_info {
	const char *id, *path;	/* the disk's own strings, valid while the VM lives */
	uint64_t dev, ino, size;	/* what identifies it (st_dev, st_ino, bytes told the guest) */
	struct virtio_blk_now now;	/* the file as it is now */
	bool readonly;
	uint32_t status;	/* virtio device status the driver set */
	uint64_t requests, io_errors;
	bool device_error;
	char error[160];	/* why, when device_error */
};

/* Safe while its I/O thread runs. */
void virtio_blk_info(struct virtio_blk *b, struct virtio_blk_info *out);

#endif /* KVMLU_VMM_DEVICES_VIRTIO_BLK_DEVICE_H */
