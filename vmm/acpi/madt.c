// SPDX-License-Identifier: GPL-2.0
/* MADT (see madt.h). */
#include "vmm/acpi/acpi_sdt.h"
#include "vmm/acpi/madt.h"

/* MADT revision of ACPI 6.2-6.4; nothing here needs a newer one. */
#define MADT_REVISION		5
/* Flags: PCAT_COMPAT, the 8259 pair exists (KVM's), even if unused. */
#define MADT_PCAT_COMPAT	0x1u
#define MADT_ALL_CPUS		0xff
#define MADT_LINT1		1

size_t madt_size(unsigned int ncpus)
{
	return MADT_FIXED_SIZE + (size_t)ncpus * MADT_LAPIC_SIZE + MADT_IOAPIC_SIZE +
	       MADT_LAPIC_NMI_SIZE;
}

void madt_write(uint8_t *buf, const struct acpi_machine *m)
{
	uint32_t len = (uint32_t)madt_size(m->ncpus);
	uint8_t *p = buf + MADT_FIXED_SIZE;
	unsigned int i;

	acpi_sdt_header(buf, "APIC", len, MADT_REVISION);
	le_put32(buf + 36, MADT_LAPIC_ADDR);
	le_put32(buf + 40, MADT_PCAT_COMPAT);
	/* Linux numbers its CPUs in this order: vCPU 0, the boot CPU, first. */
	for (i = 0; i < m->ncpus; i++, p += MADT_LAPIC_SIZE) {
		p[0] = MADT_TYPE_LAPIC;
		p[1] = MADT_LAPIC_SIZE;
		p[2] = (uint8_t)i;	/* ACPI processor UID */
		p[3] = (uint8_t)i;	/* APIC id */
		le_put32(p + 4, MADT_LAPIC_ENABLED);
	}
	p[0] = MADT_TYPE_IOAPIC;
	p[1] = MADT_IOAPIC_SIZE;
	p[2] = (uint8_t)m->ncpus;	/* id after the CPUs', as in the MP table */
	p[3] = 0;
	le_put32(p + 4, MADT_IOAPIC_ADDR);
	le_put32(p + 8, 0);		/* GSI base */
	p += MADT_IOAPIC_SIZE;
	p[0] = MADT_TYPE_LAPIC_NMI;
	p[1] = MADT_LAPIC_NMI_SIZE;
	p[2] = MADT_ALL_CPUS;
	le_put16(p + 3, 0);		/* polarity and trigger: as the bus says */
	p[5] = MADT_LINT1;
	acpi_sdt_seal(buf);
}
