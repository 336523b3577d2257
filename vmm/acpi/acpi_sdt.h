/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parts every ACPI table shares: the 36-byte system description
 * table header (ACPI 6.5, 5.2.6) and its byte checksum. ACPI is
 * little-endian whatever the host: fields are stored with le_put*
 * (common/le_bytes.h).
 *
 * Lifecycle: used while tables are written at first boot (acpi_tables.c).
 */
#ifndef KVMLU_VMM_ACPI_SDT_H
#define KVMLU_VMM_ACPI_SDT_H

#include <stddef.h>
#include <stdint.h>

#include "common/le_bytes.h"

#define ACPI_SDT_HEADER_SIZE	36u
#define ACPI_SDT_LENGTH_OFF	4u
#define ACPI_SDT_CHECKSUM_OFF	9u

/* Who wrote the tables: OEM ID (6), OEM table ID (8), creator ID (4). */
#define ACPI_OEM_ID		"KVMLU "
#define ACPI_OEM_TABLE_ID	"KVMLUVMM"
#define ACPI_CREATOR_ID		"KVLU"
#define ACPI_OEM_REVISION	1u
#define ACPI_CREATOR_REVISION	1u

/* The byte that makes len bytes at p sum to zero (mod 256). */
uint8_t acpi_checksum(const void *p, size_t len);

/*
 * Fill the header at t for a table of len bytes (header included) with
 * this signature and revision; the checksum field is left 0. Call
 * acpi_sdt_seal() once the body is written.
 */
void acpi_sdt_header(uint8_t *t, const char sig[4], uint32_t len, uint8_t revision);

/* Set the checksum so the whole table (its header's length) sums to 0. */
void acpi_sdt_seal(uint8_t *t);

#endif /* KVMLU_VMM_ACPI_SDT_H */
