// SPDX-License-Identifier: GPL-2.0
/*
 * RSDP, XSDT and the layout of the table block (see acpi_tables.h).
 *
 * Layout: RSDP | XSDT | FADT | MADT | DSDT, each at a 16-byte boundary.
 * The RSDP is revision 2 (ACPI 2.0+): it names the XSDT only, and the
 * RSDT is left out, as every reader since ACPI 2.0 uses the XSDT.
 */
#include <errno.h>
#include <string.h>

#include "common/err.h"
#include "vmm/acpi/acpi_sdt.h"
#include "vmm/acpi/acpi_tables.h"
#include "vmm/acpi/dsdt.h"
#include "vmm/acpi/fadt.h"
#include "vmm/acpi/madt.h"

#define XSDT_REVISION		1
#define XSDT_ENTRIES		2	/* FADT, MADT */
#define RSDP_REVISION		2

/*
 * Upper bounds of the DSDT's AML, checked by the unit tests: the header,
 * the \_SB_ scope and the two legacy devices; and one virtio-mmio device.
 */
#define DSDT_FIXED_MAX		256u
#define DSDT_PER_MMIO_MAX	80u
#define DSDT_PCI_HOST_MAX	128u

#define GIB4			(1ULL << 32)
#define APIC_PAGE		0x1000ULL

static size_t align16(size_t v)
{
	return (v + ACPI_TABLE_ALIGN - 1) & ~(size_t)(ACPI_TABLE_ALIGN - 1);
}

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

int acpi_machine_check(const struct acpi_machine *m, char *err, size_t errlen)
{
	size_t i, j;

	if (!m)
		return kvmlu_err(err, errlen, -EINVAL, "ACPI: no machine description");
	if (m->ncpus < 1 || m->ncpus > ACPI_MAX_CPUS)
		return kvmlu_err(err, errlen, -EINVAL, "ACPI: %u vCPUs, the MADT takes 1..%u",
				 m->ncpus, ACPI_MAX_CPUS);
	if (m->n_mmio > ACPI_MAX_MMIO_DEVICES)
		return kvmlu_err(err, errlen, -EINVAL, "ACPI: %zu virtio-mmio devices, at most %u",
				 m->n_mmio, ACPI_MAX_MMIO_DEVICES);
	if (m->n_mmio && !m->mmio)
		return kvmlu_err(err, errlen, -EINVAL, "ACPI: %zu virtio-mmio devices but no list",
				 m->n_mmio);
	if (m->pci_window_size &&
	    (m->pci_window_base >= GIB4 || m->pci_window_size > GIB4 - m->pci_window_base ||
	     overlaps(m->pci_window_base, m->pci_window_size, 0xfec00000ULL, APIC_PAGE) ||
	     overlaps(m->pci_window_base, m->pci_window_size, 0xfee00000ULL, APIC_PAGE)))
		return kvmlu_err(err, errlen, -EINVAL,
				 "ACPI: PCI window at %#llx size %#x: must be below 4 GiB and clear of the APIC pages",
				 (unsigned long long)m->pci_window_base, m->pci_window_size);
	for (i = 0; i < m->n_mmio; i++) {
		const struct acpi_mmio_device *d = &m->mmio[i];

		if (m->pci_window_size &&
		    overlaps(d->base, d->size, m->pci_window_base, m->pci_window_size))
			return kvmlu_err(err, errlen, -EINVAL,
					 "ACPI: virtio-mmio device %zu at %#llx is inside the PCI window",
					 i, (unsigned long long)d->base);

		if (!d->size || d->base >= GIB4 || d->size > GIB4 - d->base)
			return kvmlu_err(err, errlen, -EINVAL,
					 "ACPI: virtio-mmio device %zu at %#llx size %#x: the window must be non-empty and below 4 GiB",
					 i, (unsigned long long)d->base, d->size);
		if (overlaps(d->base, d->size, 0xfec00000ULL, APIC_PAGE) ||
		    overlaps(d->base, d->size, 0xfee00000ULL, APIC_PAGE))
			return kvmlu_err(err, errlen, -EINVAL,
					 "ACPI: virtio-mmio device %zu at %#llx size %#x covers an APIC page",
					 i, (unsigned long long)d->base, d->size);
		if (d->gsi < ACPI_MMIO_GSI_MIN || d->gsi > ACPI_MMIO_GSI_MAX)
			return kvmlu_err(err, errlen, -EINVAL,
					 "ACPI: virtio-mmio device %zu on GSI %u, must be %u..%u",
					 i, d->gsi, ACPI_MMIO_GSI_MIN, ACPI_MMIO_GSI_MAX);
		for (j = 0; j < i; j++) {
			const struct acpi_mmio_device *o = &m->mmio[j];

			if (overlaps(d->base, d->size, o->base, o->size))
				return kvmlu_err(err, errlen, -EINVAL,
						 "ACPI: virtio-mmio devices %zu and %zu overlap at %#llx",
						 j, i, (unsigned long long)d->base);
			if (d->gsi == o->gsi)
				return kvmlu_err(err, errlen, -EINVAL,
						 "ACPI: virtio-mmio devices %zu and %zu share GSI %u (edge, exclusive)",
						 j, i, d->gsi);
		}
	}
	return 0;
}

static size_t xsdt_size(void)
{
	return ACPI_SDT_HEADER_SIZE + XSDT_ENTRIES * 8;
}

size_t acpi_tables_size(const struct acpi_machine *m)
{
	return align16(ACPI_RSDP_SIZE) + align16(xsdt_size()) + align16(FADT_SIZE) +
	       align16(madt_size(m->ncpus)) + DSDT_FIXED_MAX + m->n_mmio * DSDT_PER_MMIO_MAX +
	       (m->pci_window_size ? DSDT_PCI_HOST_MAX : 0);
}

static void rsdp_write(uint8_t *p, uint64_t xsdt_gpa)
{
	memset(p, 0, ACPI_RSDP_SIZE);
	memcpy(p, ACPI_RSDP_SIGNATURE, 8);
	memcpy(p + 9, ACPI_OEM_ID, 6);
	p[15] = RSDP_REVISION;
	le_put32(p + 16, 0);			/* no RSDT */
	le_put32(p + 20, ACPI_RSDP_SIZE);
	le_put64(p + 24, xsdt_gpa);
	/* The first checksum covers the ACPI 1.0 part, the second all 36 bytes. */
	p[8] = acpi_checksum(p, 20);
	p[32] = acpi_checksum(p, ACPI_RSDP_SIZE);
}

static void xsdt_write(uint8_t *p, uint64_t fadt_gpa, uint64_t madt_gpa)
{
	acpi_sdt_header(p, "XSDT", (uint32_t)xsdt_size(), XSDT_REVISION);
	le_put64(p + ACPI_SDT_HEADER_SIZE, fadt_gpa);
	le_put64(p + ACPI_SDT_HEADER_SIZE + 8, madt_gpa);
	acpi_sdt_seal(p);
}

int acpi_tables_write(void *buf, size_t len, uint64_t gpa, const struct acpi_machine *m,
		      char *err, size_t errlen)
{
	size_t xsdt_off, fadt_off, madt_off, dsdt_off, dsdt_len;
	uint8_t *b = buf;
	int rc;

	rc = acpi_machine_check(m, err, errlen);
	if (rc)
		return rc;
	if (gpa & (ACPI_TABLE_ALIGN - 1) || gpa >= GIB4 || len > GIB4 - gpa)
		return kvmlu_err(err, errlen, -EINVAL,
				 "ACPI: tables at %#llx: must be 16-byte aligned and below 4 GiB",
				 (unsigned long long)gpa);
	xsdt_off = align16(ACPI_RSDP_SIZE);
	fadt_off = xsdt_off + align16(xsdt_size());
	madt_off = fadt_off + align16(FADT_SIZE);
	dsdt_off = madt_off + align16(madt_size(m->ncpus));
	if (len < dsdt_off)
		return kvmlu_err(err, errlen, -ENOSPC, "ACPI: tables need more than %zu bytes, have %zu",
				 dsdt_off, len);
	rc = dsdt_write(b + dsdt_off, len - dsdt_off, m, &dsdt_len);
	if (rc)
		return kvmlu_err(err, errlen, rc,
				 "ACPI: DSDT for %zu virtio-mmio devices does not fit in %zu bytes",
				 m->n_mmio, len - dsdt_off);
	fadt_write(b + fadt_off, gpa + dsdt_off, m->pci_window_size != 0);
	madt_write(b + madt_off, m);
	xsdt_write(b + xsdt_off, gpa + fadt_off, gpa + madt_off);
	rsdp_write(b, gpa + xsdt_off);
	return 0;
}
