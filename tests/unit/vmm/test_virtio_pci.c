// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/virtio/virtio_pci.c: the function's config space
 * (header, capability chain, read-only fields, hostile offsets and widths,
 * the BAR sizing protocol, decoding only at home with Memory Space on),
 * the common cfg driving the shared state machine (features, queues,
 * widths), MSI-X (vectors refused past the table, the table's hostile
 * accesses, masks and the PBA, delivery with its address and data), the
 * ISR's read-to-clear and notify. No /dev/kvm: MSIs go to a recorder.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#define KVMLU_TEST_VIRTIO_MMIO
#include "common/le_bytes.h"
#include "tests/unit/vmm/virtio_test_support.h"
#include "vmm/virtio/virtio_mmio_state.h"
#include "vmm/virtio/virtio_pci.h"

#define HOME		0xd0008000ULL
#define F_VERSION_1	(1ULL << VIRTIO_F_VERSION_1)
#define F_DEV		(1ULL << 9)

struct msi_rec {
	unsigned int n;
	uint64_t addr;
	uint32_t data;
	int fail;
};

struct fixture {
	struct guestmem gm;
	struct virtio_mmio t;
	struct virtio_pci p;
	struct msi_rec msi;
	struct virtq_chain c;
};

static int record_msi(void *ctx, uint64_t addr, uint32_t data)
{
	struct msi_rec *r = ctx;

	if (r->fail)
		return r->fail;
	r->n++;
	r->addr = addr;
	r->data = data;
	return 0;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint8_t config[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

	tg_mem_init(&f->gm);
	assert_int_equal(virtio_mmio_init(&f->t, "test", 2, F_DEV, 2, config, sizeof(config),
					  &f->gm), 0);
	assert_int_equal(virtio_pci_init(&f->p, &f->t, 0x018000, HOME, record_msi, &f->msi), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	virtio_pci_destroy(&f->p);
	virtio_mmio_destroy(&f->t);
	tg_mem_free(&f->gm);
	free(f);
	return 0;
}

static uint32_t cfg_rd(struct virtio_pci *p, uint32_t off, unsigned int len)
{
	uint8_t d[4] = { 0 };

	virtio_pci_cfg_read(p, off, d, len);
	return le_get32(d) & (len == 4 ? 0xffffffffu : (1u << (8 * len)) - 1);
}

static void cfg_wr(struct virtio_pci *p, uint32_t off, uint32_t v, unsigned int len)
{
	uint8_t d[4];

	le_put32(d, v);
	virtio_pci_cfg_write(p, off, d, len);
}

static uint64_t bar_rd(struct virtio_pci *p, uint64_t off, unsigned int len)
{
	uint8_t d[8] = { 0 };
	uint64_t v = 0;

	virtio_pci_bar_read(p, off, d, len);
	for (unsigned int i = 0; i < len; i++)
		v |= (uint64_t)d[i] << (8 * i);
	return v;
}

static void bar_wr(struct virtio_pci *p, uint64_t off, uint64_t v, unsigned int len)
{
	uint8_t d[8];

	for (unsigned int i = 0; i < 8; i++)
		d[i] = (uint8_t)(v >> (8 * i));
	virtio_pci_bar_write(p, off, d, len);
}

/* What firmware leaves and Linux's pci core does before the driver: memory on, master on. */
static void enable_function(struct virtio_pci *p)
{
	cfg_wr(p, PCI_CFG_COMMAND, PCI_CMD_MEMORY | PCI_CMD_MASTER, 2);
}

/* Linux's virtio_pci_modern up to FEATURES_OK through the common cfg. */
static void pci_negotiate(struct virtio_pci *p, uint64_t features)
{
	bar_wr(p, VPCI_STATUS, 0, 1);
	bar_wr(p, VPCI_STATUS, VIRTIO_STATUS_ACKNOWLEDGE, 1);
	bar_wr(p, VPCI_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER, 1);
	bar_wr(p, VPCI_GFSELECT, 0, 4);
	bar_wr(p, VPCI_GF, (uint32_t)features, 4);
	bar_wr(p, VPCI_GFSELECT, 1, 4);
	bar_wr(p, VPCI_GF, (uint32_t)(features >> 32), 4);
	bar_wr(p, VPCI_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
	       VIRTIO_STATUS_FEATURES_OK, 1);
}

/* Queue q at the test rings (64-bit addresses as two halves, as Linux writes them). */
static void pci_queue(struct virtio_pci *p, uint16_t q, uint16_t vector)
{
	bar_wr(p, VPCI_Q_SELECT, q, 2);
	bar_wr(p, VPCI_Q_MSIX, vector, 2);
	bar_wr(p, VPCI_Q_DESC, (uint32_t)TG_DESC, 4);
	bar_wr(p, VPCI_Q_DESC + 4, 0, 4);
	bar_wr(p, VPCI_Q_AVAIL, (uint32_t)TG_AVAIL, 4);
	bar_wr(p, VPCI_Q_AVAIL + 4, 0, 4);
	bar_wr(p, VPCI_Q_USED, TG_USED, 8);	/* one 64-bit write works too */
	bar_wr(p, VPCI_Q_ENABLE, 1, 2);
}

static void driver_ok(struct virtio_pci *p)
{
	bar_wr(p, VPCI_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
	       VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK, 1);
}

/* MSI-X on, entry v unmasked with a recognisable message. */
static void msix_on(struct virtio_pci *p, unsigned int v)
{
	uint64_t e = VIRTIO_PCI_MSIX_TABLE_OFF + 16 * v;

	bar_wr(p, e, 0xfee00000u, 4);
	bar_wr(p, e + 4, 0, 4);
	bar_wr(p, e + 8, 0x4000 + v, 4);
	bar_wr(p, e + 12, 0, 4);
	cfg_wr(p, VIRTIO_PCI_CAP_MSIX + 2, MSIX_CTRL_ENABLE, 2);
}

/* One chain of one buffer on queue 0, taken and completed with an interrupt. */
static void complete_one(struct fixture *f, uint16_t idx)
{
	tg_desc(&f->gm, 0, TG_DATA, 16, 0, 0);
	tg_avail(&f->gm, VIRTQ_MAX_SIZE, idx, 0);
	assert_int_equal(virtio_mmio_pop(&f->t, 0, &f->c), 1);
	virtio_mmio_push(&f->t, 0, f->c.head, 0, true);
}

static void test_pci_header_identifies_a_modern_virtio_device(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(cfg_rd(&f->p, PCI_CFG_VENDOR, 2), 0x1af4);
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_DEVICE, 2), 0x1042);	/* 0x1040 + blk */
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_REVISION, 1), 1);
	assert_int_equal(cfg_rd(&f->p, 0x08, 4) >> 8, 0x018000);
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_HEADER_TYPE, 1), 0);
	assert_true(cfg_rd(&f->p, PCI_CFG_STATUS, 2) & PCI_STATUS_CAP_LIST);
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_BAR0, 4), (uint32_t)HOME | PCI_BAR_MEM64);
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_BAR0 + 4, 4), 0);
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_INT_PIN, 1), 0);	/* no INTx */
	assert_int_equal(cfg_rd(&f->p, 0x18, 4), 0);	/* BAR2 absent */
}

static void test_pci_capabilities_chain_to_every_structure(void **state)
{
	struct fixture *f = *state;
	unsigned int seen = 0, hops = 0, msix = 0;
	uint32_t at = cfg_rd(&f->p, PCI_CFG_CAP_PTR, 1);

	while (at && hops++ < 16) {
		uint32_t id = cfg_rd(&f->p, at, 1);

		if (id == 0x09) {
			uint32_t type = cfg_rd(&f->p, at + 3, 1);
			uint32_t off = cfg_rd(&f->p, at + 8, 4), len = cfg_rd(&f->p, at + 12, 4);

			assert_int_equal(cfg_rd(&f->p, at + 4, 1), 0);	/* BAR0 */
			seen |= 1u << type;
			if (type == 1)
				assert_true(off == VIRTIO_PCI_COMMON_OFF && len >= 0x38);
			if (type == 2) {
				assert_int_equal(off, VIRTIO_PCI_NOTIFY_OFF);
				assert_int_equal(cfg_rd(&f->p, at + 16, 4), VIRTIO_PCI_NOTIFY_MULT);
				assert_int_equal(len, 2 * VIRTIO_PCI_NOTIFY_MULT);
			}
			if (type == 3)
				assert_int_equal(off, VIRTIO_PCI_ISR_OFF);
			if (type == 4)
				assert_true(off == VIRTIO_PCI_DEVICE_OFF && len == 12);
		} else if (id == 0x11) {
			msix = at;
		}
		at = cfg_rd(&f->p, at + 1, 1);
	}
	assert_int_equal(seen, 0x1e);	/* common, notify, ISR, device */
	assert_int_equal(msix, VIRTIO_PCI_CAP_MSIX);
	assert_int_equal(cfg_rd(&f->p, msix + 2, 2) & 0x7ff, 2);	/* 3 vectors */
	assert_int_equal(cfg_rd(&f->p, msix + 4, 4), VIRTIO_PCI_MSIX_TABLE_OFF);
	assert_int_equal(cfg_rd(&f->p, msix + 8, 4), VIRTIO_PCI_MSIX_PBA_OFF);
}

static void test_pci_config_hostile_offsets_and_widths_change_nothing(void **state)
{
	struct fixture *f = *state;
	uint8_t before[VIRTIO_PCI_CFG_SIZE];
	static const struct { uint32_t off; unsigned int len; } bad[] = {
		{ 256, 1 }, { 256, 4 }, { 0xffffffffu, 4 }, { 255, 4 }, { 254, 4 },
		{ 1, 2 }, { 2, 4 }, { 0x11, 4 }, { 0, 3 }, { 0, 8 }, { 0, 0 },
	};

	memcpy(before, f->p.cfg, sizeof(before));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t d[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
		uint8_t ones[8];

		virtio_pci_cfg_write(&f->p, bad[i].off, d, bad[i].len);
		memset(d, 0, sizeof(d));
		memset(ones, 0xff, sizeof(ones));
		virtio_pci_cfg_read(&f->p, bad[i].off, d, bad[i].len);
		if (bad[i].len && bad[i].len <= 4)
			assert_memory_equal(d, ones, bad[i].len);
	}
	/* Read-only fields: ids, class, status, capabilities, pin. */
	cfg_wr(&f->p, PCI_CFG_VENDOR, 0xdeadbeef, 4);
	cfg_wr(&f->p, 0x08, 0xffffffff, 4);
	cfg_wr(&f->p, PCI_CFG_STATUS, 0xffff, 2);
	for (uint32_t off = 0x34; off < 0x100; off += 4)
		if (off != PCI_CFG_INT_LINE && off != VIRTIO_PCI_CAP_MSIX)
			cfg_wr(&f->p, off, 0xa5a5a5a5, 4);
	assert_memory_equal(before, f->p.cfg, sizeof(before));
}

static void test_pci_bar_sizing_reads_back_the_size(void **state)
{
	struct fixture *f = *state;

	enable_function(&f->p);
	assert_int_equal(bar_rd(&f->p, VPCI_NUM_QUEUES, 2), 2);
	/* Linux: decode off, all ones, read, restore. */
	cfg_wr(&f->p, PCI_CFG_COMMAND, 0, 2);
	cfg_wr(&f->p, PCI_CFG_BAR0, 0xffffffff, 4);
	cfg_wr(&f->p, PCI_CFG_BAR0 + 4, 0xffffffff, 4);
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_BAR0, 4),
			 (uint32_t)~(VIRTIO_PCI_BAR_SIZE - 1) | PCI_BAR_MEM64);
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_BAR0 + 4, 4), 0xffffffff);
	cfg_wr(&f->p, PCI_CFG_BAR0, (uint32_t)HOME, 4);
	cfg_wr(&f->p, PCI_CFG_BAR0 + 4, 0, 4);
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_BAR0, 4), (uint32_t)HOME | PCI_BAR_MEM64);
	/* Memory Space off: the BAR does not answer. */
	assert_int_equal(bar_rd(&f->p, VPCI_NUM_QUEUES, 2), 0xffff);
	enable_function(&f->p);
	assert_int_equal(bar_rd(&f->p, VPCI_NUM_QUEUES, 2), 2);
	/* Moved away from home: it does not answer either, and writes go nowhere. */
	cfg_wr(&f->p, PCI_CFG_BAR0, 0xe0000000u, 4);
	assert_int_equal(bar_rd(&f->p, VPCI_NUM_QUEUES, 2), 0xffff);
	bar_wr(&f->p, VPCI_STATUS, VIRTIO_STATUS_ACKNOWLEDGE, 1);
	assert_int_equal(f->t.status, 0);
	cfg_wr(&f->p, PCI_CFG_BAR0, (uint32_t)HOME, 4);
	assert_int_equal(bar_rd(&f->p, VPCI_NUM_QUEUES, 2), 2);
	/* The command register keeps only memory, master and INTx-disable. */
	cfg_wr(&f->p, PCI_CFG_COMMAND, 0xffff, 2);
	assert_int_equal(cfg_rd(&f->p, PCI_CFG_COMMAND, 2),
			 PCI_CMD_MEMORY | PCI_CMD_MASTER | PCI_CMD_INTX_DISABLE);
}

static void test_pci_common_cfg_drives_the_shared_state_machine(void **state)
{
	struct fixture *f = *state;

	enable_function(&f->p);
	bar_wr(&f->p, VPCI_DFSELECT, 1, 4);
	assert_int_equal(bar_rd(&f->p, VPCI_DF, 4), 1);	/* VERSION_1 is bit 32 */
	bar_wr(&f->p, VPCI_DFSELECT, 0, 4);
	assert_int_equal(bar_rd(&f->p, VPCI_DF, 4), (uint32_t)F_DEV);
	pci_negotiate(&f->p, F_VERSION_1 | F_DEV);
	assert_int_equal(bar_rd(&f->p, VPCI_STATUS, 1), 11);
	bar_wr(&f->p, VPCI_GFSELECT, 1, 4);
	assert_int_equal(bar_rd(&f->p, VPCI_GF, 4), 1);
	/* Queue size: the maximum until the driver picks one. */
	bar_wr(&f->p, VPCI_Q_SELECT, 1, 2);
	assert_int_equal(bar_rd(&f->p, VPCI_Q_SIZE, 2), VIRTQ_MAX_SIZE);
	assert_int_equal(bar_rd(&f->p, VPCI_Q_NOFF, 2), 1);
	bar_wr(&f->p, VPCI_Q_SIZE, 64, 2);
	assert_int_equal(bar_rd(&f->p, VPCI_Q_SIZE, 2), 64);
	/* A queue that is not there. */
	bar_wr(&f->p, VPCI_Q_SELECT, 2, 2);
	assert_int_equal(bar_rd(&f->p, VPCI_Q_SIZE, 2), 0);
	assert_int_equal(bar_rd(&f->p, VPCI_Q_MSIX, 2), VIRTIO_PCI_NO_VECTOR);
	bar_wr(&f->p, VPCI_Q_ENABLE, 1, 2);
	assert_int_equal(bar_rd(&f->p, VPCI_Q_ENABLE, 2), 0);
	/* Queue 0 with its default size, addresses in halves and whole. */
	pci_queue(&f->p, 0, VIRTIO_PCI_NO_VECTOR);
	assert_true(f->t.queues[0].ready);
	assert_int_equal(f->t.queues[0].size, VIRTQ_MAX_SIZE);
	assert_int_equal(f->t.queues[0].desc_gpa, TG_DESC);
	assert_int_equal(f->t.queues[0].avail_gpa, TG_AVAIL);
	assert_int_equal(f->t.queues[0].used_gpa, TG_USED);
	assert_int_equal(bar_rd(&f->p, VPCI_Q_USED, 8), TG_USED);
	assert_int_equal(bar_rd(&f->p, VPCI_Q_AVAIL, 4), TG_AVAIL);
	/* Wrong widths: a 2-byte read of a 4-byte field, a write inside a field. */
	assert_int_equal(bar_rd(&f->p, VPCI_DFSELECT, 2), 0);
	bar_wr(&f->p, VPCI_STATUS + 1, 0, 1);
	bar_wr(&f->p, VPCI_STATUS, 0, 4);
	assert_int_equal(bar_rd(&f->p, VPCI_STATUS, 1), 11);
	/* Read-only fields. */
	bar_wr(&f->p, VPCI_NUM_QUEUES, 9, 2);
	assert_int_equal(bar_rd(&f->p, VPCI_NUM_QUEUES, 2), 2);
	/* The device config through its own window, read-only. */
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_DEVICE_OFF + 4, 4), 0x08070605);
	bar_wr(&f->p, VIRTIO_PCI_DEVICE_OFF, 0, 4);
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_DEVICE_OFF, 1), 1);
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_DEVICE_OFF + 12, 4), 0);	/* past it */
	/* Reset through the status byte: queues and vectors are gone. */
	bar_wr(&f->p, VPCI_STATUS, 0, 1);
	assert_false(f->t.queues[0].ready);
	assert_int_equal(f->t.status, 0);
}

static void test_pci_vectors_past_the_table_read_back_as_no_vector(void **state)
{
	struct fixture *f = *state;
	static const uint16_t bad[] = { 3, 4, 0x7ff, 0x1234, 0xfffe };

	enable_function(&f->p);
	pci_negotiate(&f->p, F_VERSION_1);
	bar_wr(&f->p, VPCI_MSIX_CONFIG, 2, 2);
	assert_int_equal(bar_rd(&f->p, VPCI_MSIX_CONFIG, 2), 2);
	bar_wr(&f->p, VPCI_Q_SELECT, 1, 2);
	bar_wr(&f->p, VPCI_Q_MSIX, 1, 2);
	assert_int_equal(bar_rd(&f->p, VPCI_Q_MSIX, 2), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bar_wr(&f->p, VPCI_MSIX_CONFIG, bad[i], 2);
		assert_int_equal(bar_rd(&f->p, VPCI_MSIX_CONFIG, 2), VIRTIO_PCI_NO_VECTOR);
		bar_wr(&f->p, VPCI_Q_MSIX, bad[i], 2);
		assert_int_equal(bar_rd(&f->p, VPCI_Q_MSIX, 2), VIRTIO_PCI_NO_VECTOR);
	}
	/* A queue select past the queues writes no vector anywhere. */
	bar_wr(&f->p, VPCI_Q_SELECT, 0xffff, 2);
	bar_wr(&f->p, VPCI_Q_MSIX, 0, 2);
	assert_int_equal(f->p.queue_vector[0], VIRTIO_PCI_NO_VECTOR);
	assert_int_equal(f->p.queue_vector[1], VIRTIO_PCI_NO_VECTOR);
	/* Reset forgets them. */
	bar_wr(&f->p, VPCI_MSIX_CONFIG, 0, 2);
	bar_wr(&f->p, VPCI_STATUS, 0, 1);
	assert_int_equal(bar_rd(&f->p, VPCI_MSIX_CONFIG, 2), VIRTIO_PCI_NO_VECTOR);
}

static void test_pci_msix_table_hostile_accesses_are_ignored(void **state)
{
	struct fixture *f = *state;
	struct virtio_pci_msix_entry before[VIRTIO_PCI_MSIX_MAX];

	enable_function(&f->p);
	/* Entries start masked. */
	for (unsigned int v = 0; v < 3; v++)
		assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 16 * v + 12, 4), 1);
	memcpy(before, f->p.msix, sizeof(before));
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 16 * 3, 0x1234, 4);	/* past the table */
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 16 * 3 - 4 + 2, 0x1234, 4);	/* misaligned */
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 2, 0x1234, 2);	/* narrow */
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 44, 0xffffffffffffffffULL, 8); /* straddles the end */
	bar_wr(&f->p, VIRTIO_PCI_MSIX_PBA_OFF, 0xffffffff, 4);	/* PBA is read-only */
	bar_wr(&f->p, 0x7ffc, 0xffffffff, 4);			/* the BAR's last dword */
	assert_memory_equal(before, f->p.msix, sizeof(before));
	assert_int_equal(f->p.pba, 0);
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 16 * 3, 4), 0);
	/* Reserved bits: address bits 1:0 and control bits other than the mask. */
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF, 0xfee00003u, 4);
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 12, 0xfffffffe, 4);
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF, 4), 0xfee00000u);
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 12, 4), 0);
	/* A 64-bit write of address low and high at once. */
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 16, 0x00000001fee01000ULL, 8);
	assert_int_equal(f->p.msix[1].addr_lo, 0xfee01000u);
	assert_int_equal(f->p.msix[1].addr_hi, 1);
}

static void test_pci_msix_delivers_masks_and_pends(void **state)
{
	struct fixture *f = *state;

	enable_function(&f->p);
	pci_negotiate(&f->p, F_VERSION_1);
	pci_queue(&f->p, 0, 1);
	driver_ok(&f->p);
	/* MSI-X still off: the interrupt is counted lost, nothing sent. */
	complete_one(f, 0);
	assert_int_equal(f->msi.n, 0);
	assert_int_equal(f->p.msis_lost, 1);
	/* On and unmasked: sent with the entry's address and data, no ISR read needed. */
	msix_on(&f->p, 1);
	complete_one(f, 1);
	assert_int_equal(f->msi.n, 1);
	assert_int_equal(f->msi.addr, 0xfee00000u);
	assert_int_equal(f->msi.data, 0x4001);
	assert_int_equal(f->p.msis, 1);
	/* Entry masked: pending in the PBA, sent once at the unmask. */
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 16 + 12, 1, 4);
	complete_one(f, 2);
	assert_int_equal(f->msi.n, 1);
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_MSIX_PBA_OFF, 4), 1u << 1);
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 16 + 12, 0, 4);
	assert_int_equal(f->msi.n, 2);
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_MSIX_PBA_OFF, 4), 0);
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 16 + 12, 0, 4);
	assert_int_equal(f->msi.n, 2);
	/* Function mask: the same through the capability's control word. */
	cfg_wr(&f->p, VIRTIO_PCI_CAP_MSIX + 2, MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL, 2);
	complete_one(f, 3);
	assert_int_equal(f->msi.n, 2);
	cfg_wr(&f->p, VIRTIO_PCI_CAP_MSIX + 2, MSIX_CTRL_ENABLE, 2);
	assert_int_equal(f->msi.n, 3);
	/* The control word keeps its table size whatever is written. */
	cfg_wr(&f->p, VIRTIO_PCI_CAP_MSIX + 2, 0xffff, 2);
	assert_int_equal(cfg_rd(&f->p, VIRTIO_PCI_CAP_MSIX + 2, 2),
			 MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL | 2);
	cfg_wr(&f->p, VIRTIO_PCI_CAP_MSIX + 2, MSIX_CTRL_ENABLE, 2);
	/* A failed KVM_SIGNAL_MSI is counted, not retried. */
	f->msi.fail = -EINVAL;
	complete_one(f, 4);
	assert_int_equal(f->p.msis_lost, 2);
	/* The vector taken away: lost, and the eventfd path is not used either. */
	f->msi.fail = 0;
	bar_wr(&f->p, VPCI_Q_SELECT, 0, 2);
	bar_wr(&f->p, VPCI_Q_MSIX, VIRTIO_PCI_NO_VECTOR, 2);
	complete_one(f, 5);
	assert_int_equal(f->msi.n, 3);
	assert_int_equal(tg_eventfd(f->t.irq_fd), 0);
}

static void test_pci_device_error_raises_the_config_vector(void **state)
{
	struct fixture *f = *state;

	enable_function(&f->p);
	pci_negotiate(&f->p, F_VERSION_1);
	bar_wr(&f->p, VPCI_MSIX_CONFIG, 0, 2);
	pci_queue(&f->p, 0, 1);
	driver_ok(&f->p);
	msix_on(&f->p, 0);
	virtio_mmio_device_error(&f->t, "test");
	assert_int_equal(f->msi.n, 1);
	assert_int_equal(f->msi.data, 0x4000);
	assert_true(bar_rd(&f->p, VPCI_STATUS, 1) & VIRTIO_STATUS_NEEDS_RESET);
	/* ISR: the config bit, cleared by the read. */
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_ISR_OFF, 1), VIRTIO_INT_CONFIG);
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_ISR_OFF, 1), 0);
	assert_int_equal(bar_rd(&f->p, VIRTIO_PCI_ISR_OFF, 4), 0);	/* wrong width */
}

static void test_pci_notify_kicks_the_queue(void **state)
{
	struct fixture *f = *state;

	enable_function(&f->p);
	tg_eventfd(f->t.kick_fd[1]);
	bar_wr(&f->p, VIRTIO_PCI_NOTIFY_OFF + VIRTIO_PCI_NOTIFY_MULT, 1, 2);
	assert_int_equal(tg_eventfd(f->t.kick_fd[1]), 1);
	assert_int_equal(tg_eventfd(f->t.kick_fd[0]), 0);
	/* Past the queues, or misaligned: nothing. */
	bar_wr(&f->p, VIRTIO_PCI_NOTIFY_OFF + 2 * VIRTIO_PCI_NOTIFY_MULT, 2, 2);
	bar_wr(&f->p, VIRTIO_PCI_NOTIFY_OFF + 2, 0, 2);
	assert_int_equal(tg_eventfd(f->t.kick_fd[0]), 0);
	assert_int_equal(tg_eventfd(f->t.kick_fd[1]), 0);
}

static void test_pci_init_refuses_a_bad_bar_and_destroy_gives_irqs_back(void **state)
{
	struct fixture *f = *state;
	struct virtio_pci q;

	assert_int_equal(virtio_pci_init(&q, &f->t, 0, HOME + 0x1000, NULL, NULL), -EINVAL);
	assert_int_equal(virtio_pci_init(&q, &f->t, 0, 0, NULL, NULL), -EINVAL);
	assert_int_equal(virtio_pci_init(&q, &f->t, 0, 0xffff8000ULL + 0x8000, NULL, NULL),
			 -EINVAL);
	assert_int_equal(virtio_pci_init(&q, NULL, 0, HOME, NULL, NULL), -EINVAL);
	assert_ptr_equal(f->t.irq_ctx, &f->p);
	virtio_pci_destroy(&f->p);
	assert_null(f->t.irq_hook);
	/* Back on the eventfd: a device error writes it. */
	tg_negotiate(&f->t, F_VERSION_1);
	tg_queue(&f->t, 8);
	tg_driver_ok(&f->t);
	virtio_mmio_device_error(&f->t, "test");
	assert_int_equal(tg_eventfd(f->t.irq_fd), 1);
	assert_int_equal(virtio_pci_init(&f->p, &f->t, 0x018000, HOME, record_msi, &f->msi), 0);
}

/* The function's state out of one device and into another's fresh one. */
static void test_pci_state_moves_to_a_fresh_function(void **state)
{
	struct fixture *f = *state;
	struct virtio_mmio_state st;
	struct virtio_mmio t2;
	struct virtio_pci p2;
	struct msi_rec msi2 = { 0 };
	uint8_t config[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	char err[160];

	enable_function(&f->p);
	pci_negotiate(&f->p, F_VERSION_1);
	bar_wr(&f->p, VPCI_MSIX_CONFIG, 2, 2);
	pci_queue(&f->p, 0, 1);
	driver_ok(&f->p);
	msix_on(&f->p, 1);
	bar_wr(&f->p, VIRTIO_PCI_MSIX_TABLE_OFF + 16 + 12, 1, 4);	/* masked ... */
	complete_one(f, 0);						/* ... so pending */
	cfg_wr(&f->p, PCI_CFG_INT_LINE, 11, 1);
	assert_int_equal(virtio_mmio_get_state(&f->t, &st), 0);
	assert_true(st.pci.present);
	assert_int_equal(st.pci.pba, 1u << 1);
	assert_int_equal(virtio_mmio_state_validate(&st, 2, 2, err, sizeof(err)), 0);

	assert_int_equal(virtio_mmio_init(&t2, "test2", 2, F_DEV, 2, config, sizeof(config),
					  &f->gm), 0);
	/* Without a function in front: refused, a virtio-mmio device. */
	assert_int_equal(virtio_mmio_set_state(&t2, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "virtio-pci device, this VM's is virtio-mmio"));
	assert_int_equal(virtio_pci_init(&p2, &t2, 0x018000, HOME, record_msi, &msi2), 0);
	assert_int_equal(virtio_mmio_set_state(&t2, &st, err, sizeof(err)), 0);
	assert_memory_equal(p2.cfg, f->p.cfg, sizeof(p2.cfg));
	assert_memory_equal(p2.msix, f->p.msix, sizeof(p2.msix));
	assert_int_equal(bar_rd(&p2, VPCI_MSIX_CONFIG, 2), 2);
	assert_int_equal(bar_rd(&p2, VPCI_Q_MSIX, 2), 1);
	assert_int_equal(bar_rd(&p2, VPCI_STATUS, 1), 15);
	/* No interrupt at the restore; the pending one fires at the unmask, once. */
	assert_int_equal(msi2.n, 0);
	bar_wr(&p2, VIRTIO_PCI_MSIX_TABLE_OFF + 16 + 12, 0, 4);
	assert_int_equal(msi2.n, 1);
	assert_int_equal(msi2.data, 0x4001);
	virtio_pci_destroy(&p2);
	virtio_mmio_destroy(&t2);
	/* And a virtio-mmio state is refused by a device with a function. */
	virtio_pci_destroy(&f->p);
	assert_int_equal(virtio_mmio_get_state(&f->t, &st), 0);
	assert_false(st.pci.present);
	assert_int_equal(virtio_pci_init(&f->p, &f->t, 0x018000, HOME, record_msi, &f->msi), 0);
	assert_int_equal(virtio_mmio_set_state(&f->t, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "virtio-mmio device, this VM's is virtio-pci"));
}

static void test_pci_state_hostile_values_are_refused_by_name(void **state)
{
	struct fixture *f = *state;
	struct virtio_mmio_state st;
	struct virtio_pci_fn_state s;
	char err[160];
	enable_function(&f->p);
	assert_int_equal(virtio_mmio_get_state(&f->t, &st), 0);
	assert_int_equal(virtio_pci_fn_state_validate(&st.pci, 2, err, sizeof(err)), 0);
#define BAD(expr, text) do {						\
		s = st.pci;							\
		expr;								\
		assert_int_equal(virtio_pci_fn_state_validate(&s, 2, err, sizeof(err)), -EINVAL); \
		if (!strstr(err, text))						\
			fail_msg("%s: '%s' lacks '%s'", #expr, err, text);	\
	} while (0)
	BAD(s.nr_vectors = 4, "4 MSI-X vectors, the device has 3");
	BAD(s.nr_vectors = 0xffffffffu, "MSI-X vectors");
	BAD(s.command = 0x0100, "command 0x100");
	BAD(s.bar0_lo = 0xd0000000, "not a 32 KiB 64-bit BAR");
	BAD(s.bar0_lo = 0xd0001004, "not a 32 KiB 64-bit BAR");
	BAD(s.int_line = 256, "interrupt line 256");
	BAD(s.msix_ctrl = 0x8002, "MSI-X control 0x8002");
	BAD(s.msix[2][0] = 0xfee00001, "entry 2: reserved bits");
	BAD(s.msix[0][3] = 3, "entry 0: reserved bits");
	BAD(s.pba = 8, "PBA 0x8 beyond 3 vectors");
	BAD(s.config_vector = 3, "config vector 3 of 3");
	BAD(s.queue_vector[1] = 0x7fff, "queue 1 vector 32767");
#undef BAD
	/* A queue the device lacks may have no vector but NO_VECTOR. */
	s = st.pci;
	s.nr_vectors = 2;
	s.queue_vector[1] = 0;
	assert_int_equal(virtio_pci_fn_state_validate(&s, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "queue 1 vector 0"));
	/* A BAR half way through sizing is a value a guest can have. */
	s = st.pci;
	s.bar0_lo = 0xffff8004;
	s.bar0_hi = 0xffffffff;
	assert_int_equal(virtio_pci_fn_state_validate(&s, 2, err, sizeof(err)), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_pci_header_identifies_a_modern_virtio_device),
		T(test_pci_capabilities_chain_to_every_structure),
		T(test_pci_config_hostile_offsets_and_widths_change_nothing),
		T(test_pci_bar_sizing_reads_back_the_size),
		T(test_pci_common_cfg_drives_the_shared_state_machine),
		T(test_pci_vectors_past_the_table_read_back_as_no_vector),
		T(test_pci_msix_table_hostile_accesses_are_ignored),
		T(test_pci_msix_delivers_masks_and_pends),
		T(test_pci_device_error_raises_the_config_vector),
		T(test_pci_notify_kicks_the_queue),
		T(test_pci_init_refuses_a_bad_bar_and_destroy_gives_irqs_back),
		T(test_pci_state_moves_to_a_fresh_function),
		T(test_pci_state_hostile_values_are_refused_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
