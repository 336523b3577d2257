// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/acpi/: the tables are written into a buffer standing
 * for guest memory at a guest address, then read back the way a guest
 * does — from the RSDP, through the XSDT, to the FADT, MADT and DSDT —
 * and judged by value: signatures, lengths, checksums, addresses, one
 * enabled Local APIC per vCPU, the IOAPIC, and in the DSDT's AML (decoded
 * here by a small reader of our own) a device per virtio-mmio entry with
 * its base, size and GSI. Also the refusals of machines the tables
 * cannot describe, and the AML package lengths of every encoded size.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/acpi/acpi_machine.h"
#include "vmm/acpi/acpi_sdt.h"
#include "vmm/acpi/acpi_tables.h"
#include "vmm/acpi/aml.h"
#include "vmm/acpi/fadt.h"
#include "vmm/acpi/madt.h"
#include "vmm/vm_virtio.h"

#define BASE_GPA	0xf2000ULL
#define AREA		0xe000u

static uint8_t area[AREA];
static char errbuf[256];

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

/* The table at guest address gpa, checked: in the area, its signature, sums to 0. */
static const uint8_t *table_at(uint64_t gpa, const char *sig)
{
	const uint8_t *t;
	uint32_t len;

	assert_true(gpa >= BASE_GPA && gpa + ACPI_SDT_HEADER_SIZE <= BASE_GPA + AREA);
	t = area + (gpa - BASE_GPA);
	assert_memory_equal(t, sig, 4);
	len = rd32(t + 4);
	assert_true(len >= ACPI_SDT_HEADER_SIZE && gpa + len <= BASE_GPA + AREA);
	assert_int_equal(sum(t, len), 0);
	assert_memory_equal(t + 10, "KVMLU ", 6);
	return t;
}

struct parsed {
	const uint8_t *xsdt, *fadt, *madt, *dsdt;
};

static void parse_tables(struct parsed *p)
{
	const uint8_t *rsdp = area;
	uint32_t n, i;

	assert_memory_equal(rsdp, "RSD PTR ", 8);
	assert_int_equal(sum(rsdp, 20), 0);
	assert_int_equal(rsdp[15], 2);
	assert_int_equal(rd32(rsdp + 20), 36);
	assert_int_equal(sum(rsdp, 36), 0);
	p->xsdt = table_at(rd64(rsdp + 24), "XSDT");
	n = (rd32(p->xsdt + 4) - ACPI_SDT_HEADER_SIZE) / 8;
	assert_int_equal(n, 2);
	p->fadt = p->madt = NULL;
	for (i = 0; i < n; i++) {
		uint64_t a = rd64(p->xsdt + ACPI_SDT_HEADER_SIZE + 8 * i);
		const uint8_t *t = area + (a - BASE_GPA);

		if (!memcmp(t, "FACP", 4))
			p->fadt = table_at(a, "FACP");
		else
			p->madt = table_at(a, "APIC");
	}
	assert_non_null(p->fadt);
	assert_non_null(p->madt);
	assert_int_equal(rd32(p->fadt + FADT_DSDT_OFF), rd64(p->fadt + FADT_X_DSDT_OFF));
	p->dsdt = table_at(rd64(p->fadt + FADT_X_DSDT_OFF), "DSDT");
}

static int write_tables(unsigned int ncpus, const struct acpi_mmio_device *mmio, size_t n)
{
	struct acpi_machine m = { .ncpus = ncpus, .mmio = mmio, .n_mmio = n };

	memset(area, 0xa5, sizeof(area));
	errbuf[0] = '\0';
	return acpi_tables_write(area, sizeof(area), BASE_GPA, &m, errbuf, sizeof(errbuf));
}

static void test_acpi_rsdp_xsdt_fadt_link_and_checksum(void **state)
{
	struct parsed p;
	const uint8_t *f;

	(void)state;
	assert_int_equal(write_tables(2, NULL, 0), 0);
	parse_tables(&p);
	f = p.fadt;
	assert_int_equal(rd32(f + 4), FADT_SIZE);
	assert_int_equal(f[8], 6);
	assert_int_equal(f[FADT_MINOR_OFF], 5);
	assert_int_equal(rd32(f + FADT_FLAGS_OFF) & FADT_F_HW_REDUCED_ACPI, FADT_F_HW_REDUCED_ACPI);
	assert_int_equal(rd32(f + FADT_FLAGS_OFF) & FADT_F_RESET_REG_SUP, FADT_F_RESET_REG_SUP);
	/* No FACS, SCI, SMI port, PM1 or PM timer blocks: nothing to emulate. */
	assert_int_equal(rd32(f + 36), 0);
	assert_int_equal(rd16(f + 46), 0);
	assert_int_equal(rd32(f + 48), 0);
	assert_int_equal(rd32(f + 56), 0);
	assert_int_equal(rd32(f + 64), 0);
	assert_int_equal(rd32(f + 76), 0);
	/* Reset: system I/O, 8 bits, port 0xcf9, value 6. */
	assert_int_equal(f[FADT_RESET_REG_OFF], 1);
	assert_int_equal(f[FADT_RESET_REG_OFF + 1], 8);
	assert_int_equal(rd64(f + FADT_RESET_REG_OFF + 4), 0xcf9);
	assert_int_equal(f[FADT_RESET_VALUE_OFF], 6);
	assert_int_equal(rd16(f + FADT_IAPC_BOOT_ARCH_OFF) & (FADT_IAPC_8042 | FADT_IAPC_CMOS_RTC_NOT_PRESENT),
			 FADT_IAPC_8042 | FADT_IAPC_CMOS_RTC_NOT_PRESENT);
	assert_memory_equal(f + FADT_HYPERVISOR_OFF, "KVMLUVMM", 8);
}

/* Walks the MADT's entries; counts them by type and checks each. */
static void check_madt(const uint8_t *madt, unsigned int ncpus)
{
	uint32_t len = rd32(madt + 4), off = MADT_FIXED_SIZE;
	unsigned int lapics = 0, ioapics = 0, nmis = 0;

	assert_int_equal(rd32(madt + 36), 0xfee00000u);
	while (off < len) {
		const uint8_t *e = madt + off;

		assert_true(e[1] >= 2 && off + e[1] <= len);
		switch (e[0]) {
		case MADT_TYPE_LAPIC:
			assert_int_equal(e[1], 8);
			/* In order, boot CPU first: UID = APIC id = vCPU index. */
			assert_int_equal(e[2], lapics);
			assert_int_equal(e[3], lapics);
			assert_int_equal(rd32(e + 4), 1);
			lapics++;
			break;
		case MADT_TYPE_IOAPIC:
			assert_int_equal(e[1], 12);
			assert_int_equal(e[2], ncpus);
			assert_int_equal(rd32(e + 4), 0xfec00000u);
			assert_int_equal(rd32(e + 8), 0);
			ioapics++;
			break;
		case MADT_TYPE_LAPIC_NMI:
			assert_int_equal(e[2], 0xff);
			assert_int_equal(e[5], 1);	/* LINT1 */
			nmis++;
			break;
		default:
			fail_msg("unexpected MADT entry type %u at %u", e[0], off);
		}
		off += e[1];
	}
	assert_int_equal(off, len);
	assert_int_equal(lapics, ncpus);
	assert_int_equal(ioapics, 1);
	assert_int_equal(nmis, 1);
}

static void test_madt_has_one_enabled_lapic_per_vcpu(void **state)
{
	unsigned int n;
	struct parsed p;

	(void)state;
	for (n = 1; n <= ACPI_MAX_CPUS; n = n < 4 ? n + 1 : n + 50) {
		assert_int_equal(write_tables(n, NULL, 0), 0);
		parse_tables(&p);
		check_madt(p.madt, n);
	}
	assert_int_equal(write_tables(ACPI_MAX_CPUS, NULL, 0), 0);
	parse_tables(&p);
	check_madt(p.madt, ACPI_MAX_CPUS);
}

/* --- a reader for the AML subset the DSDT uses --- */

struct dev {
	char name[5];
	char hid[16];
	long long uid;		/* -1: none */
	const uint8_t *crs;
	size_t crs_len;
};

struct devs {
	struct dev d[ACPI_MAX_MMIO_DEVICES + 4];
	unsigned int n;
};

/* PkgLength at p: returns the length it encodes and its own size in *sz. */
static size_t pkg_len(const uint8_t *p, size_t *sz)
{
	size_t follow = p[0] >> 6, v, i;

	if (!follow) {
		*sz = 1;
		return p[0] & 0x3f;
	}
	assert_int_equal(p[0] & 0x30, 0);
	v = p[0] & 0x0f;
	for (i = 0; i < follow; i++)
		v |= (size_t)p[1 + i] << (4 + 8 * i);
	*sz = 1 + follow;
	return v;
}

static long long aml_int(const uint8_t *p, size_t *used)
{
	switch (p[0]) {
	case 0x00: *used = 1; return 0;
	case 0x01: *used = 1; return 1;
	case 0x0a: *used = 2; return p[1];
	case 0x0b: *used = 3; return rd16(p + 1);
	case 0x0c: *used = 5; return rd32(p + 1);
	case 0x0e: *used = 9; return (long long)rd64(p + 1);
	}
	fail_msg("not an integer opcode: %#x", p[0]);
	return -1;
}

/* Name(...) objects of one Device body [p, end). */
static void read_device(const uint8_t *p, const uint8_t *end, struct dev *d)
{
	d->uid = -1;
	while (p < end) {
		char nm[5] = { 0 };
		size_t used, sz, len;

		assert_int_equal(p[0], 0x08);		/* NameOp */
		memcpy(nm, p + 1, 4);
		p += 5;
		if (!strcmp(nm, "_HID")) {
			assert_int_equal(p[0], 0x0d);
			assert_true(strlen((const char *)p + 1) < sizeof(d->hid));
			strcpy(d->hid, (const char *)p + 1);
			p += 2 + strlen(d->hid);
		} else if (!strcmp(nm, "_UID")) {
			d->uid = aml_int(p, &used);
			p += used;
		} else if (!strcmp(nm, "_CRS")) {
			const uint8_t *b;

			assert_int_equal(p[0], 0x11);		/* BufferOp */
			len = pkg_len(p + 1, &sz);
			b = p + 1 + sz;
			d->crs_len = (size_t)aml_int(b, &used);
			d->crs = b + used;
			assert_int_equal(len, sz + used + d->crs_len);
			p += 1 + len;
		} else {
			fail_msg("unexpected name %s", nm);
		}
	}
	assert_ptr_equal(p, end);
}

static void read_dsdt(const uint8_t *dsdt, struct devs *out)
{
	const uint8_t *p = dsdt + ACPI_SDT_HEADER_SIZE, *end = dsdt + rd32(dsdt + 4), *scope_end;
	size_t sz, len;

	out->n = 0;
	assert_int_equal(p[0], 0x10);			/* ScopeOp */
	len = pkg_len(p + 1, &sz);
	scope_end = p + 1 + len;
	assert_ptr_equal(scope_end, end);
	assert_memory_equal(p + 1 + sz, "\\_SB_", 5);
	p += 1 + sz + 5;
	while (p < scope_end) {
		struct dev *d = &out->d[out->n++];
		const uint8_t *dev_end;

		assert_true(out->n <= ACPI_MAX_MMIO_DEVICES + 4);
		memset(d, 0, sizeof(*d));
		assert_int_equal(p[0], 0x5b);		/* DeviceOp */
		assert_int_equal(p[1], 0x82);
		len = pkg_len(p + 2, &sz);
		dev_end = p + 2 + len;
		assert_true(dev_end <= scope_end);
		memcpy(d->name, p + 2 + sz, 4);
		read_device(p + 2 + sz + 4, dev_end, d);
		p = dev_end;
	}
}

static const struct dev *find_dev(const struct devs *ds, const char *name)
{
	unsigned int i;

	for (i = 0; i < ds->n; i++)
		if (!strcmp(ds->d[i].name, name))
			return &ds->d[i];
	return NULL;
}

static void test_dsdt_has_legacy_devices_and_one_per_mmio_entry(void **state)
{
	static const struct acpi_mmio_device mmio[] = {
		{ .base = 0xd0000000, .size = 0x1000, .gsi = 5 },
		{ .base = 0xd0001000, .size = 0x200, .gsi = 6 },
		{ .base = 0xfe000000, .size = 0x1000, .gsi = 23 },
	};
	const struct dev *com1, *kbd;
	struct parsed p;
	struct devs ds;
	unsigned int i;

	(void)state;
	assert_int_equal(write_tables(2, mmio, 3), 0);
	parse_tables(&p);
	read_dsdt(p.dsdt, &ds);
	assert_int_equal(ds.n, 2 + 3);

	com1 = find_dev(&ds, "COM1");
	assert_non_null(com1);
	assert_string_equal(com1->hid, "PNP0501");
	/* IO(Decode16, 0x3f8, 0x3f8, 1, 8), IRQNoFlags() {4}, end */
	assert_int_equal(com1->crs_len, 8 + 3 + 2);
	assert_int_equal(com1->crs[0], 0x47);
	assert_int_equal(rd16(com1->crs + 2), 0x3f8);
	assert_int_equal(rd16(com1->crs + 4), 0x3f8);
	assert_int_equal(com1->crs[7], 8);
	assert_int_equal(com1->crs[8], 0x22);
	assert_int_equal(rd16(com1->crs + 9), 1u << 4);
	assert_int_equal(com1->crs[11], 0x79);

	kbd = find_dev(&ds, "PS2_");
	assert_non_null(kbd);
	assert_string_equal(kbd->hid, "PNP0303");
	assert_int_equal(rd16(kbd->crs + 2), 0x60);
	assert_int_equal(rd16(kbd->crs + 8 + 2), 0x64);
	assert_int_equal(rd16(kbd->crs + 16 + 1), 1u << 1);

	for (i = 0; i < 3; i++) {
		char name[5];
		const struct dev *d;

		snprintf(name, sizeof(name), "V%03X", i);
		d = find_dev(&ds, name);
		assert_non_null(d);
		assert_string_equal(d->hid, "LNRO0005");
		assert_int_equal(d->uid, i);
		/* Memory32Fixed(ReadWrite, base, size), Interrupt(Consumer, Edge, ActiveHigh, Exclusive) {gsi}, end */
		assert_int_equal(d->crs_len, 12 + 9 + 2);
		assert_int_equal(d->crs[0], 0x86);
		assert_int_equal(rd16(d->crs + 1), 9);
		assert_int_equal(d->crs[3], 1);
		assert_int_equal(rd32(d->crs + 4), mmio[i].base);
		assert_int_equal(rd32(d->crs + 8), mmio[i].size);
		assert_int_equal(d->crs[12], 0x89);
		assert_int_equal(rd16(d->crs + 13), 6);
		assert_int_equal(d->crs[15], 0x03);
		assert_int_equal(d->crs[16], 1);
		assert_int_equal(rd32(d->crs + 17), mmio[i].gsi);
		assert_int_equal(d->crs[21], 0x79);
	}
}

/* What linux_boot() passes for a VM with every --disk it may have. */
static void test_dsdt_takes_every_virtio_slot_of_the_vm_layout(void **state)
{
	struct acpi_mmio_device mmio[VM_VIRTIO_MAX_DEVICES];
	struct parsed p;
	struct devs ds;
	unsigned int i;

	(void)state;
	for (i = 0; i < VM_VIRTIO_MAX_DEVICES; i++) {
		struct vm_virtio_slot s = vm_virtio_slot(i);

		mmio[i] = (struct acpi_mmio_device){ .base = s.base, .size = s.size, .gsi = s.gsi };
	}
	assert_int_equal(write_tables(2, mmio, VM_VIRTIO_MAX_DEVICES), 0);
	parse_tables(&p);
	read_dsdt(p.dsdt, &ds);
	assert_int_equal(ds.n, 2 + VM_VIRTIO_MAX_DEVICES);
	for (i = 0; i < VM_VIRTIO_MAX_DEVICES; i++) {
		char name[5];
		const struct dev *d;

		snprintf(name, sizeof(name), "V%03X", i);
		d = find_dev(&ds, name);
		assert_non_null(d);
		assert_int_equal(rd32(d->crs + 4), 0xd0000000u + i * 0x1000u);
		assert_int_equal(rd32(d->crs + 8), 0x1000);
		assert_int_equal(rd32(d->crs + 17), 16 + i);
	}
}

static void test_tables_for_the_largest_machine_fit_their_bound(void **state)
{
	struct acpi_mmio_device mmio[ACPI_MAX_MMIO_DEVICES];
	struct acpi_machine m = { .ncpus = ACPI_MAX_CPUS, .mmio = mmio,
				  .n_mmio = ACPI_MAX_MMIO_DEVICES };
	size_t need, i;
	uint8_t *buf;
	struct devs ds;
	struct parsed p;

	(void)state;
	/* The widest encodings: 4-byte bases and sizes. */
	for (i = 0; i < ACPI_MAX_MMIO_DEVICES; i++) {
		mmio[i].base = 0xe0000000ULL + i * 0x100000;
		mmio[i].size = 0x100000;
		mmio[i].gsi = ACPI_MMIO_GSI_MIN + (uint32_t)i;
	}
	assert_int_equal(ACPI_MAX_MMIO_DEVICES, 19);
	need = acpi_tables_size(&m);
	assert_true(need <= AREA);
	buf = malloc(need);
	assert_non_null(buf);
	assert_int_equal(acpi_tables_write(buf, need, BASE_GPA, &m, errbuf, sizeof(errbuf)), 0);
	memset(area, 0, sizeof(area));
	memcpy(area, buf, need);
	parse_tables(&p);
	check_madt(p.madt, ACPI_MAX_CPUS);
	read_dsdt(p.dsdt, &ds);
	assert_int_equal(ds.n, 2 + ACPI_MAX_MMIO_DEVICES);
	free(buf);
}

static void test_acpi_refuses_machines_it_cannot_describe(void **state)
{
	struct acpi_mmio_device d[2] = {
		{ .base = 0xd0000000, .size = 0x1000, .gsi = 5 },
		{ .base = 0xd0002000, .size = 0x1000, .gsi = 6 },
	};
	struct acpi_machine m = { .ncpus = 0 };

	(void)state;
	assert_int_equal(acpi_machine_check(NULL, errbuf, sizeof(errbuf)), -EINVAL);
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "0 vCPUs"));
	m.ncpus = ACPI_MAX_CPUS + 1;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "255 vCPUs"));
	m.ncpus = 1;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), 0);
	m.n_mmio = 1;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "no list"));
	m.mmio = d;
	m.n_mmio = ACPI_MAX_MMIO_DEVICES + 1;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "20 virtio-mmio devices"));
	m.n_mmio = 2;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), 0);

	d[1].gsi = 4;		/* COM1's */
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "GSI 4"));
	d[1].gsi = 24;		/* past the IOAPIC */
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	d[1].gsi = 5;		/* device 0's */
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "share GSI 5"));
	d[1].gsi = 6;

	d[1].base = 0xd0000800;	/* inside device 0 */
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "overlap"));
	d[1].base = 0xfffff000;	/* ends exactly at 4 GiB: fine */
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), 0);
	d[1].size = 0x1001;	/* past 4 GiB */
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "below 4 GiB"));
	d[1].base = 0x100000000ULL;
	d[1].size = 0x1000;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	d[1].base = 0xfebff000;	/* runs onto the IOAPIC page */
	d[1].size = 0x2000;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "APIC page"));
	d[1].base = 0xd0002000;
	d[1].size = 0;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	d[1].size = 0x1000;

	/* Where the block goes, and room for it. */
	assert_int_equal(acpi_tables_write(area, sizeof(area), BASE_GPA + 8, &m, errbuf, sizeof(errbuf)),
			 -EINVAL);
	assert_int_equal(acpi_tables_write(area, sizeof(area), 1ULL << 32, &m, errbuf, sizeof(errbuf)),
			 -EINVAL);
	assert_int_equal(acpi_tables_write(area, 100, BASE_GPA, &m, errbuf, sizeof(errbuf)), -ENOSPC);
	assert_int_equal(acpi_tables_write(area, 600, BASE_GPA, &m, errbuf, sizeof(errbuf)), -ENOSPC);
	assert_non_null(strstr(errbuf, "DSDT"));
}

/*
 * A VM on virtio-pci: the FADT stops saying MSI is unsupported (Linux
 * would turn MSI off for good), and the window must fit and stay clear.
 */
static void test_acpi_pci_machine_allows_msi_and_checks_its_window(void **state)
{
	struct acpi_mmio_device d = { .base = 0xd0000000, .size = 0x1000, .gsi = 5 };
	struct acpi_machine m = { .ncpus = 1, .pci_window_base = 0xd0000000,
				  .pci_window_size = 0x10000000 };
	struct parsed p;

	(void)state;
	assert_int_equal(write_tables(1, NULL, 0), 0);
	parse_tables(&p);
	assert_true(rd16(p.fadt + FADT_IAPC_BOOT_ARCH_OFF) & FADT_IAPC_MSI_NOT_SUPPORTED);
	memset(area, 0xa5, sizeof(area));
	assert_int_equal(acpi_tables_write(area, sizeof(area), BASE_GPA, &m, errbuf,
					   sizeof(errbuf)), 0);
	parse_tables(&p);
	assert_false(rd16(p.fadt + FADT_IAPC_BOOT_ARCH_OFF) & FADT_IAPC_MSI_NOT_SUPPORTED);
	assert_non_null(memmem(p.dsdt, rd32(p.dsdt + 4), "PNP0A03", 7));
	/* An mmio window inside the PCI window, a window past 4 GiB or on the APIC pages. */
	m.mmio = &d;
	m.n_mmio = 1;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "inside the PCI window"));
	m.n_mmio = 0;
	m.pci_window_base = 0xf0000000;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "APIC"));
	m.pci_window_base = 0xfffff000;
	m.pci_window_size = 0x2000;
	assert_int_equal(acpi_machine_check(&m, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "below 4 GiB"));
}

/* Every PkgLength size (1..3 bytes here) decodes to what was encoded. */
static void test_aml_package_lengths_round_trip(void **state)
{
	static const size_t sizes[] = { 0, 1, 50, 58, 59, 60, 61, 62, 63, 64, 200, 4080,
					4090, 4091, 4092, 4093, 4094, 5000, 70000 };
	static uint8_t buf[80000], payload[70000];
	size_t i;

	(void)state;
	memset(payload, 0x5a, sizeof(payload));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct aml a;
		size_t sz, len, used;

		aml_init(&a, buf, sizeof(buf));
		aml_buffer(&a, payload, sizes[i]);
		assert_int_equal(aml_error(&a), 0);
		assert_int_equal(buf[0], 0x11);
		len = pkg_len(buf + 1, &sz);
		/* The shortest encoding, and the length counts itself. */
		assert_int_equal(sz, len <= 0x3f ? 1 : len <= 0xfff ? 2 : 3);
		assert_int_equal(1 + len, a.len);
		assert_int_equal(aml_int(buf + 1 + sz, &used), sizes[i]);
		assert_int_equal(1 + sz + used + sizes[i], a.len);
	}
	/* Out of room is sticky and reported once. */
	{
		struct aml a;

		aml_init(&a, buf, 10);
		aml_buffer(&a, payload, 20);
		aml_integer(&a, 1);
		assert_int_equal(aml_error(&a), -ENOSPC);
		assert_true(a.len <= 10);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acpi_rsdp_xsdt_fadt_link_and_checksum),
		cmocka_unit_test(test_madt_has_one_enabled_lapic_per_vcpu),
		cmocka_unit_test(test_dsdt_has_legacy_devices_and_one_per_mmio_entry),
		cmocka_unit_test(test_dsdt_takes_every_virtio_slot_of_the_vm_layout),
		cmocka_unit_test(test_tables_for_the_largest_machine_fit_their_bound),
		cmocka_unit_test(test_acpi_refuses_machines_it_cannot_describe),
		cmocka_unit_test(test_aml_package_lengths_round_trip),
		cmocka_unit_test(test_acpi_pci_machine_allows_msi_and_checks_its_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
