/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a VM is made from (vm_create(), vm.h): its size, its RAM files,
 * and its devices' configs as the command line, an upgrade or a state
 * gave them. Apart from vm.h so a device type's create (vmm/device.h)
 * can read the configs without knowing the VM.
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
	/*
	 * The virtio devices, all types in one list (vmm/device_config.h):
	 * each made by its type's create, opened from its spec or adopting a
	 * dup of its fd (the caller keeps its fds). Slot i is the i-th of the
	 * list in slot order, which vm_device_config_add() keeps: grouped by
	 * type in the order of vm_device_types, then in the list's order.
	 */
	const struct vm_device_config *devs;
	unsigned int nr_devs;
	enum vm_virtio_transport transport;
};

#endif /* KVMLU_VMM_VM_CONFIG_H */
