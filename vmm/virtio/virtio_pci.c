// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-pci, modern (see virtio_pci.h): config space, BAR0 and MSI-X.
 * The common cfg is a translation onto the virtio-mmio registers of the
 * same state machine (virtio_mmio_reg_*_locked), so feature negotiation,
 * the status rules, queue setup checks and device errors are one code.
 */
#include <errno.h>
#include <string.h>

#include "common/err.h"
#include "common/le_bytes.h"
#include "vmm/virtio/virtio_mmio_state.h"
#include "vmm/virtio/virtio_pci.h"

static void bar_read(void *dev, uint64_t off, uint8_t *data, unsigned int len)
{
	virtio_pci_bar_read(dev, off, data, len);
}

static void bar_write(void *dev, uint64_t off, const uint8_t *data, unsigned int len)
{
	virtio_pci_bar_write(dev, off, data, len);
}

const struct io_dev_ops virtio_pci_bar_ops = {
	.read = bar_read,
	.write = bar_write,
};

/* With p->lock held. */
static uint16_t msix_ctrl(const struct virtio_pci *p)
{
	return le_get16(p->cfg + VIRTIO_PCI_CAP_MSIX + 2);
}

static void msix_fire(struct virtio_pci *p, unsigned int v)
{
	const struct virtio_pci_msix_entry *e = &p->msix[v];
	uint64_t addr = (uint64_t)e->addr_hi << 32 | e->addr_lo;

	if (p->signal_msi && p->signal_msi(p->msi_ctx, addr, e->data) == 0)
		p->msis++;
	else
		p->msis_lost++;
}

/* With p->lock held: vector v now, or its PBA bit while it is masked. */
static void msix_raise(struct virtio_pci *p, unsigned int v)
{
	uint16_t ctrl = msix_ctrl(p);

	if (v >= p->nr_vectors || !(ctrl & MSIX_CTRL_ENABLE)) {
		p->msis_lost++;
		return;
	}
	if ((ctrl & MSIX_CTRL_MASKALL) || (p->msix[v].ctrl & MSIX_ENTRY_MASKED)) {
		p->pba |= 1u << v;
		return;
	}
	msix_fire(p, v);
}

/* With p->lock held, after a mask or enable changed: what is pending and unmasked fires. */
static void msix_deliver_pending(struct virtio_pci *p)
{
	uint16_t ctrl = msix_ctrl(p);

	if (!(ctrl & MSIX_CTRL_ENABLE) || (ctrl & MSIX_CTRL_MASKALL))
		return;
	for (unsigned int v = 0; v < p->nr_vectors; v++) {
		if (!(p->pba & (1u << v)) || (p->msix[v].ctrl & MSIX_ENTRY_MASKED))
			continue;
		p->pba &= ~(1u << v);
		msix_fire(p, v);
	}
}

/* The core's interrupt hook: called with t->lock held. */
static void pci_irq(void *ctx, unsigned int src)
{
	struct virtio_pci *p = ctx;
	unsigned int v;

	if (src == VIRTIO_IRQ_SRC_CONFIG)
		v = p->config_vector;
	else
		v = src < VIRTIO_MMIO_MAX_QUEUES ? p->queue_vector[src] : VIRTIO_PCI_NO_VECTOR;
	pthread_mutex_lock(&p->lock);
	msix_raise(p, v);
	pthread_mutex_unlock(&p->lock);
}

/* State capture (virtio_mmio_get_state): with t->lock held. */
static void pci_get(void *ctx, struct virtio_pci_fn_state *s)
{
	struct virtio_pci *p = ctx;

	memset(s, 0, sizeof(*s));
	s->present = true;
	s->config_vector = p->config_vector;
	for (unsigned int q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++)
		s->queue_vector[q] = p->queue_vector[q];
	pthread_mutex_lock(&p->lock);
	s->command = le_get16(p->cfg + PCI_CFG_COMMAND);
	s->bar0_lo = le_get32(p->cfg + PCI_CFG_BAR0);
	s->bar0_hi = le_get32(p->cfg + PCI_CFG_BAR0 + 4);
	s->int_line = p->cfg[PCI_CFG_INT_LINE];
	s->msix_ctrl = msix_ctrl(p) & (MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL);
	s->nr_vectors = p->nr_vectors;
	for (unsigned int v = 0; v < p->nr_vectors; v++) {
		s->msix[v][0] = p->msix[v].addr_lo;
		s->msix[v][1] = p->msix[v].addr_hi;
		s->msix[v][2] = p->msix[v].data;
		s->msix[v][3] = p->msix[v].ctrl;
	}
	s->pba = p->pba;
	pthread_mutex_unlock(&p->lock);
}

/* State restore, validated (virtio_pci_fn_state_validate): with t->lock held. */
static void pci_set(void *ctx, const struct virtio_pci_fn_state *s)
{
	struct virtio_pci *p = ctx;
	uint16_t ctrl;

	p->config_vector = (uint16_t)s->config_vector;
	for (unsigned int q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++)
		p->queue_vector[q] = (uint16_t)s->queue_vector[q];
	pthread_mutex_lock(&p->lock);
	le_put16(p->cfg + PCI_CFG_COMMAND, (uint16_t)s->command);
	le_put32(p->cfg + PCI_CFG_BAR0, s->bar0_lo);
	le_put32(p->cfg + PCI_CFG_BAR0 + 4, s->bar0_hi);
	p->cfg[PCI_CFG_INT_LINE] = (uint8_t)s->int_line;
	ctrl = (uint16_t)((msix_ctrl(p) & ~(MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL)) | s->msix_ctrl);
	le_put16(p->cfg + VIRTIO_PCI_CAP_MSIX + 2, ctrl);
	for (unsigned int v = 0; v < p->nr_vectors; v++)
		p->msix[v] = (struct virtio_pci_msix_entry){
			s->msix[v][0], s->msix[v][1], s->msix[v][2], s->msix[v][3],
		};
	p->pba = s->pba;
	pthread_mutex_unlock(&p->lock);
}

int virtio_pci_fn_state_validate(const struct virtio_pci_fn_state *s, uint32_t nr_queues,
				 char *err, size_t errlen)
{
	if (nr_queues == 0 || nr_queues > VIRTIO_MMIO_MAX_QUEUES || s->nr_vectors != nr_queues + 1)
		return kvmlu_err(err, errlen, -EINVAL, "pci: %u MSI-X vectors, the device has %u",
				 s->nr_vectors, nr_queues + 1);
	if (s->command & ~(uint32_t)(PCI_CMD_MEMORY | PCI_CMD_MASTER | PCI_CMD_INTX_DISABLE))
		return kvmlu_err(err, errlen, -EINVAL, "pci: command 0x%x has bits a driver cannot set",
				 s->command);
	/* Any address the BAR's writable bits allow (a guest may be half way through sizing it). */
	if ((s->bar0_lo & 0xf) != PCI_BAR_MEM64 || (s->bar0_lo & (VIRTIO_PCI_BAR_SIZE - 1) & ~0xfu))
		return kvmlu_err(err, errlen, -EINVAL, "pci: BAR0 low 0x%x is not a 32 KiB 64-bit BAR",
				 s->bar0_lo);
	if (s->int_line > 0xff)
		return kvmlu_err(err, errlen, -EINVAL, "pci: interrupt line %u", s->int_line);
	if (s->msix_ctrl & ~(uint32_t)(MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL))
		return kvmlu_err(err, errlen, -EINVAL, "pci: MSI-X control 0x%x has other bits",
				 s->msix_ctrl);
	for (unsigned int v = 0; v < s->nr_vectors; v++)
		if ((s->msix[v][0] & 3) || (s->msix[v][3] & ~MSIX_ENTRY_MASKED))
			return kvmlu_err(err, errlen, -EINVAL,
					 "pci: MSI-X entry %u: reserved bits set (address 0x%x, control 0x%x)",
					 v, s->msix[v][0], s->msix[v][3]);
	if (s->pba >> s->nr_vectors)
		return kvmlu_err(err, errlen, -EINVAL, "pci: PBA 0x%x beyond %u vectors", s->pba,
				 s->nr_vectors);
	if (s->config_vector >= s->nr_vectors && s->config_vector != VIRTIO_PCI_NO_VECTOR)
		return kvmlu_err(err, errlen, -EINVAL, "pci: config vector %u of %u", s->config_vector,
				 s->nr_vectors);
	for (unsigned int q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++) {
		uint32_t v = s->queue_vector[q];

		if (v != VIRTIO_PCI_NO_VECTOR && (q >= nr_queues || v >= s->nr_vectors))
			return kvmlu_err(err, errlen, -EINVAL, "pci: queue %u vector %u of %u", q, v,
					 s->nr_vectors);
	}
	return 0;
}

static void cap_put(uint8_t *c, uint8_t next, uint8_t len, uint8_t type, uint32_t off,
		    uint32_t length)
{
	c[0] = 0x09;		/* vendor-specific */
	c[1] = next;
	c[2] = len;
	c[3] = type;
	c[4] = 0;		/* BAR0 */
	le_put32(c + 8, off);
	le_put32(c + 12, length);
}

static void set_wmask(struct virtio_pci *p, unsigned int off, uint32_t mask, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		p->wmask[off + i] = (uint8_t)(mask >> (8 * i));
}

int virtio_pci_init(struct virtio_pci *p, struct virtio_mmio *t, uint32_t class_code,
		    uint64_t bar_home, virtio_pci_msi_fn signal_msi, void *msi_ctx)
{
	uint8_t *c;

	memset(p, 0, sizeof(*p));
	if (!t || !t->nr_queues || t->nr_queues > VIRTIO_MMIO_MAX_QUEUES ||
	    bar_home % VIRTIO_PCI_BAR_SIZE || !bar_home ||
	    bar_home + VIRTIO_PCI_BAR_SIZE > 0x100000000ULL)
		return -EINVAL;
	p->t = t;
	p->bar_home = bar_home;
	p->nr_vectors = t->nr_queues + 1;
	p->signal_msi = signal_msi;
	p->msi_ctx = msi_ctx;
	p->config_vector = VIRTIO_PCI_NO_VECTOR;
	for (unsigned int q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++)
		p->queue_vector[q] = VIRTIO_PCI_NO_VECTOR;
	for (unsigned int v = 0; v < VIRTIO_PCI_MSIX_MAX; v++)
		p->msix[v].ctrl = MSIX_ENTRY_MASKED;	/* masked at reset (PCI 3.0 6.8.2.9) */

	c = p->cfg;
	le_put16(c + PCI_CFG_VENDOR, VIRTIO_PCI_VENDOR);
	le_put16(c + PCI_CFG_DEVICE, (uint16_t)(VIRTIO_PCI_DEVICE_BASE + t->device_id));
	le_put16(c + PCI_CFG_STATUS, PCI_STATUS_CAP_LIST);
	c[PCI_CFG_REVISION] = 1;	/* modern only (virtio 1.x 4.1.2.1) */
	c[PCI_CFG_CLASS] = (uint8_t)class_code;
	c[PCI_CFG_CLASS + 1] = (uint8_t)(class_code >> 8);
	c[PCI_CFG_CLASS + 2] = (uint8_t)(class_code >> 16);
	le_put32(c + PCI_CFG_BAR0, (uint32_t)bar_home | PCI_BAR_MEM64);
	le_put32(c + PCI_CFG_BAR0 + 4, (uint32_t)(bar_home >> 32));
	le_put16(c + PCI_CFG_SUBSYS_VENDOR, VIRTIO_PCI_VENDOR);
	le_put16(c + PCI_CFG_SUBSYS, (uint16_t)(0x40 + t->device_id));
	c[PCI_CFG_CAP_PTR] = VIRTIO_PCI_CAP_COMMON;
	cap_put(c + VIRTIO_PCI_CAP_COMMON, VIRTIO_PCI_CAP_NOTIFY, 16, 1, VIRTIO_PCI_COMMON_OFF,
		VIRTIO_PCI_COMMON_LEN);
	cap_put(c + VIRTIO_PCI_CAP_NOTIFY, VIRTIO_PCI_CAP_ISR, 20, 2, VIRTIO_PCI_NOTIFY_OFF,
		VIRTIO_PCI_NOTIFY_MULT * t->nr_queues);
	le_put32(c + VIRTIO_PCI_CAP_NOTIFY + 16, VIRTIO_PCI_NOTIFY_MULT);
	cap_put(c + VIRTIO_PCI_CAP_ISR, VIRTIO_PCI_CAP_DEVICE, 16, 3, VIRTIO_PCI_ISR_OFF, 1);
	cap_put(c + VIRTIO_PCI_CAP_DEVICE, VIRTIO_PCI_CAP_MSIX, 16, 4, VIRTIO_PCI_DEVICE_OFF,
		t->config_len);
	c[VIRTIO_PCI_CAP_MSIX] = 0x11;	/* MSI-X */
	c[VIRTIO_PCI_CAP_MSIX + 1] = 0;	/* the last */
	le_put16(c + VIRTIO_PCI_CAP_MSIX + 2, (uint16_t)(p->nr_vectors - 1));
	le_put32(c + VIRTIO_PCI_CAP_MSIX + 4, VIRTIO_PCI_MSIX_TABLE_OFF);	/* BIR 0 */
	le_put32(c + VIRTIO_PCI_CAP_MSIX + 8, VIRTIO_PCI_MSIX_PBA_OFF);

	set_wmask(p, PCI_CFG_COMMAND, PCI_CMD_MEMORY | PCI_CMD_MASTER | PCI_CMD_INTX_DISABLE, 2);
	set_wmask(p, PCI_CFG_BAR0, ~(VIRTIO_PCI_BAR_SIZE - 1), 4);
	set_wmask(p, PCI_CFG_BAR0 + 4, 0xffffffffu, 4);
	set_wmask(p, PCI_CFG_INT_LINE, 0xff, 1);
	set_wmask(p, VIRTIO_PCI_CAP_MSIX + 2, MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL, 2);

	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_lock(&t->lock);
	t->irq_ctx = p;
	t->irq_hook = pci_irq;
	t->xport_get = pci_get;
	t->xport_set = pci_set;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void virtio_pci_destroy(struct virtio_pci *p)
{
	if (!p->t)
		return;
	pthread_mutex_lock(&p->t->lock);
	p->t->irq_hook = NULL;
	p->t->irq_ctx = NULL;
	p->t->xport_get = NULL;
	p->t->xport_set = NULL;
	pthread_mutex_unlock(&p->t->lock);
	pthread_mutex_destroy(&p->lock);
	p->t = NULL;
}

void virtio_pci_cfg_read(struct virtio_pci *p, uint32_t off, uint8_t *data, unsigned int len)
{
	if ((len != 1 && len != 2 && len != 4) || off >= VIRTIO_PCI_CFG_SIZE || off % len) {
		memset(data, 0xff, len <= 4 ? len : 4);
		return;
	}
	pthread_mutex_lock(&p->lock);
	memcpy(data, p->cfg + off, len);
	pthread_mutex_unlock(&p->lock);
}

void virtio_pci_cfg_write(struct virtio_pci *p, uint32_t off, const uint8_t *data,
			  unsigned int len)
{
	uint16_t old_ctrl;

	if ((len != 1 && len != 2 && len != 4) || off >= VIRTIO_PCI_CFG_SIZE || off % len)
		return;
	pthread_mutex_lock(&p->lock);
	old_ctrl = msix_ctrl(p);
	for (unsigned int i = 0; i < len; i++) {
		uint8_t m = p->wmask[off + i];

		p->cfg[off + i] = (uint8_t)((p->cfg[off + i] & ~m) | (data[i] & m));
	}
	/* Enable set or the function mask cleared: what waited fires now. */
	if (msix_ctrl(p) != old_ctrl)
		msix_deliver_pending(p);
	pthread_mutex_unlock(&p->lock);
}

/* BAR0 answers at home only, with Memory Space on (p->lock held). */
static bool decoding(const struct virtio_pci *p)
{
	uint64_t bar = ((uint64_t)le_get32(p->cfg + PCI_CFG_BAR0 + 4) << 32) |
		       (le_get32(p->cfg + PCI_CFG_BAR0) & ~0xfu);

	return (le_get16(p->cfg + PCI_CFG_COMMAND) & PCI_CMD_MEMORY) && bar == p->bar_home;
}

/* The virtio-mmio register of a common cfg ring address half (0x20..0x37). */
static uint64_t ring_reg(uint64_t off)
{
	static const uint64_t regs[] = {
		VIRTIO_MMIO_QUEUE_DESC_LOW, VIRTIO_MMIO_QUEUE_DESC_HIGH,
		VIRTIO_MMIO_QUEUE_DRIVER_LOW, VIRTIO_MMIO_QUEUE_DRIVER_HIGH,
		VIRTIO_MMIO_QUEUE_DEVICE_LOW, VIRTIO_MMIO_QUEUE_DEVICE_HIGH,
	};
	return regs[(off - VPCI_Q_DESC) / 4];
}

/* The width of the common cfg field at off, 0 if no field starts there. */
static unsigned int common_width(uint64_t off)
{
	switch (off) {
	case VPCI_DFSELECT: case VPCI_DF: case VPCI_GFSELECT: case VPCI_GF:
		return 4;
	case VPCI_MSIX_CONFIG: case VPCI_NUM_QUEUES: case VPCI_Q_SELECT: case VPCI_Q_SIZE:
	case VPCI_Q_MSIX: case VPCI_Q_ENABLE: case VPCI_Q_NOFF: case 0x38: case 0x3a:
		return 2;
	case VPCI_STATUS: case VPCI_CFG_GENERATION:
		return 1;
	}
	/* The 64-bit ring addresses as 32-bit halves (or whole: common_width_ok). */
	if (off >= VPCI_Q_DESC && off < VPCI_Q_USED + 8 && off % 4 == 0)
		return 4;
	return 0;
}

/* A whole field, or a 64-bit ring address in one access. */
static bool common_width_ok(uint64_t off, unsigned int len)
{
	unsigned int w = common_width(off);

	if (w && len == w)
		return true;
	return len == 8 && off >= VPCI_Q_DESC && off < VPCI_Q_USED + 8 && off % 8 == 0;
}

static struct virtq *sel_queue(struct virtio_pci *p)
{
	struct virtio_mmio *t = p->t;

	return t->queue_sel < t->nr_queues ? &t->queues[t->queue_sel] : NULL;
}

/* With t->lock held. */
static uint64_t common_read(struct virtio_pci *p, uint64_t off)
{
	struct virtio_mmio *t = p->t;
	struct virtq *q = sel_queue(p);
	uint64_t v;

	switch (off) {
	case VPCI_DFSELECT:
		return t->device_features_sel;
	case VPCI_DF:
		return virtio_mmio_reg_read_locked(t, VIRTIO_MMIO_DEVICE_FEATURES);
	case VPCI_GFSELECT:
		return t->driver_features_sel;
	case VPCI_GF:
		return t->driver_features_sel > 1 ? 0 :
		       (uint32_t)(t->driver_features >> (32 * t->driver_features_sel));
	case VPCI_MSIX_CONFIG:
		return p->config_vector;
	case VPCI_NUM_QUEUES:
		return t->nr_queues;
	case VPCI_STATUS:
		return t->status & 0xff;
	case VPCI_CFG_GENERATION:
		return t->config_generation & 0xff;
	case VPCI_Q_SELECT:
		return t->queue_sel & 0xffff;
	case VPCI_Q_SIZE:
		/* The maximum until the driver picks a smaller one (4.1.4.3.2). */
		return q ? (q->size ? q->size : VIRTQ_MAX_SIZE) : 0;
	case VPCI_Q_MSIX:
		return q ? p->queue_vector[t->queue_sel] : VIRTIO_PCI_NO_VECTOR;
	case VPCI_Q_ENABLE:
		return q ? q->ready : 0;
	case VPCI_Q_NOFF:
		return q ? t->queue_sel : 0;
	}
	if (off >= VPCI_Q_DESC && off < VPCI_Q_USED + 8 && q) {
		unsigned int k = (unsigned int)((off - VPCI_Q_DESC) / 8);
		uint64_t gpa = k == 0 ? q->desc_gpa : k == 1 ? q->avail_gpa : q->used_gpa;

		v = off % 8 ? gpa >> 32 : gpa;
		return v;
	}
	return 0;
}

/* A vector the table has, or NO_VECTOR: what the driver reads back tells it (4.1.5.1.2). */
static uint16_t valid_vector(const struct virtio_pci *p, uint64_t v)
{
	return v < p->nr_vectors ? (uint16_t)v : VIRTIO_PCI_NO_VECTOR;
}

/* With t->lock held; len is the field's width or a 32-bit half of a ring address. */
static void common_write(struct virtio_pci *p, uint64_t off, uint64_t v, unsigned int len)
{
	struct virtio_mmio *t = p->t;
	struct virtq *q = sel_queue(p);

	switch (off) {
	case VPCI_DFSELECT:
		virtio_mmio_reg_write_locked(t, VIRTIO_MMIO_DEVICE_FEATURES_SEL, (uint32_t)v);
		return;
	case VPCI_GFSELECT:
		virtio_mmio_reg_write_locked(t, VIRTIO_MMIO_DRIVER_FEATURES_SEL, (uint32_t)v);
		return;
	case VPCI_GF:
		virtio_mmio_reg_write_locked(t, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)v);
		return;
	case VPCI_MSIX_CONFIG:
		p->config_vector = valid_vector(p, v);
		return;
	case VPCI_STATUS:
		virtio_mmio_reg_write_locked(t, VIRTIO_MMIO_STATUS, (uint32_t)v);
		if (v == 0) {
			/* A reset forgets the vectors too (the driver sets them again). */
			p->config_vector = VIRTIO_PCI_NO_VECTOR;
			for (unsigned int i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++)
				p->queue_vector[i] = VIRTIO_PCI_NO_VECTOR;
		}
		return;
	case VPCI_Q_SELECT:
		virtio_mmio_reg_write_locked(t, VIRTIO_MMIO_QUEUE_SEL, (uint32_t)v);
		return;
	case VPCI_Q_SIZE:
		virtio_mmio_reg_write_locked(t, VIRTIO_MMIO_QUEUE_NUM, (uint32_t)v);
		return;
	case VPCI_Q_MSIX:
		if (q)
			p->queue_vector[t->queue_sel] = valid_vector(p, v);
		return;
	case VPCI_Q_ENABLE:
		/* Only 1 is defined for a driver (no VIRTIO_F_RING_RESET offered). */
		if (v != 1 || !q)
			return;
		if (!q->size)
			virtio_mmio_reg_write_locked(t, VIRTIO_MMIO_QUEUE_NUM, VIRTQ_MAX_SIZE);
		virtio_mmio_reg_write_locked(t, VIRTIO_MMIO_QUEUE_READY, 1);
		return;
	}
	if (off >= VPCI_Q_DESC && off < VPCI_Q_USED + 8) {
		virtio_mmio_reg_write_locked(t, ring_reg(off), (uint32_t)v);
		if (len == 8)
			virtio_mmio_reg_write_locked(t, ring_reg(off + 4), (uint32_t)(v >> 32));
	}
	/* Read-only fields (DF, NUM_QUEUES, CFG_GENERATION, Q_NOFF) ignore writes. */
}

static uint64_t get_le(const uint8_t *d, unsigned int len)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < len; i++)
		v |= (uint64_t)d[i] << (8 * i);
	return v;
}

static void put_le(uint8_t *d, uint64_t v, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		d[i] = (uint8_t)(v >> (8 * i));
}

/* MSI-X table (32- or 64-bit aligned) and PBA, p->lock held. */
static void msix_read(struct virtio_pci *p, uint64_t off, uint8_t *data, unsigned int len)
{
	if ((len != 4 && len != 8) || off % len)
		return;
	if (off >= VIRTIO_PCI_MSIX_TABLE_OFF &&
	    off + len <= VIRTIO_PCI_MSIX_TABLE_OFF + 16ULL * p->nr_vectors) {
		memcpy(data, (uint8_t *)p->msix + (off - VIRTIO_PCI_MSIX_TABLE_OFF), len);
	} else if (off >= VIRTIO_PCI_MSIX_PBA_OFF && off + len <= VIRTIO_PCI_MSIX_PBA_OFF + 8) {
		uint64_t pba = p->pba;

		put_le(data, pba >> (8 * (off - VIRTIO_PCI_MSIX_PBA_OFF)), len);
	}
}

static void msix_write(struct virtio_pci *p, uint64_t off, const uint8_t *data,
		       unsigned int len)
{
	uint32_t w[2];

	/* The PBA is read-only; the table takes aligned dwords and qwords. */
	if ((len != 4 && len != 8) || off % len || off < VIRTIO_PCI_MSIX_TABLE_OFF ||
	    off + len > VIRTIO_PCI_MSIX_TABLE_OFF + 16ULL * p->nr_vectors)
		return;
	memcpy(w, data, len);
	for (unsigned int i = 0; i < len / 4; i++) {
		uint64_t o = off - VIRTIO_PCI_MSIX_TABLE_OFF + 4 * i;
		struct virtio_pci_msix_entry *e = &p->msix[o / 16];

		switch (o % 16) {
		case 0:
			e->addr_lo = w[i] & ~3u;	/* dword-aligned (PCI 3.0 6.8.2.4) */
			break;
		case 4:
			e->addr_hi = w[i];
			break;
		case 8:
			e->data = w[i];
			break;
		case 12:
			e->ctrl = w[i] & MSIX_ENTRY_MASKED;
			break;
		}
	}
	msix_deliver_pending(p);
}

void virtio_pci_bar_read(struct virtio_pci *p, uint64_t off, uint8_t *data, unsigned int len)
{
	struct virtio_mmio *t = p->t;
	bool on;

	memset(data, 0, len);
	pthread_mutex_lock(&p->lock);
	on = decoding(p);
	if (on && off >= VIRTIO_PCI_MSIX_TABLE_OFF)
		msix_read(p, off, data, len);
	pthread_mutex_unlock(&p->lock);
	if (!on) {
		memset(data, 0xff, len);
		return;
	}
	if (off < VIRTIO_PCI_COMMON_LEN) {
		if (common_width_ok(off, len)) {
			pthread_mutex_lock(&t->lock);
			put_le(data, common_read(p, off), len);
			pthread_mutex_unlock(&t->lock);
		}
	} else if (off == VIRTIO_PCI_ISR_OFF && len == 1) {
		/* Read to clear (4.1.4.5); a driver on MSI-X never reads it. */
		pthread_mutex_lock(&t->lock);
		data[0] = (uint8_t)t->interrupt_status;
		t->interrupt_status = 0;
		pthread_mutex_unlock(&t->lock);
	} else if (off >= VIRTIO_PCI_DEVICE_OFF && off < VIRTIO_PCI_DEVICE_OFF + 0x1000) {
		virtio_mmio_read(t, VIRTIO_MMIO_CONFIG + (off - VIRTIO_PCI_DEVICE_OFF), data, len);
	}
}

void virtio_pci_bar_write(struct virtio_pci *p, uint64_t off, const uint8_t *data,
			  unsigned int len)
{
	struct virtio_mmio *t = p->t;
	bool on;

	pthread_mutex_lock(&p->lock);
	on = decoding(p);
	if (on && off >= VIRTIO_PCI_MSIX_TABLE_OFF)
		msix_write(p, off, data, len);
	pthread_mutex_unlock(&p->lock);
	if (!on)
		return;
	if (off < VIRTIO_PCI_COMMON_LEN) {
		if (!common_width_ok(off, len))
			return;
		pthread_mutex_lock(&t->lock);
		common_write(p, off, get_le(data, len), len);
		pthread_mutex_unlock(&t->lock);
	} else if (off >= VIRTIO_PCI_NOTIFY_OFF &&
		   off < VIRTIO_PCI_NOTIFY_OFF + VIRTIO_PCI_NOTIFY_MULT * t->nr_queues &&
		   off % VIRTIO_PCI_NOTIFY_MULT == 0 && (len == 2 || len == 4)) {
		/* Only reached when the ioeventfd did not take it (or in a unit test). */
		pthread_mutex_lock(&t->lock);
		virtio_mmio_reg_write_locked(t, VIRTIO_MMIO_QUEUE_NOTIFY,
					     (uint32_t)((off - VIRTIO_PCI_NOTIFY_OFF) /
							VIRTIO_PCI_NOTIFY_MULT));
		pthread_mutex_unlock(&t->lock);
	}
	/* Device config writes are ignored as on mmio; ISR is read-only. */
}
