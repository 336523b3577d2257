/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a guest can observe of one virtio-mmio transport, as it travels
 * in the state FDT (docs/state-format.md, virtio-blk@...): registers,
 * negotiated features, and each queue's rings and indices. Captured
 * while the VM is paused and quiesced (no chain in flight, so
 * used_idx == last_avail for every queue); validated before any of it is
 * used; restored into a freshly initialised transport of the same device.
 */
#ifndef KVMLU_VMM_VIRTIO_MMIO_STATE_H
#define KVMLU_VMM_VIRTIO_MMIO_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/virtio/virtio_mmio.h"

struct virtio_mmio_queue_state {
	bool present;		/* a queue@N node was read (or the queue exists) */
	uint32_t size;		/* QueueNum as the driver set it */
	bool ready;
	uint64_t desc, avail, used;	/* ring gpas */
	uint32_t last_avail, used_idx;	/* 16-bit ring indices */
};

/*
 * The virtio-pci function in front of the transport (virtio_pci.c), when
 * the VM runs --virtio-transport pci: what its driver set in config space
 * and in the BAR that is not the state machine's. Absent (present false)
 * on virtio-mmio. Values checked by virtio_pci_fn_state_validate().
 */
struct virtio_pci_fn_state {
	bool present;		/* a pci node was read (or the device has a function) */
	uint32_t command;	/* PCI Command: memory, bus master, INTx disable */
	uint32_t bar0_lo, bar0_hi;
	uint32_t int_line;
	uint32_t msix_ctrl;	/* MSI-X enable and function mask */
	uint32_t nr_vectors;	/* the table's entries: queues + 1 */
	uint32_t msix[VIRTIO_MMIO_MAX_QUEUES + 1][4];	/* address lo, hi, data, control */
	uint32_t pba;
	uint32_t config_vector;
	uint32_t queue_vector[VIRTIO_MMIO_MAX_QUEUES];
};

struct virtio_mmio_state {
	uint32_t device_id;
	uint64_t device_features, driver_features;
	uint32_t device_features_sel, driver_features_sel, queue_sel;
	uint32_t status, interrupt_status, config_generation;
	bool broken;		/* NEEDS_RESET was set by a device error */
	uint32_t nr_queues;
	struct virtio_mmio_queue_state q[VIRTIO_MMIO_MAX_QUEUES];
	uint32_t config_len;
	uint8_t config[VIRTIO_MMIO_CONFIG_MAX];
	struct virtio_pci_fn_state pci;
};

/* The pci part's values, for a device of nr_queues queues (virtio_pci.c). */
int virtio_pci_fn_state_validate(const struct virtio_pci_fn_state *s, uint32_t nr_queues,
				 char *err, size_t errlen);

/* Caller has quiesced the device; -EBUSY if a chain is still in flight. */
int virtio_mmio_get_state(struct virtio_mmio *t, struct virtio_mmio_state *s);

/*
 * Value checks of an untrusted state, for a device with device_id and
 * nr_queues queues; err names the field ("queue 3: index out of range").
 */
int virtio_mmio_state_validate(const struct virtio_mmio_state *s, uint32_t device_id,
			       uint32_t nr_queues, char *err, size_t errlen);

/*
 * Into t, fresh from virtio_mmio_init() of the same device: the features
 * the driver took must still be offered, the config must be the same
 * bytes, and every ready queue's rings must lie in guest RAM. A state
 * with a pci part goes only into a transport with a virtio-pci function
 * in front (t->xport_set), and one without only into one without. t then
 * offers what both it and the saved device offered.
 */
int virtio_mmio_set_state(struct virtio_mmio *t, const struct virtio_mmio_state *s,
			  char *err, size_t errlen);

#endif /* KVMLU_VMM_VIRTIO_MMIO_STATE_H */
