/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The virtio-pci transport, modern only (virtio 1.x 4.1; no legacy I/O
 * BAR): one PCI function per virtio device, in front of the same state
 * machine the virtio-mmio transport drives (struct virtio_mmio: features,
 * status, queues, device errors; the virtq code is shared). What this
 * adds is what a PCI driver sees:
 *   - a type 0 config space (vendor 0x1af4, device 0x1040 + virtio id),
 *     its vendor capabilities (common cfg, notify, ISR, device cfg) and an
 *     MSI-X capability, all in one 64-bit memory BAR (BAR0, 32 KiB):
 *       0x0000 common cfg   0x1000 ISR        0x2000 device cfg
 *       0x3000 notify (4 bytes a queue)       0x4000 MSI-X table
 *       0x5000 MSI-X PBA
 *   - MSI-X: one vector per queue and one for config changes, each
 *     delivered as an MSI (signal_msi: KVM_SIGNAL_MSI in a VM) with
 *     nothing for the guest to read or acknowledge: no exit per interrupt.
 *     A masked vector (entry or function mask) sets its PBA bit and
 *     fires at the unmask. There is no INTx (Interrupt Pin 0): a driver
 *     that does not enable MSI-X gets no interrupts (Linux's virtio_pci
 *     enables it).
 *   - The VMM places BAR0 (bar_home, in the hole below 4 GiB) and the
 *     function answers there only, while Memory Space is enabled and the
 *     BAR holds bar_home. The BAR is an ordinary read-write register
 *     (the sizing protocol reads the size back); a guest that moves it
 *     elsewhere loses the device until it puts it back.
 *
 * Locking: the config space, MSI-X table and PBA are under p->lock; the
 * vectors the driver chose (common cfg) under the core's t->lock, which
 * the interrupt hook is called with; order t->lock, then p->lock.
 * Every access is checked: offsets outside a structure, wrong widths and
 * vector numbers past the table are ignored (reads give 0 or all-ones),
 * a vector that cannot be mapped reads back as VIRTIO_PCI_NO_VECTOR, as
 * the spec says.
 */
#ifndef KVMLU_VMM_VIRTIO_PCI_H
#define KVMLU_VMM_VIRTIO_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/io_bus.h"
#include "vmm/virtio/virtio_mmio.h"

#define VIRTIO_PCI_VENDOR		0x1af4u
#define VIRTIO_PCI_DEVICE_BASE		0x1040u	/* + the virtio device id */
#define VIRTIO_PCI_BAR_SIZE		0x8000u
#define VIRTIO_PCI_COMMON_OFF		0x0000u
#define VIRTIO_PCI_COMMON_LEN		0x40u	/* 0x38 of fields, and two 16-bit zeros */
#define VIRTIO_PCI_ISR_OFF		0x1000u
#define VIRTIO_PCI_DEVICE_OFF		0x2000u
#define VIRTIO_PCI_NOTIFY_OFF		0x3000u
#define VIRTIO_PCI_NOTIFY_MULT		4u
#define VIRTIO_PCI_MSIX_TABLE_OFF	0x4000u
#define VIRTIO_PCI_MSIX_PBA_OFF		0x5000u
#define VIRTIO_PCI_MSIX_MAX		(VIRTIO_MMIO_MAX_QUEUES + 1)
#define VIRTIO_PCI_NO_VECTOR		0xffffu
#define VIRTIO_PCI_CFG_SIZE		256u

/* Config space offsets (PCI 3.0, type 0 header) and ours. */
#define PCI_CFG_VENDOR		0x00
#define PCI_CFG_DEVICE		0x02
#define PCI_CFG_COMMAND		0x04
#define PCI_CFG_STATUS		0x06
#define PCI_CFG_REVISION	0x08
#define PCI_CFG_CLASS		0x09	/* prog-if, subclass, class */
#define PCI_CFG_HEADER_TYPE	0x0e
#define PCI_CFG_BAR0		0x10
#define PCI_CFG_SUBSYS_VENDOR	0x2c
#define PCI_CFG_SUBSYS		0x2e
#define PCI_CFG_CAP_PTR		0x34
#define PCI_CFG_INT_LINE	0x3c
#define PCI_CFG_INT_PIN		0x3d
#define PCI_CMD_MEMORY		0x0002u
#define PCI_CMD_MASTER		0x0004u
#define PCI_CMD_INTX_DISABLE	0x0400u
#define PCI_STATUS_CAP_LIST	0x0010u
#define PCI_BAR_MEM64		0x4u

/* Where our capabilities are (one chain from PCI_CFG_CAP_PTR). */
#define VIRTIO_PCI_CAP_COMMON	0x40
#define VIRTIO_PCI_CAP_NOTIFY	0x50	/* 20 bytes: the multiplier after */
#define VIRTIO_PCI_CAP_ISR	0x64
#define VIRTIO_PCI_CAP_DEVICE	0x74
#define VIRTIO_PCI_CAP_MSIX	0x84	/* id, next, control, table, PBA */
#define MSIX_CTRL_ENABLE	0x8000u
#define MSIX_CTRL_MASKALL	0x4000u
#define MSIX_ENTRY_MASKED	0x1u

/* Common cfg fields (virtio 1.x 4.1.4.3). */
#define VPCI_DFSELECT		0x00
#define VPCI_DF			0x04
#define VPCI_GFSELECT		0x08
#define VPCI_GF			0x0c
#define VPCI_MSIX_CONFIG	0x10
#define VPCI_NUM_QUEUES		0x12
#define VPCI_STATUS		0x14
#define VPCI_CFG_GENERATION	0x15
#define VPCI_Q_SELECT		0x16
#define VPCI_Q_SIZE		0x18
#define VPCI_Q_MSIX		0x1a
#define VPCI_Q_ENABLE		0x1c
#define VPCI_Q_NOFF		0x1e
#define VPCI_Q_DESC		0x20
#define VPCI_Q_AVAIL		0x28
#define VPCI_Q_USED		0x30

struct virtio_pci_msix_entry {
	uint32_t addr_lo, addr_hi, data, ctrl;
};

/* Deliver one MSI; 0, or -errno (counted, the interrupt is lost). */
typedef int (*virtio_pci_msi_fn)(void *ctx, uint64_t addr, uint32_t data);

struct virtio_pci {
	pthread_mutex_t lock;		/* cfg, msix, pba */
	struct virtio_mmio *t;		/* the device's state machine, not owned */
	uint64_t bar_home;
	uint8_t cfg[VIRTIO_PCI_CFG_SIZE];
	uint8_t wmask[VIRTIO_PCI_CFG_SIZE];	/* the bits a config write may change */
	unsigned int nr_vectors;		/* queues + 1 */
	struct virtio_pci_msix_entry msix[VIRTIO_PCI_MSIX_MAX];
	uint32_t pba;
	/* Under t->lock: the vectors the driver chose. */
	uint16_t config_vector;
	uint16_t queue_vector[VIRTIO_MMIO_MAX_QUEUES];
	virtio_pci_msi_fn signal_msi;
	void *msi_ctx;
	unsigned long msis;		/* delivered */
	unsigned long msis_lost;	/* no vector, MSI-X off, or signal_msi failed */
};

/* The BAR0 handler for the I/O bus (offset into the 32 KiB BAR). */
extern const struct io_dev_ops virtio_pci_bar_ops;

/*
 * Power-on state of the function in front of t (initialised, its queues
 * and config fixed): PCI class class_code (0x018000 storage, 0x020000
 * network), BAR0 at bar_home (a multiple of VIRTIO_PCI_BAR_SIZE below
 * 4 GiB, or -EINVAL). Takes over t's interrupts (t->irq_hook).
 */
int virtio_pci_init(struct virtio_pci *p, struct virtio_mmio *t, uint32_t class_code,
		    uint64_t bar_home, virtio_pci_msi_fn signal_msi, void *msi_ctx);
/* Gives t its eventfd interrupts back. */
void virtio_pci_destroy(struct virtio_pci *p);

/* Config space: off < 256, len 1, 2 or 4 and aligned to it; anything else reads all-ones. */
void virtio_pci_cfg_read(struct virtio_pci *p, uint32_t off, uint8_t *data, unsigned int len);
void virtio_pci_cfg_write(struct virtio_pci *p, uint32_t off, const uint8_t *data,
			  unsigned int len);

/* BAR0, as the bus calls it. */
void virtio_pci_bar_read(struct virtio_pci *p, uint64_t off, uint8_t *data, unsigned int len);
void virtio_pci_bar_write(struct virtio_pci *p, uint64_t off, const uint8_t *data,
			  unsigned int len);

#endif /* KVMLU_VMM_VIRTIO_PCI_H */
