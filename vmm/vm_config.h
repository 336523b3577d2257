/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a VM is made from (vm_create(), vm.h): its size, its RAM files,
 * and its devices' options as the command line or the state gave them.
 * Apart from vm.h so a device type can read its own options out of it
 * (struct vm_device_type's nr_config and create, vmm/device.h) without
 * knowing the VM.
 */
#ifndef KVMLU_VMM_VM_CONFIG_H
#define KVMLU_VMM_VM_CONFIG_H

#include "guestmem/guestmem.h"
#include "vmm/device_config.h"

/* virtio devices of one VM, all types together: GSIs 16..23, the IOAPIC's last pins. */
#define VM_MAX_DEVICES	8u

/* How the guest reaches its virtio devices (docs/devices.md). */
enum vm_virtio_transport {
	VM_VIRTIO_TRANSPORT_MMIO = 0,	/* virtio-mmio windows, listed in the DSDT */
	VM_VIRTIO_TRANSPORT_PCI = 1,	/* virtio-pci functions with MSI-X on a host bridge */
};

struct vm_config {
	const char *name;
	uint64_t ram_size;
	unsigned int nr_vcpus;
	enum guestmem_backend backend;
	int serial_fd;		/* UART output; not owned by the VM */
	/*
	 * Live upgrade (vmm/upgrade/incoming.c): RAM files to take over, one per
	 * region of guestmem_layout(ram_size), instead of creating new ones
	 * (memfd backend only). NULL: create. The VM owns them on success.
	 */
	const int *adopt_fds;
	/* virtio-blk disks, in slot order (vm_virtio.h); opened by vm_create(). */
	const struct virtio_blk_spec *disks;
	unsigned int nr_disks;
	/*
	 * Live upgrade: the old process's open disks, one per entry of disks,
	 * with the identity it recorded; the VM uses a dup of each (the caller
	 * keeps its fds) instead of opening the path. NULL: open.
	 */
	const int *adopt_disk_fds;
	const struct virtio_blk_identity *adopt_disk_idents;
	/*
	 * virtio-net NICs, in the slots after the disks (vm_virtio.h); their
	 * taps opened (created if missing) by vm_create(). A spec without a
	 * MAC gets a generated one, which the device then keeps.
	 */
	const struct virtio_net_spec *nets;
	unsigned int nr_nets;
	/* Live upgrade: the old process's tap fds, one per net; the VM uses dups. NULL: open. */
	const int *adopt_net_fds;
	enum vm_virtio_transport transport;
};

#endif /* KVMLU_VMM_VM_CONFIG_H */
