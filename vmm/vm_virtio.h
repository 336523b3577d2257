/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VM's virtio-mmio devices: where they sit in the guest's physical
 * address space, which GSI each interrupts on, their wiring into KVM,
 * and the walks over them (struct vm_virtio, vm->virtio) that every
 * lifecycle step of the VM makes (each device's own ops, vmm/device.h).
 * Nothing here names a device type: the types are in
 * vmm/devices/device_types.c. Nothing here knows struct vm either: vm.c
 * hands over its fd, bus and RAM.
 *
 * Layout (docs/devices.md): device i (the i-th --disk, then the --net
 * NICs after the last disk: the order of vm_device_types, as the VM's
 * list of device configs has them) has the 4 KiB
 * register window at VM_VIRTIO_MMIO_BASE + i * VM_VIRTIO_MMIO_SIZE and
 * interrupts on GSI VM_VIRTIO_GSI_BASE + i, an IOAPIC pin (16..23) that
 * no ISA device or the PIC shares. The window lies in the hole below
 * 4 GiB that guest RAM never uses (guestmem: RAM below 3 GiB), under the
 * IOAPIC (0xfec00000), the LAPIC (0xfee00000) and the TSS pages
 * (0xfffbc000). The guest learns of the devices from ACPI: whoever
 * builds the DSDT takes vm_virtio_mmio_devices() as its list, one
 * "LNRO0005" device each with Memory32Fixed(base, size) and an
 * edge-triggered, active-high, exclusive Interrupt(gsi) (KVM_IRQFD
 * without a resample fd is a pulse).
 *
 * Lifecycle: vm_virtio_create() inside vm_create() (after RAM: each
 * device created by its type, its MMIO window on the bus, KVM_IOEVENTFD
 * on each QueueNotify, KVM_IRQFD on its GSI); vm_virtio_start() starts
 * the device threads with the vCPUs; vm_virtio_quiesce() at every pause,
 * once the vCPUs are parked, vm_virtio_resume() when they run again;
 * vm_virtio_destroy() after the vCPUs are joined and before guest RAM is
 * unmapped (a device thread writes into it).
 */
#ifndef KVMLU_VMM_VM_VIRTIO_H
#define KVMLU_VMM_VM_VIRTIO_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/device.h"
#include "vmm/vm_config.h"

#define VM_VIRTIO_MMIO_BASE	0xd0000000ULL
#define VM_VIRTIO_MMIO_SIZE	0x1000u
#define VM_VIRTIO_GSI_BASE	16u
#define VM_VIRTIO_MAX_DEVICES	VM_MAX_DEVICES
/*
 * --virtio-transport pci: slot i is PCI device i + 1 on bus 0 (device 0
 * is the host bridge), its BAR0 (VIRTIO_PCI_BAR_SIZE) at
 * VM_VIRTIO_PCI_BAR_BASE + i * VIRTIO_PCI_BAR_SIZE, inside the host
 * bridge's memory window [VM_VIRTIO_PCI_WINDOW_BASE, + _SIZE) the DSDT
 * gives the guest. Interrupts are MSI-X (KVM_SIGNAL_MSI): no GSI.
 */
#define VM_VIRTIO_PCI_WINDOW_BASE	0xd0000000ULL
#define VM_VIRTIO_PCI_WINDOW_SIZE	0x10000000ULL
#define VM_VIRTIO_PCI_BAR_BASE		VM_VIRTIO_PCI_WINDOW_BASE
#define VM_VIRTIO_PCI_BAR_SIZE		0x8000u	/* VIRTIO_PCI_BAR_SIZE */

struct guestmem;
struct io_bus;
struct vm_virtio_pci;

/* The VM's virtio devices (vmm/device.h), in slot order: devs[i] is in slot i. In struct vm. */
struct vm_virtio {
	struct vm_device *devs[VM_MAX_DEVICES];
	unsigned int nr_devs;
	enum vm_virtio_transport transport;
	struct vm_virtio_pci *pci;	/* transport pci: the bus and functions (virtio_pci_vm.h) */
};

/*
 * The virtio-pci transport's part of the VM, in the virtio layer
 * (vmm/virtio/virtio_pci_vm.c), so that the VM core names none of it:
 * create (the host bridge; refused without KVM_SIGNAL_MSI), wire (device
 * d as a PCI function: config space, BAR0 on the bus, notify as
 * ioeventfds, MSIs by KVM_SIGNAL_MSI), attach (the host bridge's ports,
 * once every device is wired), destroy (functions and bridge; before the
 * devices, whose interrupts the functions hold).
 */
struct vm_virtio_pci_ops {
	int (*create)(struct vm_virtio *vv, int vm_fd, char *err, size_t errlen);
	int (*wire)(struct vm_virtio *vv, struct io_bus *bus, struct vm_device *d, char *err,
		    size_t errlen);
	int (*attach)(struct vm_virtio *vv, struct io_bus *bus, char *err, size_t errlen);
	void (*destroy)(struct vm_virtio *vv);
};
extern const struct vm_virtio_pci_ops vm_virtio_pci_ops;

/* KVM_IOEVENTFD: a write of datamatch (len bytes) at MMIO addr signals fd in the kernel. */
int vm_virtio_ioeventfd(int vm_fd, uint64_t addr, uint32_t len, uint64_t datamatch, int fd,
			char *err, size_t errlen);

/* The BAR0 address of slot i under --virtio-transport pci. */
uint64_t vm_virtio_pci_bar(unsigned int i);

/* One device as an ACPI table builder needs it (struct acpi_mmio_device). */
struct vm_virtio_slot {
	uint64_t base;
	uint32_t size;
	uint32_t gsi;
};

/* Slot i of the layout above. */
struct vm_virtio_slot vm_virtio_slot(unsigned int i);

/*
 * The VM's virtio-mmio devices in slot order, at most max of them into
 * out; returns how many the VM has (0 with the pci transport).
 */
unsigned int vm_virtio_mmio_devices(const struct vm_virtio *vv, struct vm_virtio_slot *out,
				    unsigned int max);

/* The i-th device of type t (i < vm_virtio_count(vm, t)), or NULL. */
struct vm_device *vm_virtio_find(const struct vm_virtio *vv, const struct vm_device_type *t,
				 unsigned int i);
unsigned int vm_virtio_count(const struct vm_virtio *vv, const struct vm_device_type *t);

/*
 * The devices of cfg->devs, each by its type's create, in slot order (by
 * type in the order of vm_device_types, then in the list's order),
 * opened from its spec or adopting its fd (vm_config.h).
 */
int vm_virtio_create(struct vm_virtio *vv, const struct vm_config *cfg, int vm_fd,
		     struct io_bus *bus, const struct guestmem *mem, char *err, size_t errlen);
int vm_virtio_start(struct vm_virtio *vv, char *err, size_t errlen);
void vm_virtio_quiesce(struct vm_virtio *vv);
/* What every device wrote made durable (its type's sync), for prepare-update. */
int vm_virtio_sync(struct vm_virtio *vv, char *err, size_t errlen);
/* After a pause: the devices move again. */
void vm_virtio_resume(struct vm_virtio *vv);
void vm_virtio_destroy(struct vm_virtio *vv);

#endif /* KVMLU_VMM_VM_VIRTIO_H */
