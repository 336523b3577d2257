/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VM's virtio-mmio devices: where they sit in the guest's physical
 * address space, which GSI each interrupts on, and their wiring into KVM.
 *
 * Layout (docs/devices.md): device i (the i-th --disk, then the --net
 * NICs after the last disk) has the 4 KiB
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
 * Lifecycle: vm_virtio_create() inside vm_create() (after RAM, the disks
 * opened, MMIO windows on the bus, KVM_IOEVENTFD on each QueueNotify,
 * KVM_IRQFD on each GSI); vm_virtio_start() starts the I/O threads with
 * the vCPUs; vm_virtio_quiesce() at every pause, once the vCPUs are
 * parked; vm_virtio_destroy() after the vCPUs are joined and before
 * guest RAM is unmapped (an I/O thread writes into it).
 */
#ifndef KVMLU_VMM_VM_VIRTIO_H
#define KVMLU_VMM_VM_VIRTIO_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/devices/virtio_blk.h"
#include "vmm/devices/virtio_net.h"

#define VM_VIRTIO_MMIO_BASE	0xd0000000ULL
#define VM_VIRTIO_MMIO_SIZE	0x1000u
#define VM_VIRTIO_GSI_BASE	16u
#define VM_VIRTIO_MAX_DEVICES	8u	/* GSIs 16..23: the IOAPIC's last pins */

struct vm;

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
 * out; returns how many the VM has.
 */
unsigned int vm_virtio_mmio_devices(const struct vm *vm, struct vm_virtio_slot *out,
				    unsigned int max);

struct virtio_blk_state;

/*
 * State of every device of a paused (so quiesced) VM into out[0..*nr);
 * -E2BIG if the VM has more than max.
 */
int vm_virtio_capture(struct vm *vm, struct virtio_blk_state *out, unsigned int max,
		      uint32_t *nr, char *err, size_t errlen);

/*
 * Saved device state into the VM's devices, which must be the same disks
 * in the same slots (checked: count, identity, options).
 */
int vm_virtio_restore(struct vm *vm, const struct virtio_blk_state *in, uint32_t nr,
		      char *err, size_t errlen);

struct vm_config;

/* One disk as `status` reports it. */
struct vm_virtio_disk_info {
	struct vm_virtio_slot slot;
	const char *id, *path;	/* the disk's own strings, valid while the VM lives */
	uint64_t dev, ino, size;	/* what identifies it (st_dev, st_ino, bytes told the guest) */
	struct virtio_blk_now now;	/* the file as it is now */
	bool readonly;
	uint32_t status;	/* virtio device status the driver set */
	uint64_t requests, io_errors;
	bool device_error;
	char error[160];	/* why, when device_error */
};

/* Disk i of the VM (i < vm->nr_disks); safe while its I/O thread runs. */
void vm_virtio_disk_info(struct vm *vm, unsigned int i, struct vm_virtio_disk_info *out);

struct virtio_net_state;

/* The NICs of a paused VM, as vm_virtio_capture() the disks. */
int vm_virtio_net_capture(struct vm *vm, struct virtio_net_state *out, unsigned int max,
			  uint32_t *nr, char *err, size_t errlen);
/* Saved NIC state into the VM's NICs: the same taps, bridges and MACs in the same slots. */
int vm_virtio_net_restore(struct vm *vm, const struct virtio_net_state *in, uint32_t nr,
			  char *err, size_t errlen);

/* One NIC as `status` reports it. */
struct vm_virtio_net_info {
	struct vm_virtio_slot slot;
	const char *tap, *bridge;	/* the device's own strings */
	char mac[18];
	uint32_t status;
	uint64_t rx_packets, rx_bytes, rx_dropped, tx_packets, tx_bytes, tx_dropped;
	bool device_error;
	char error[160];
};

/* NIC i of the VM (i < vm->nr_nets); safe while its thread runs. */
void vm_virtio_net_info(struct vm *vm, unsigned int i, struct vm_virtio_net_info *out);

/* cfg->disks, opened by path or adopted (cfg->adopt_disk_fds, see vm.h). */
int vm_virtio_create(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen);
int vm_virtio_start(struct vm *vm, char *err, size_t errlen);
void vm_virtio_quiesce(struct vm *vm);
/* Every disk's writes durable (virtio_blk_sync), for prepare-update. */
int vm_virtio_sync(struct vm *vm, char *err, size_t errlen);
/* After a pause: the NICs move frames again (disks need nothing). */
void vm_virtio_resume(struct vm *vm);
void vm_virtio_destroy(struct vm *vm);

#endif /* KVMLU_VMM_VM_VIRTIO_H */
