/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FADT ("FACP"), revision 6 (ACPI 6.5), hardware-reduced, as
 * Firecracker writes it: no PM1 event/control blocks, no PM timer, no
 * SCI, no FACS, so no port a VMM would have to emulate (and carry in the
 * state FDT across upgrades) just for ACPI. It points at the DSDT.
 *
 * What hardware-reduced changes in a Linux guest (arch/x86 acpi boot):
 * it skips the 8259 and the PIT as timer (legacy_pic = null, no
 * timer_init). KVM's LAPIC timer (TSC deadline) and kvmclock are what a
 * Linux guest uses once up anyway, and the IO-APIC timer check that
 * needed `no_timer_check` under TCG is no longer run. ISA IRQs are then
 * routed only for devices the DSDT describes: COM1 and the i8042 are
 * there (dsdt.h). The in-kernel PIT and 8259 still exist and are still
 * saved and restored; the guest just does not program them.
 *
 * IA-PC boot flags say what is and is not on the board: an 8042 (ours),
 * no VGA, no MSI, no PCIe ASPM, no CMOS RTC (kvmlu emulates none; a
 * guest's wall clock comes from kvmclock). The reset register is port
 * 0xcf9, value 6, which devices/reset_port.c turns into "guest reset",
 * so a plain `reboot` without reboot=k ends the VM too.
 *
 * Lifecycle: written once at first boot by acpi_tables_write().
 */
#ifndef KVMLU_VMM_ACPI_FADT_H
#define KVMLU_VMM_ACPI_FADT_H

#include <stdbool.h>
#include <stdint.h>

#define FADT_SIZE		276u
#define FADT_REVISION		6
#define FADT_MINOR_REVISION	5

/* Field offsets (ACPI 6.5, table 5.9). */
#define FADT_DSDT_OFF		40u
#define FADT_IAPC_BOOT_ARCH_OFF	109u
#define FADT_FLAGS_OFF		112u
#define FADT_RESET_REG_OFF	116u
#define FADT_RESET_VALUE_OFF	128u
#define FADT_MINOR_OFF		131u
#define FADT_X_DSDT_OFF		140u
#define FADT_HYPERVISOR_OFF	268u

/* Flags. */
#define FADT_F_PWR_BUTTON	(1u << 4)	/* no fixed-feature power button */
#define FADT_F_SLP_BUTTON	(1u << 5)	/* no fixed-feature sleep button */
#define FADT_F_RESET_REG_SUP	(1u << 10)
#define FADT_F_HW_REDUCED_ACPI	(1u << 20)

/* IA-PC boot architecture flags. */
#define FADT_IAPC_8042			(1u << 1)
#define FADT_IAPC_VGA_NOT_PRESENT	(1u << 2)
#define FADT_IAPC_MSI_NOT_SUPPORTED	(1u << 3)
#define FADT_IAPC_PCIE_ASPM_CONTROLS	(1u << 4)
#define FADT_IAPC_CMOS_RTC_NOT_PRESENT	(1u << 5)

#define FADT_RESET_PORT		0xcf9
#define FADT_RESET_VALUE	0x06	/* CPU reset (bit 2) with system reset (bit 1) */

/* Write the FADT at buf (FADT_SIZE bytes), pointing at the DSDT at dsdt_gpa. */
void fadt_write(uint8_t *buf, uint64_t dsdt_gpa, bool msi);

#endif /* KVMLU_VMM_ACPI_FADT_H */
