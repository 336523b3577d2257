/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MADT ("APIC"): how many CPUs the guest has and where its interrupt
 * controllers are. One Processor Local APIC entry per vCPU (ACPI UID and
 * APIC id = vCPU index, enabled: what cpuid.c puts in CPUID 1 and 0xb),
 * the in-kernel IOAPIC (id ncpus, 0xfec00000, GSIs 0..23), and LINT1 of
 * every CPU as NMI. The same machine the MP table (boot/mptable.h)
 * describes to kernels without ACPI.
 *
 * No Interrupt Source Override: KVM's default routing, which kvmlu keeps,
 * wires ISA IRQ n to IOAPIC pin n (GSI n), the in-kernel PIT included
 * (GSI 0), so the identity mapping ACPI assumes without overrides is the
 * true one. PC firmware's IRQ0 -> GSI 2 override would be wrong here.
 *
 * Lifecycle: written once at first boot by acpi_tables_write().
 */
#ifndef KVMLU_VMM_ACPI_MADT_H
#define KVMLU_VMM_ACPI_MADT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/acpi/acpi_machine.h"

#define MADT_LAPIC_ADDR		0xfee00000u
#define MADT_IOAPIC_ADDR	0xfec00000u

/* Entry types and sizes (ACPI 6.5, 5.2.12). */
#define MADT_TYPE_LAPIC		0
#define MADT_TYPE_IOAPIC	1
#define MADT_TYPE_LAPIC_NMI	4
#define MADT_LAPIC_SIZE		8u
#define MADT_IOAPIC_SIZE	12u
#define MADT_LAPIC_NMI_SIZE	6u
#define MADT_FIXED_SIZE		44u	/* header, LAPIC address, flags */
#define MADT_LAPIC_ENABLED	0x1u

/* Bytes of the MADT for ncpus. */
size_t madt_size(unsigned int ncpus);

/* Write it at buf (madt_size() bytes). m must have passed acpi_machine_check(). */
void madt_write(uint8_t *buf, const struct acpi_machine *m);

#endif /* KVMLU_VMM_ACPI_MADT_H */
