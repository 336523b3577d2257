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
};

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
 * bytes, and every ready queue's rings must lie in guest RAM. t then
 * offers what both it and the saved device offered.
 */
int virtio_mmio_set_state(struct virtio_mmio *t, const struct virtio_mmio_state *s,
			  char *err, size_t errlen);

#endif /* KVMLU_VMM_VIRTIO_MMIO_STATE_H */
