// SPDX-License-Identifier: GPL-2.0
/* FADT (see fadt.h). */
#include <string.h>

#include "vmm/acpi/acpi_sdt.h"
#include "vmm/acpi/fadt.h"

#define GAS_SPACE_SYSTEM_IO	1
#define GAS_ACCESS_BYTE		1

/* Generic Address Structure (ACPI 6.5, 5.2.3.2): 12 bytes. */
static void fadt_gas(uint8_t *p, uint8_t space, uint8_t bits, uint8_t access, uint64_t addr)
{
	p[0] = space;
	p[1] = bits;
	p[2] = 0;		/* bit offset */
	p[3] = access;
	le_put64(p + 4, addr);
}

void fadt_write(uint8_t *buf, uint64_t dsdt_gpa, bool msi)
{
	acpi_sdt_header(buf, "FACP", FADT_SIZE, FADT_REVISION);
	/* Everything not set here is 0: no FACS, SCI, SMI port, PM blocks. */
	memset(buf + ACPI_SDT_HEADER_SIZE, 0, FADT_SIZE - ACPI_SDT_HEADER_SIZE);
	/* Both forms of the DSDT pointer, equal, so no reader has to choose. */
	le_put32(buf + FADT_DSDT_OFF, (uint32_t)dsdt_gpa);
	le_put64(buf + FADT_X_DSDT_OFF, dsdt_gpa);
	/* Linux turns MSI off for good when this says so: only a VM with PCI says it works. */
	le_put16(buf + FADT_IAPC_BOOT_ARCH_OFF,
		   FADT_IAPC_8042 | FADT_IAPC_VGA_NOT_PRESENT |
		   (msi ? 0 : FADT_IAPC_MSI_NOT_SUPPORTED) |
		   FADT_IAPC_PCIE_ASPM_CONTROLS | FADT_IAPC_CMOS_RTC_NOT_PRESENT);
	le_put32(buf + FADT_FLAGS_OFF, FADT_F_HW_REDUCED_ACPI | FADT_F_PWR_BUTTON |
		   FADT_F_SLP_BUTTON | FADT_F_RESET_REG_SUP);
	fadt_gas(buf + FADT_RESET_REG_OFF, GAS_SPACE_SYSTEM_IO, 8, GAS_ACCESS_BYTE,
		 FADT_RESET_PORT);
	buf[FADT_RESET_VALUE_OFF] = FADT_RESET_VALUE;
	buf[FADT_MINOR_OFF] = FADT_MINOR_REVISION;
	memcpy(buf + FADT_HYPERVISOR_OFF, "KVMLUVMM", 8);
	acpi_sdt_seal(buf);
}
