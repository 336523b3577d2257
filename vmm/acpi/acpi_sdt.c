// SPDX-License-Identifier: GPL-2.0
/* ACPI table header and checksum (see acpi_sdt.h). */
#include <string.h>

#include "vmm/acpi/acpi_sdt.h"

uint8_t acpi_checksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum = (uint8_t)(sum + *b++);
	return (uint8_t)-sum;
}

void acpi_sdt_header(uint8_t *t, const char sig[4], uint32_t len, uint8_t revision)
{
	memset(t, 0, ACPI_SDT_HEADER_SIZE);
	memcpy(t, sig, 4);
	le_put32(t + ACPI_SDT_LENGTH_OFF, len);
	t[8] = revision;
	memcpy(t + 10, ACPI_OEM_ID, 6);
	memcpy(t + 16, ACPI_OEM_TABLE_ID, 8);
	le_put32(t + 24, ACPI_OEM_REVISION);
	memcpy(t + 28, ACPI_CREATOR_ID, 4);
	le_put32(t + 32, ACPI_CREATOR_REVISION);
}

void acpi_sdt_seal(uint8_t *t)
{
	uint32_t len = (uint32_t)t[4] | (uint32_t)t[5] << 8 | (uint32_t)t[6] << 16 |
		       (uint32_t)t[7] << 24;

	t[ACPI_SDT_CHECKSUM_OFF] = 0;
	t[ACPI_SDT_CHECKSUM_OFF] = acpi_checksum(t, len);
}
