/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A virtio-mmio device's node in the state FDT (docs/state-format.md,
 * /devices/<kind>@<base>): the transport's registers, config bytes and
 * one queue@N subnode per queue, the same for every virtio device type.
 * A device type's encode and decode (vmm/device.h) write and read its
 * own properties, then call these for the transport.
 */
#ifndef KVMLU_VMM_VIRTIO_MMIO_NODE_H
#define KVMLU_VMM_VIRTIO_MMIO_NODE_H

#include "vmm/state_node.h"
#include "vmm/virtio/virtio_mmio_state.h"

#define VIRTIO_MMIO_NODE_COMPAT_QUEUE	"kvmlu,virtqueue-split-v1"
/* The subnode "pci" of a device on --virtio-transport pci (format 2.2). */
#define VIRTIO_MMIO_NODE_COMPAT_PCI	"kvmlu,virtio-pci-function-v1"

/* The transport's properties and queue subnodes into the open node. */
int virtio_mmio_node_encode(void *fdt, const struct virtio_mmio_state *t);

/* The same out of node n: sizes and counts checked, values left to validate. */
int virtio_mmio_node_decode(const struct state_node *n, struct virtio_mmio_state *t);

#endif /* KVMLU_VMM_VIRTIO_MMIO_NODE_H */
