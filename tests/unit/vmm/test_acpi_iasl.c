// SPDX-License-Identifier: GPL-2.0
/*
 * vmm/acpi/ against an outside oracle: ACPICA's iasl (Debian's
 * acpica-tools, the same ACPICA the Linux guest's interpreter is). The
 * tables are written for 3 vCPUs and 3 virtio-mmio devices, each is
 * disassembled with `iasl -d`, and the text is judged by value: the
 * devices with their resources, the MADT's processors and IOAPIC, the
 * FADT's flags. Then the DSDT's disassembly is compiled again with
 * optimizations off (`iasl -oa`), and its AML must be byte for byte the
 * AML kvmlu wrote: every encoding is the one the ACPI compiler chooses.
 * Skipped when iasl is not installed (scripts/install-deps.sh installs
 * it).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/acpi/acpi_sdt.h"
#include "vmm/acpi/acpi_tables.h"

#define BASE_GPA	0xf2000ULL
#define NCPUS		3

static uint8_t area[0x4000];
static char dir[64];
static char cmd[512];

static const struct acpi_mmio_device mmio[] = {
	{ .base = 0xd0000000, .size = 0x1000, .gsi = 5 },
	{ .base = 0xd0001000, .size = 0x200, .gsi = 6 },
	{ .base = 0xfe000000, .size = 0x1000, .gsi = 23 },
};

static uint32_t rd32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The table with this signature in the block (they are 16-byte aligned). */
static const uint8_t *find_table(const char *sig)
{
	size_t off;

	for (off = ACPI_TABLE_ALIGN; off + ACPI_SDT_HEADER_SIZE <= sizeof(area); off += ACPI_TABLE_ALIGN)
		if (!memcmp(area + off, sig, 4))
			return area + off;
	fail_msg("no %s table", sig);
	return NULL;
}

static void write_file(const char *name, const void *p, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* The file's text with all white space removed (iasl's layout is not ours to judge). */
static char *read_squeezed(const char *name, size_t *len)
{
	char path[128], *s;
	size_t n = 0;
	FILE *f;
	int c;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	s = malloc(1 << 20);
	assert_non_null(s);
	while ((c = fgetc(f)) != EOF && n < (1 << 20) - 1)
		if (!isspace(c))
			s[n++] = (char)c;
	s[n] = '\0';
	fclose(f);
	if (len)
		*len = n;
	return s;
}

static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

static void run(const char *what)
{
	snprintf(cmd, sizeof(cmd), "cd %s && %s >>iasl.log 2>&1", dir, what);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "cat %s/iasl.log", dir);
		(void)system(cmd);
		fail_msg("'%s' failed", what);
	}
}

static int setup(void **state)
{
	struct acpi_machine m = { .ncpus = NCPUS, .mmio = mmio, .n_mmio = 3 };
	char err[256];

	(void)state;
	if (system("command -v iasl >/dev/null 2>&1") != 0)
		return 0;
	snprintf(dir, sizeof(dir), "/tmp/kvmlu-acpi-iasl-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (acpi_tables_write(area, sizeof(area), BASE_GPA, &m, err, sizeof(err)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		(void)system(cmd);
	}
	return 0;
}

static void skip_without_iasl(void)
{
	if (!dir[0])
		skip();
}

static void test_iasl_disassembles_the_dsdt_to_our_devices(void **state)
{
	const uint8_t *dsdt;
	char *s, want[256];
	unsigned int i;

	(void)state;
	skip_without_iasl();
	dsdt = find_table("DSDT");
	write_file("DSDT.dat", dsdt, rd32(dsdt + 4));
	run("iasl -d DSDT.dat");
	s = read_squeezed("DSDT.dsl", NULL);
	/* Each device with a ResourceTemplate, not a raw Buffer: iasl parsed every descriptor. */
	assert_int_equal(count(s, "Device("), 2 + 3);
	assert_int_equal(count(s, "Name(_CRS,ResourceTemplate()"), 2 + 3);
	assert_non_null(strstr(s, "Device(COM1){Name(_HID,\"PNP0501\""));
	assert_non_null(strstr(s, "IO(Decode16,0x03F8,//RangeMinimum0x03F8,//RangeMaximum0x01,//Alignment0x08,//Length)IRQNoFlags(){4}"));
	assert_non_null(strstr(s, "Device(PS2){Name(_HID,\"PNP0303\""));
	assert_non_null(strstr(s, "IRQNoFlags(){1}"));
	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want),
			 "Device(V%03X){Name(_HID,\"LNRO0005\")//_HID:HardwareIDName(_UID,%s)",
			 i, i == 0 ? "Zero" : i == 1 ? "One" : "0x02");
		assert_non_null(strstr(s, want));
		snprintf(want, sizeof(want),
			 "Memory32Fixed(ReadWrite,0x%08llX,//AddressBase0x%08X,//AddressLength)Interrupt(ResourceConsumer,Edge,ActiveHigh,Exclusive,,,){0x%08X,}",
			 (unsigned long long)mmio[i].base, mmio[i].size, mmio[i].gsi);
		assert_non_null(strstr(s, want));
	}
	free(s);
}

static void test_iasl_recompiles_the_dsdt_to_the_same_aml(void **state)
{
	const uint8_t *dsdt;
	char *s, path[128];
	uint8_t *aml;
	uint32_t len;
	FILE *f;

	(void)state;
	skip_without_iasl();
	dsdt = find_table("DSDT");
	len = rd32(dsdt + 4);
	write_file("DSDT2.dat", dsdt, len);
	run("iasl -d DSDT2.dat");
	/* -oa: no optimizations, so iasl keeps \_SB_ as written. */
	run("iasl -oa -p recompiled DSDT2.dsl");
	s = read_squeezed("iasl.log", NULL);
	assert_non_null(strstr(s, "0Errors,0Warnings"));
	free(s);
	snprintf(path, sizeof(path), "%s/recompiled.aml", dir);
	f = fopen(path, "rb");
	assert_non_null(f);
	aml = malloc(len + 1);
	assert_non_null(aml);
	/* The header differs (compiler id, checksum); the AML after it must not. */
	assert_int_equal(fread(aml, 1, len + 1, f), len);
	fclose(f);
	assert_memory_equal(aml + ACPI_SDT_HEADER_SIZE, dsdt + ACPI_SDT_HEADER_SIZE,
			    len - ACPI_SDT_HEADER_SIZE);
	free(aml);
}

/* The PCI root bridge of a virtio-pci VM, as iasl reads it and compiles it back. */
static void test_iasl_reads_the_pci_host_bridge(void **state)
{
	static uint8_t pci_area[0x4000];
	struct acpi_machine m = { .ncpus = 1, .pci_window_base = 0xd0000000,
				  .pci_window_size = 0x10000000 };
	const uint8_t *dsdt = NULL;
	char err[256], *s;

	(void)state;
	skip_without_iasl();
	assert_int_equal(acpi_tables_write(pci_area, sizeof(pci_area), BASE_GPA, &m, err,
					   sizeof(err)), 0);
	for (size_t off = ACPI_TABLE_ALIGN; off < sizeof(pci_area); off += ACPI_TABLE_ALIGN)
		if (!memcmp(pci_area + off, "DSDT", 4)) {
			dsdt = pci_area + off;
			break;
		}
	assert_non_null(dsdt);
	write_file("PCI.dat", dsdt, rd32(dsdt + 4));
	run("iasl -d PCI.dat");
	s = read_squeezed("PCI.dsl", NULL);
	assert_non_null(strstr(s, "Device(PCI0){Name(_HID,\"PNP0A03\""));
	assert_non_null(strstr(s, "Name(_SEG,Zero)"));
	assert_non_null(strstr(s, "Name(_BBN,Zero)"));
	assert_non_null(strstr(s, "WordBusNumber(ResourceProducer,MinFixed,MaxFixed,PosDecode,0x0000,//Granularity0x0000,//RangeMinimum0x0000,//RangeMaximum0x0000,//TranslationOffset0x0001,//Length"));
	assert_non_null(strstr(s, "IO(Decode16,0x0CF8,//RangeMinimum0x0CF8,//RangeMaximum0x01,//Alignment0x08,//Length"));
	assert_non_null(strstr(s, "DWordMemory(ResourceProducer,PosDecode,MinFixed,MaxFixed,NonCacheable,ReadWrite,0x00000000,//Granularity0xD0000000,//RangeMinimum0xDFFFFFFF,//RangeMaximum0x00000000,//TranslationOffset0x10000000,//Length"));
	assert_null(strstr(s, "LNRO0005"));
	free(s);
	run("iasl -oa -p pcire PCI.dsl");
	s = read_squeezed("iasl.log", NULL);
	assert_non_null(strstr(s, "0Errors,0Warnings"));
	free(s);
}

static void test_iasl_reads_the_madt_and_fadt(void **state)
{
	const uint8_t *madt, *fadt;
	char *s, want[96];
	unsigned int i;

	(void)state;
	skip_without_iasl();
	madt = find_table("APIC");
	fadt = find_table("FACP");
	write_file("APIC.dat", madt, rd32(madt + 4));
	write_file("FACP.dat", fadt, rd32(fadt + 4));
	run("iasl -d APIC.dat");
	run("iasl -d FACP.dat");

	s = read_squeezed("APIC.dsl", NULL);
	assert_int_equal(count(s, "SubtableType:00[ProcessorLocalAPIC]"), NCPUS);
	assert_int_equal(count(s, "ProcessorEnabled:1"), NCPUS);
	for (i = 0; i < NCPUS; i++) {
		/* iasl prints each field's offset: [hex offset, decimal offset, size]. */
		unsigned int off = 0x2e + 8 * i;

		snprintf(want, sizeof(want), "[%03Xh%04u1]ProcessorID:%02X[%03Xh%04u1]LocalApicID:%02X",
			 off, off, i, off + 1, off + 1, i);
		assert_non_null(strstr(s, want));
	}
	snprintf(want, sizeof(want), "I/OApicID:%02X", NCPUS);
	assert_non_null(strstr(s, want));
	assert_non_null(strstr(s, "Address:FEC00000"));
	assert_non_null(strstr(s, "InterruptInputLINT:01"));
	free(s);

	s = read_squeezed("FACP.dsl", NULL);
	assert_non_null(strstr(s, "HardwareReduced(V5):1"));
	assert_non_null(strstr(s, "ResetRegisterSupported(V2):1"));
	assert_non_null(strstr(s, "8042Presentonports60/64(V2):1"));
	assert_non_null(strstr(s, "SpaceID:01[SystemIO]"));
	assert_non_null(strstr(s, "Address:0000000000000CF9"));
	assert_non_null(strstr(s, "Valuetocausereset:06"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iasl_disassembles_the_dsdt_to_our_devices),
		cmocka_unit_test(test_iasl_recompiles_the_dsdt_to_the_same_aml),
		cmocka_unit_test(test_iasl_reads_the_madt_and_fadt),
		cmocka_unit_test(test_iasl_reads_the_pci_host_bridge),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
