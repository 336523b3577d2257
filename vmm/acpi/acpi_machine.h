/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a guest's ACPI tables describe: the machine, as the VMM built it.
 * The vCPUs (one Local APIC each, ids 0..ncpus-1), the in-kernel IOAPIC,
 * the fixed legacy devices every kvmlu VM has (COM1, the i8042), and the
 * virtio-mmio devices a VM was started with. The boot path fills one in
 * and hands it to acpi_tables_write() (acpi_tables.h).
 *
 * Lifecycle: read once, at first boot, while the tables are written into
 * guest RAM. A restored VM keeps its tables in its preserved RAM and never
 * needs this again.
 */
#ifndef KVMLU_VMM_ACPI_MACHINE_H
#define KVMLU_VMM_ACPI_MACHINE_H

#include <stddef.h>
#include <stdint.h>

/* Local APIC ids are 8 bits in the MADT entries we write, and the IOAPIC
 * takes the id after the last CPU (as in the MP table). */
#define ACPI_MAX_CPUS		254u
/* KVM's in-kernel IOAPIC has 24 pins. GSI 0 is the PIT, 1 the i8042,
 * 2 the 8259 cascade, 4 COM1; devices take 5 and up (as Firecracker). */
#define ACPI_MMIO_GSI_MIN	5u
#define ACPI_MMIO_GSI_MAX	23u
/* Each device has a GSI of its own (edge-triggered, not shared), which
 * also bounds the DSDT; AML names V000..V012. */
#define ACPI_MAX_MMIO_DEVICES	(ACPI_MMIO_GSI_MAX - ACPI_MMIO_GSI_MIN + 1)

/*
 * One virtio-mmio transport: in the DSDT as a device with _HID "LNRO0005"
 * (what Linux's virtio_mmio driver matches) and _CRS Memory32Fixed(base,
 * size) + Interrupt(edge, active high, exclusive) { gsi }. The window must
 * lie below 4 GiB (Memory32Fixed).
 */
struct acpi_mmio_device {
	uint64_t base;
	uint32_t size;
	uint32_t gsi;
};

struct acpi_machine {
	unsigned int ncpus;			/* 1..ACPI_MAX_CPUS */
	const struct acpi_mmio_device *mmio;	/* NULL when n_mmio is 0 */
	size_t n_mmio;				/* 0..ACPI_MAX_MMIO_DEVICES */
	/*
	 * A PCI host bridge on conf1 ports 0xcf8-0xcff (virtio-pci), in the
	 * DSDT as PNP0A03 for bus 0 with this memory window (below 4 GiB);
	 * and the FADT then says MSI works. Size 0: no PCI.
	 */
	uint64_t pci_window_base;
	uint32_t pci_window_size;
};

#endif /* KVMLU_VMM_ACPI_MACHINE_H */
