/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The virtio-pci transport of one VM (--virtio-transport pci): the host
 * bridge on conf1 and a virtio-pci function in front of each device,
 * made through vm_virtio_pci_ops (vmm/vm_virtio.h) while the VM is built,
 * freed by it after the vCPUs are joined. MSIs go to the VM fd with
 * KVM_SIGNAL_MSI, from whichever device thread completes a request.
 */
#ifndef KVMLU_VMM_VIRTIO_VIRTIO_PCI_VM_H
#define KVMLU_VMM_VIRTIO_VIRTIO_PCI_VM_H

#include "vmm/pci/pci_host.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/vm_virtio.h"

struct vm_virtio_pci {
	int vm_fd;
	struct pci_host host;
	struct virtio_pci *fns[VM_MAX_DEVICES];	/* slot i's function */
};

_Static_assert(VM_VIRTIO_PCI_BAR_SIZE == VIRTIO_PCI_BAR_SIZE, "two BAR sizes");
_Static_assert(VM_VIRTIO_MAX_DEVICES < PCI_HOST_MAX_DEVICES, "more devices than PCI slots");

/* Slot i's function, or NULL (not a pci VM, no such slot). */
struct virtio_pci *vm_virtio_pci_fn(const struct vm_virtio *vv, unsigned int slot);

#endif /* KVMLU_VMM_VIRTIO_VIRTIO_PCI_VM_H */
