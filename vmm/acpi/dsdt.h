/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DSDT: the devices a guest cannot find by probing, in AML under
 * \_SB_. COM1 (PNP0501, ports 0x3f8-0x3ff, IRQ 4) and the i8042 keyboard
 * controller (PNP0303, ports 0x60 and 0x64, IRQ 1) are in every kvmlu VM;
 * then one LNRO0005 device (virtio-mmio) per acpi_machine.mmio entry,
 * named V000, V001, ... with _UID its index.
 *
 * Why the legacy devices are listed at all: with the hardware-reduced
 * FADT (fadt.h) Linux has no 8259 and sets up no ISA IRQ itself; an
 * interrupt is routed only for a device that ACPI describes, so the
 * serial port and the i8042 get their IRQs through these entries.
 *
 * Lifecycle: written once at first boot by acpi_tables_write().
 */
#ifndef KVMLU_VMM_ACPI_DSDT_H
#define KVMLU_VMM_ACPI_DSDT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/acpi/acpi_machine.h"

#define DSDT_COM1_PORT	0x3f8
#define DSDT_COM1_IRQ	4
#define DSDT_I8042_DATA	0x60
#define DSDT_I8042_CMD	0x64
#define DSDT_I8042_IRQ	1

/* Write the DSDT (header included) into buf; its length in *len.
 * -ENOSPC if cap is too small. m must have passed acpi_machine_check(). */
int dsdt_write(uint8_t *buf, size_t cap, const struct acpi_machine *m, size_t *len);

#endif /* KVMLU_VMM_ACPI_DSDT_H */
