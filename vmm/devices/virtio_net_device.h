/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-net as a device of the VM (vmm/device.h): the type the VM
 * creates its NICs with (one per --net, in order, from the VM's config),
 * and what `status` shows of one.
 */
#ifndef KVMLU_VMM_DEVICES_VIRTIO_NET_DEVICE_H
#define KVMLU_VMM_DEVICES_VIRTIO_NET_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/device.h"
#include "vmm/devices/virtio_net.h"

extern const struct vm_device_type virtio_net_type;

/* The NIC d is; d must be of virtio_net_type. */
struct virtio_net *virtio_net_of(struct vm_device *d);

/* One NIC as `status` reports it. */
struct virtio_net_info {
	const char *tap, *bridge;	/* the device's own strings */
	char mac[18];
	uint32_t status;
	uint64_t rx_packets, rx_bytes, rx_dropped, tx_packets, tx_bytes, tx_dropped;
	bool device_error;
	char error[160];
};

/* Safe while its thread runs. */
void virtio_net_info(struct virtio_net *n, struct virtio_net_info *out);

#endif /* KVMLU_VMM_DEVICES_VIRTIO_NET_DEVICE_H */
