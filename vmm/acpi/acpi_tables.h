/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's ACPI tables, laid out in one block of guest memory: the
 * RSDP first (so the block's start is the address a guest is given or
 * finds by scanning), then XSDT -> FADT -> DSDT, and XSDT -> MADT.
 * Linux uses them to bring up every vCPU (MADT), to route the legacy
 * devices' IRQs and to find virtio-mmio devices (DSDT). fadt.h says why
 * the FADT is hardware-reduced, madt.h why there is no IRQ override.
 *
 * Lifecycle: acpi_machine_check() and acpi_tables_size() at planning, so
 * a machine that cannot be described is refused before guest RAM is
 * touched; acpi_tables_write() once at first boot. The tables are plain
 * bytes in guest RAM: a live upgrade or a host kexec keeps them with the
 * rest of RAM, and a restored VM never rewrites them (nothing in the
 * state FDT refers to them).
 */
#ifndef KVMLU_VMM_ACPI_TABLES_H
#define KVMLU_VMM_ACPI_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/acpi/acpi_machine.h"

#define ACPI_RSDP_SIZE		36u
#define ACPI_RSDP_SIGNATURE	"RSD PTR "
/* Offsets of the tables in the block (each 16-byte aligned). */
#define ACPI_TABLE_ALIGN	16u

/*
 * Refuse what the tables cannot describe, naming the value: a CPU count
 * outside 1..ACPI_MAX_CPUS, too many devices, a device window that is
 * empty, above 4 GiB, on the APICs or on another device, a GSI outside
 * ACPI_MMIO_GSI_MIN..MAX or used twice. -EINVAL.
 */
int acpi_machine_check(const struct acpi_machine *m, char *err, size_t errlen);

/* An upper bound of the bytes acpi_tables_write() needs (m checked). */
size_t acpi_tables_size(const struct acpi_machine *m);

/*
 * Write the tables into buf (len bytes; guest address gpa, 16-byte
 * aligned and below 4 GiB, since the RSDP and FADT carry 32-bit copies
 * of the addresses). The RSDP is at gpa. -EINVAL for a machine or
 * address refused, -ENOSPC if len is too small; nothing is promised
 * about buf's contents after an error.
 */
int acpi_tables_write(void *buf, size_t len, uint64_t gpa, const struct acpi_machine *m,
		      char *err, size_t errlen);

#endif /* KVMLU_VMM_ACPI_TABLES_H */
