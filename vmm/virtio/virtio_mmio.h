/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The virtio-mmio transport, version 2 (virtio 1.x 4.2.2; no legacy
 * interface): the register block a guest driver sees for one virtio
 * device, its feature negotiation and status, its queues' setup, and the
 * two eventfds that connect it to KVM without a vCPU in the path:
 *   - kick_fd[q]: written when the driver notifies queue q. In a VM it is
 *     a KVM_IOEVENTFD on QueueNotify with datamatch q, so the notify never
 *     leaves the kernel; a notify that still reaches us (another value, or
 *     a unit test) is passed on to the same eventfd.
 *   - irq_fd: written to raise the device's interrupt; in a VM it is a
 *     KVM_IRQFD on the device's GSI (edge: a pulse per write).
 * The device's own thread polls kick_fd, takes chains with
 * virtio_mmio_pop() and returns them with virtio_mmio_push().
 *
 * Lifecycle: virtio_mmio_init() (power-on state), registered on the I/O
 * bus; the driver resets, negotiates, sets up queues, sets DRIVER_OK; a
 * write of 0 to Status resets it (after the requests in flight finish).
 * Unhappy paths: a hostile ring or a queue setup that does not fit guest
 * RAM is a device error (virtio_mmio_device_error): NEEDS_RESET is set,
 * a config-change interrupt raised, no queue is touched again until the
 * driver resets the device. Feature sets the device does not offer, or
 * without VIRTIO_F_VERSION_1, are refused by leaving FEATURES_OK clear.
 * Capture and restore of everything the guest can observe:
 * virtio_mmio_get_state()/virtio_mmio_set_state() (virtio_mmio_state.c).
 */
#ifndef KVMLU_VMM_VIRTIO_MMIO_H
#define KVMLU_VMM_VIRTIO_MMIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guestmem/guestmem.h"
#include "vmm/io_bus.h"
#include "vmm/virtio/virtq.h"

#define VIRTIO_MMIO_MAGIC	0x74726976u	/* "virt" */
#define VIRTIO_MMIO_VERSION	2u
#define VIRTIO_MMIO_VENDOR	0x554c564bu	/* "KVLU" */
#define VIRTIO_MMIO_MAX_QUEUES	2
#define VIRTIO_MMIO_CONFIG_MAX	64	/* bytes of device config we serve */

/* Register offsets (virtio 1.x 4.2.2). */
#define VIRTIO_MMIO_MAGIC_VALUE		0x000
#define VIRTIO_MMIO_VERSION_REG		0x004
#define VIRTIO_MMIO_DEVICE_ID		0x008
#define VIRTIO_MMIO_VENDOR_ID		0x00c
#define VIRTIO_MMIO_DEVICE_FEATURES	0x010
#define VIRTIO_MMIO_DEVICE_FEATURES_SEL	0x014
#define VIRTIO_MMIO_DRIVER_FEATURES	0x020
#define VIRTIO_MMIO_DRIVER_FEATURES_SEL	0x024
#define VIRTIO_MMIO_QUEUE_SEL		0x030
#define VIRTIO_MMIO_QUEUE_NUM_MAX	0x034
#define VIRTIO_MMIO_QUEUE_NUM		0x038
#define VIRTIO_MMIO_QUEUE_READY		0x044
#define VIRTIO_MMIO_QUEUE_NOTIFY	0x050
#define VIRTIO_MMIO_INTERRUPT_STATUS	0x060
#define VIRTIO_MMIO_INTERRUPT_ACK	0x064
#define VIRTIO_MMIO_STATUS		0x070
#define VIRTIO_MMIO_QUEUE_DESC_LOW	0x080
#define VIRTIO_MMIO_QUEUE_DESC_HIGH	0x084
#define VIRTIO_MMIO_QUEUE_DRIVER_LOW	0x090
#define VIRTIO_MMIO_QUEUE_DRIVER_HIGH	0x094
#define VIRTIO_MMIO_QUEUE_DEVICE_LOW	0x0a0
#define VIRTIO_MMIO_QUEUE_DEVICE_HIGH	0x0a4
#define VIRTIO_MMIO_SHM_LEN_LOW		0x0b0
#define VIRTIO_MMIO_SHM_LEN_HIGH	0x0b4
#define VIRTIO_MMIO_SHM_BASE_LOW	0x0b8
#define VIRTIO_MMIO_SHM_BASE_HIGH	0x0bc
#define VIRTIO_MMIO_CONFIG_GENERATION	0x0fc
#define VIRTIO_MMIO_CONFIG		0x100

/* Device status bits (virtio 1.x 2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE	1u
#define VIRTIO_STATUS_DRIVER		2u
#define VIRTIO_STATUS_DRIVER_OK		4u
#define VIRTIO_STATUS_FEATURES_OK	8u
#define VIRTIO_STATUS_NEEDS_RESET	64u
#define VIRTIO_STATUS_FAILED		128u

#define VIRTIO_INT_USED_RING	1u
#define VIRTIO_INT_CONFIG	2u

#define VIRTIO_F_VERSION_1	32

/* What an interrupt is for, as an irq_hook is told: a queue index, or this. */
#define VIRTIO_IRQ_SRC_CONFIG	0xffffu

/*
 * Another transport's interrupt path (virtio-pci: one MSI-X vector per
 * source). Called with the transport lock held, from whichever thread
 * raised the interrupt; it must not take that lock.
 */
typedef void (*virtio_irq_hook)(void *ctx, unsigned int src);

struct virtio_pci_fn_state;

struct virtio_mmio {
	pthread_mutex_t lock;	/* vCPU threads (registers) vs the device thread */
	pthread_cond_t idle;	/* inflight reached 0 */
	const char *name;	/* for messages: "virtio-blk vda" */
	const struct guestmem *mem;

	uint32_t device_id;
	uint64_t device_features;
	uint64_t driver_features;
	uint32_t device_features_sel, driver_features_sel;
	uint32_t queue_sel;
	uint32_t status;
	uint32_t interrupt_status;
	uint32_t config_generation;
	uint8_t config[VIRTIO_MMIO_CONFIG_MAX];
	uint32_t config_len;

	unsigned int nr_queues;
	struct virtq queues[VIRTIO_MMIO_MAX_QUEUES];
	int kick_fd[VIRTIO_MMIO_MAX_QUEUES];
	int irq_fd;

	unsigned int inflight;	/* chains popped and not yet pushed */
	bool broken;		/* device error since the last reset */
	char broken_why[160];
	unsigned long interrupts;	/* interrupts raised, for tests and status */
	/* NULL: each interrupt is a write of irq_fd. Set before the driver runs. */
	virtio_irq_hook irq_hook;
	void *irq_ctx;
	/*
	 * The transport in front (virtio-pci), whose state travels with this
	 * one's (virtio_mmio_state.h): its capture and restore, called with
	 * t->lock held and irq_ctx. NULL on virtio-mmio.
	 */
	void (*xport_get)(void *ctx, struct virtio_pci_fn_state *s);
	void (*xport_set)(void *ctx, const struct virtio_pci_fn_state *s);
};

extern const struct io_dev_ops virtio_mmio_ops;

/*
 * Power-on state of a device with device_id, the features it offers
 * (VIRTIO_F_VERSION_1 is added), nr_queues queues and config bytes the
 * driver may read. Creates the eventfds. mem must outlive the transport.
 */
int virtio_mmio_init(struct virtio_mmio *t, const char *name, uint32_t device_id,
		     uint64_t features, unsigned int nr_queues, const void *config,
		     uint32_t config_len, const struct guestmem *mem);
void virtio_mmio_destroy(struct virtio_mmio *t);

/* The register block as the I/O bus calls it (offset into the 4 KiB window). */
void virtio_mmio_read(struct virtio_mmio *t, uint64_t off, uint8_t *data, unsigned int len);
void virtio_mmio_write(struct virtio_mmio *t, uint64_t off, const uint8_t *data,
		       unsigned int len);

/*
 * One 32-bit register at a virtio-mmio offset below the config space,
 * with the transport lock held (t->lock): how another transport's
 * registers reach the same state machine (virtio_pci.c).
 */
uint32_t virtio_mmio_reg_read_locked(struct virtio_mmio *t, uint64_t off);
void virtio_mmio_reg_write_locked(struct virtio_mmio *t, uint64_t off, uint32_t v);

/*
 * Device side. Take the next chain of queue q: 1 got one (now in
 * flight), 0 none or the device is not live (no DRIVER_OK, broken, queue
 * not ready). A hostile chain becomes a device error here and returns 0.
 */
int virtio_mmio_pop(struct virtio_mmio *t, unsigned int q, struct virtq_chain *c);
/* Give back the last n chains popped from q and not pushed (virtq_unpop()). */
void virtio_mmio_unpop(struct virtio_mmio *t, unsigned int q, unsigned int n);
/* Queue q's size as the driver set it (0: no such queue). */
unsigned int virtio_mmio_queue_size(struct virtio_mmio *t, unsigned int q);
/*
 * Complete a popped chain; with interrupt (the end of a batch), raise the
 * interrupt if the driver wants one (always, unless it negotiated
 * VIRTIO_RING_F_EVENT_IDX: then as its used_event says).
 */
void virtio_mmio_push(struct virtio_mmio *t, unsigned int q, uint16_t head, uint32_t len,
		      bool interrupt);
/* The end of a batch of pushes made with interrupt false: the same interrupt decision. */
void virtio_mmio_notify(struct virtio_mmio *t, unsigned int q);
/* Chains made available on q and not taken yet (0 if not live). */
unsigned int virtio_mmio_pending(struct virtio_mmio *t, unsigned int q);
/* The same; at 0 the driver is asked to notify q at its next chain (virtq_pending_arm()). */
unsigned int virtio_mmio_pending_arm(struct virtio_mmio *t, unsigned int q);

/* NEEDS_RESET, a config interrupt, and no more queue work until reset. */
void virtio_mmio_device_error(struct virtio_mmio *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

bool virtio_mmio_feature(const struct virtio_mmio *t, unsigned int bit);

#endif /* KVMLU_VMM_VIRTIO_MMIO_H */
