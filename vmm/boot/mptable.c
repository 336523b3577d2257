// SPDX-License-Identifier: GPL-2.0
/*
 * MP table (see mptable.h). Layouts are those of the MP spec 1.4,
 * chapter 4; both structures carry a byte checksum that makes their bytes
 * sum to zero, which is what Linux checks before it believes them.
 */
#include <errno.h>
#include <string.h>

#include "common/err.h"
#include "vmm/boot/mptable.h"

#define MP_SPEC_REV		4
#define MP_LAPIC_VERSION	0x14
#define MP_IOAPIC_VERSION	0x11
#define MP_CPU_ENABLED		0x01
#define MP_CPU_BSP		0x02

enum mp_entry_type {
	MP_PROCESSOR = 0,
	MP_BUS = 1,
	MP_IOAPIC = 2,
	MP_IOINTR = 3,
	MP_LOCALINTR = 4,
};

enum mp_irq_type {
	MP_INT = 0,
	MP_NMI = 1,
	MP_EXTINT = 3,
};

struct mp_floating {
	char signature[4];	/* "_MP_" */
	uint32_t config_gpa;
	uint8_t length;		/* in 16-byte units */
	uint8_t spec_rev;
	uint8_t checksum;
	uint8_t feature[5];	/* all 0: a config table follows, no IMCR */
} __attribute__((packed));

struct mp_config {
	char signature[4];	/* "PCMP" */
	uint16_t length;	/* header and base entries */
	uint8_t spec_rev;
	uint8_t checksum;
	char oem[8];
	char product[12];
	uint32_t oem_table;
	uint16_t oem_table_size;
	uint16_t entry_count;
	uint32_t lapic_addr;
	uint16_t ext_length;
	uint8_t ext_checksum;
	uint8_t reserved;
} __attribute__((packed));

struct mp_processor {
	uint8_t type;
	uint8_t lapic_id;
	uint8_t lapic_version;
	uint8_t flags;
	uint32_t signature;
	uint32_t features;
	uint32_t reserved[2];
} __attribute__((packed));

struct mp_bus {
	uint8_t type;
	uint8_t bus_id;
	char bus_type[6];
} __attribute__((packed));

struct mp_ioapic {
	uint8_t type;
	uint8_t id;
	uint8_t version;
	uint8_t flags;
	uint32_t addr;
} __attribute__((packed));

struct mp_intr {
	uint8_t type;
	uint8_t irq_type;
	uint16_t irq_flags;	/* 0: polarity and trigger as the bus says */
	uint8_t src_bus;
	uint8_t src_irq;
	uint8_t dst_apic;
	uint8_t dst_pin;
} __attribute__((packed));

_Static_assert(sizeof(struct mp_floating) == 16, "MP floating pointer is 16 bytes");
_Static_assert(sizeof(struct mp_config) == 44, "MP config header is 44 bytes");
_Static_assert(sizeof(struct mp_processor) == 20, "MP processor entry is 20 bytes");
_Static_assert(sizeof(struct mp_bus) == 8 && sizeof(struct mp_ioapic) == 8 &&
	       sizeof(struct mp_intr) == 8, "MP 8-byte entries");

/* Two local interrupt entries: LINT0 ExtINT (the PIC), LINT1 NMI. */
#define MP_NR_LOCALINTR 2

size_t mptable_size(unsigned int nr_cpus)
{
	return sizeof(struct mp_floating) + sizeof(struct mp_config) +
	       nr_cpus * sizeof(struct mp_processor) + sizeof(struct mp_bus) +
	       sizeof(struct mp_ioapic) +
	       (MPTABLE_ISA_IRQS + MP_NR_LOCALINTR) * sizeof(struct mp_intr);
}

static uint8_t mp_checksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum = (uint8_t)(sum + *b++);
	return (uint8_t)-sum;
}

int mptable_write(void *buf, size_t len, uint32_t gpa, unsigned int nr_cpus,
		  char *err, size_t errlen)
{
	uint8_t *base = buf, *p;
	struct mp_floating fl;
	struct mp_config cfg;
	unsigned int i, entries = 0;
	uint8_t ioapic_id = (uint8_t)nr_cpus;
	size_t need;

	if (nr_cpus == 0 || nr_cpus > MPTABLE_MAX_CPUS)
		return kvmlu_err(err, errlen, -EINVAL, "MP table: %u CPUs, must be 1..%u",
				 nr_cpus, MPTABLE_MAX_CPUS);
	need = mptable_size(nr_cpus);
	if (len < need)
		return kvmlu_err(err, errlen, -ENOSPC, "MP table: needs %zu bytes, has %zu",
				 need, len);
	memset(buf, 0, need);
	p = base + sizeof(fl) + sizeof(cfg);

	for (i = 0; i < nr_cpus; i++) {
		struct mp_processor c = {
			.type = MP_PROCESSOR,
			.lapic_id = (uint8_t)i,
			.lapic_version = MP_LAPIC_VERSION,
			.flags = MP_CPU_ENABLED | (i == 0 ? MP_CPU_BSP : 0),
			/* family 6: Linux only prints these */
			.signature = 0x600,
			.features = 0x201,	/* FPU, APIC */
		};

		memcpy(p, &c, sizeof(c));
		p += sizeof(c);
		entries++;
	}
	{
		struct mp_bus bus = { .type = MP_BUS, .bus_id = 0 };
		struct mp_ioapic io = {
			.type = MP_IOAPIC, .id = ioapic_id, .version = MP_IOAPIC_VERSION,
			.flags = 1, .addr = MPTABLE_IOAPIC_ADDR,
		};

		memcpy(bus.bus_type, "ISA   ", 6);
		memcpy(p, &bus, sizeof(bus));
		p += sizeof(bus);
		memcpy(p, &io, sizeof(io));
		p += sizeof(io);
		entries += 2;
	}
	/* KVM's default routing wires ISA IRQ n to IOAPIC pin n. */
	for (i = 0; i < MPTABLE_ISA_IRQS; i++) {
		struct mp_intr in = {
			.type = MP_IOINTR, .irq_type = MP_INT, .src_bus = 0,
			.src_irq = (uint8_t)i, .dst_apic = ioapic_id, .dst_pin = (uint8_t)i,
		};

		memcpy(p, &in, sizeof(in));
		p += sizeof(in);
		entries++;
	}
	for (i = 0; i < MP_NR_LOCALINTR; i++) {
		struct mp_intr li = {
			.type = MP_LOCALINTR, .irq_type = i == 0 ? MP_EXTINT : MP_NMI,
			.src_bus = 0, .src_irq = 0, .dst_apic = 0xff, .dst_pin = (uint8_t)i,
		};

		memcpy(p, &li, sizeof(li));
		p += sizeof(li);
		entries++;
	}

	memset(&cfg, 0, sizeof(cfg));
	memcpy(cfg.signature, "PCMP", 4);
	cfg.length = (uint16_t)(need - sizeof(fl));
	cfg.spec_rev = MP_SPEC_REV;
	memcpy(cfg.oem, "KVMLU   ", 8);
	memcpy(cfg.product, "KVMLU-VMM   ", 12);
	cfg.entry_count = (uint16_t)entries;
	cfg.lapic_addr = MPTABLE_LAPIC_ADDR;
	memcpy(base + sizeof(fl), &cfg, sizeof(cfg));
	/* The checksum covers the header and every base entry. */
	base[sizeof(fl) + offsetof(struct mp_config, checksum)] =
		mp_checksum(base + sizeof(fl), cfg.length);

	memset(&fl, 0, sizeof(fl));
	memcpy(fl.signature, "_MP_", 4);
	fl.config_gpa = gpa + (uint32_t)sizeof(fl);
	fl.length = 1;
	fl.spec_rev = MP_SPEC_REV;
	fl.checksum = mp_checksum(&fl, sizeof(fl));
	memcpy(base, &fl, sizeof(fl));
	return 0;
}
