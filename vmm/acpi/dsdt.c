// SPDX-License-Identifier: GPL-2.0
/* DSDT (see dsdt.h). */
#include <errno.h>
#include <stdio.h>

#include "vmm/acpi/acpi_sdt.h"
#include "vmm/acpi/aml.h"
#include "vmm/acpi/dsdt.h"

/* Revision 2: integers in this AML are 64 bits wide. */
#define DSDT_REVISION	2

/* No _UID: the only device of its _HID. */
#define DSDT_NO_UID	(-1)

/* Device (name) { _HID hid, _UID uid unless DSDT_NO_UID, _CRS the resource template rt }. */
static void dsdt_device(struct aml *a, const char *name, const char *hid, int64_t uid,
			const uint8_t *rt, size_t n)
{
	size_t dev = aml_device_begin(a, name);

	aml_name(a, "_HID");
	aml_string(a, hid);
	if (uid != DSDT_NO_UID) {
		aml_name(a, "_UID");
		aml_integer(a, (uint64_t)uid);
	}
	aml_name(a, "_CRS");
	aml_buffer(a, rt, n);
	aml_pkg_end(a, dev);
}

static void dsdt_com1(struct aml *a)
{
	uint8_t rt[AML_RES_IO_SIZE + AML_RES_IRQ_SIZE + AML_RES_END_SIZE];
	size_t n = 0;

	aml_res_io(rt, &n, DSDT_COM1_PORT, 8);
	aml_res_irq(rt, &n, DSDT_COM1_IRQ);
	aml_res_end(rt, &n);
	dsdt_device(a, "COM1", "PNP0501", 1, rt, n);
}

static void dsdt_i8042(struct aml *a)
{
	uint8_t rt[2 * AML_RES_IO_SIZE + AML_RES_IRQ_SIZE + AML_RES_END_SIZE];
	size_t n = 0;

	aml_res_io(rt, &n, DSDT_I8042_DATA, 1);
	aml_res_io(rt, &n, DSDT_I8042_CMD, 1);
	aml_res_irq(rt, &n, DSDT_I8042_IRQ);
	aml_res_end(rt, &n);
	dsdt_device(a, "PS2_", "PNP0303", DSDT_NO_UID, rt, n);
}

static void dsdt_virtio_mmio(struct aml *a, unsigned int i, const struct acpi_mmio_device *d)
{
	uint8_t rt[AML_RES_MEM32F_SIZE + AML_RES_XIRQ_SIZE + AML_RES_END_SIZE];
	char name[5];
	size_t n = 0;

	aml_res_mem32_fixed(rt, &n, (uint32_t)d->base, d->size);
	aml_res_ext_irq(rt, &n, d->gsi);
	aml_res_end(rt, &n);
	snprintf(name, sizeof(name), "V%03X", i & 0xfffu);
	dsdt_device(a, name, "LNRO0005", i, rt, n);
}

/* Bus 0 behind conf1: Linux finds a root bus only here when it runs on ACPI. */
static void dsdt_pci_host(struct aml *a, const struct acpi_machine *m)
{
	uint8_t rt[AML_RES_WORD_BUS_SIZE + AML_RES_IO_SIZE + AML_RES_DWORD_MEM_SIZE +
		   AML_RES_END_SIZE];
	size_t n = 0, dev;

	aml_res_word_bus(rt, &n, 0, 0);
	aml_res_io(rt, &n, 0xcf8, 8);
	aml_res_dword_mem(rt, &n, (uint32_t)m->pci_window_base, m->pci_window_size);
	aml_res_end(rt, &n);
	dev = aml_device_begin(a, "PCI0");
	aml_name(a, "_HID");
	aml_string(a, "PNP0A03");
	aml_name(a, "_UID");
	aml_integer(a, 0);
	aml_name(a, "_SEG");
	aml_integer(a, 0);
	aml_name(a, "_BBN");
	aml_integer(a, 0);
	aml_name(a, "_CRS");
	aml_buffer(a, rt, n);
	aml_pkg_end(a, dev);
}

int dsdt_write(uint8_t *buf, size_t cap, const struct acpi_machine *m, size_t *len)
{
	struct aml a;
	size_t sb, i;
	int rc;

	if (cap < ACPI_SDT_HEADER_SIZE)
		return -ENOSPC;
	aml_init(&a, buf + ACPI_SDT_HEADER_SIZE, cap - ACPI_SDT_HEADER_SIZE);
	sb = aml_scope_begin(&a, "\\_SB_");
	dsdt_com1(&a);
	dsdt_i8042(&a);
	for (i = 0; i < m->n_mmio; i++)
		dsdt_virtio_mmio(&a, (unsigned int)i, &m->mmio[i]);
	if (m->pci_window_size)
		dsdt_pci_host(&a, m);
	aml_pkg_end(&a, sb);
	rc = aml_error(&a);
	if (rc)
		return rc;
	*len = ACPI_SDT_HEADER_SIZE + a.len;
	acpi_sdt_header(buf, "DSDT", (uint32_t)*len, DSDT_REVISION);
	acpi_sdt_seal(buf);
	return 0;
}
