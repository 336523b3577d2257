/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The split virtqueue (virtio 1.x, 2.7): the only code that reads the
 * indices and descriptors a guest writes. Everything in the rings is
 * hostile: each value is read once into a local copy, then checked, so a
 * guest changing a descriptor under us cannot get a checked value swapped
 * for an unchecked one.
 *
 * Lifecycle: the transport fills size and the three ring addresses while
 * the driver sets the queue up; virtq_enable() checks them against guest
 * RAM and caches host pointers (guest RAM never moves while the VM
 * lives). The device's I/O thread then takes chains with virtq_pop() and
 * gives them back with virtq_push(). Reset: virtq_reset(). Saved state:
 * the addresses, size and the two indices (last_avail, used_idx), which
 * is all a new process needs to continue (virtq_enable() again, after
 * virtq_set_features() with the negotiated features).
 *
 * Optional ring features, each used only when the driver acked it:
 *   - VIRTIO_RING_F_EVENT_IDX: the avail ring ends with used_event (the
 *     driver: "interrupt me when used idx passes this"), the used ring
 *     with avail_event (we: "notify me when avail idx passes this").
 *     We write avail_event = last_avail when we find the ring empty, so a
 *     driver adding to a ring we are still working through does not kick;
 *     virtq_need_interrupt() applies vring_need_event (virtio 1.x 2.7.10)
 *     to used_event. Both are 16-bit free-running values: any value a
 *     driver writes is a valid one (at worst it gets too few or too many
 *     interrupts of its own queue), so there is nothing to refuse.
 *   - VIRTIO_RING_F_INDIRECT_DESC: a descriptor with VIRTQ_DESC_F_INDIRECT
 *     points at a table of descriptors in guest RAM (2.7.5.3), walked like
 *     the ring's own table with the checks below.
 *
 * Unhappy paths, each a device error (-EIO, the caller sets NEEDS_RESET
 * and stops using the queue until the driver resets the device):
 *   1. rings outside guest RAM, misaligned, or a size that is not a power
 *      of two in 1..VIRTQ_MAX_SIZE (refused at enable);
 *   2. avail idx more than size ahead of what we consumed;
 *   3. a head or next index >= size;
 *   4. a chain longer than size (this is also what catches loops);
 *   5. a buffer not entirely inside one guest RAM region;
 *   6. an indirect descriptor when VIRTIO_RING_F_INDIRECT_DESC was not
 *      negotiated; with it: an indirect descriptor that also has
 *      VIRTQ_DESC_F_NEXT, a table that is empty, not a multiple of 16
 *      bytes, longer than VIRTQ_MAX_SIZE entries or not inside one guest
 *      RAM region, an indirect descriptor inside a table (no nesting), a
 *      next index >= the table's entries, a walk longer than the table
 *      (a loop), or more than VIRTQ_MAX_SIZE buffers in the whole chain;
 *   7. a device-readable buffer after a device-writable one.
 */
#ifndef KVMLU_VMM_VIRTIO_VIRTQ_H
#define KVMLU_VMM_VIRTIO_VIRTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guestmem/guestmem.h"

/* Largest queue we offer (QueueNumMax); also the longest chain we walk. */
#define VIRTQ_MAX_SIZE 256

#define VIRTQ_DESC_F_NEXT	1
#define VIRTQ_DESC_F_WRITE	2
#define VIRTQ_DESC_F_INDIRECT	4

/* Ring feature bits (virtio 1.x 6), negotiated through the transport. */
#define VIRTIO_RING_F_INDIRECT_DESC	28
#define VIRTIO_RING_F_EVENT_IDX		29

/* One guest buffer of a chain, already translated and bounds-checked. */
struct virtq_buf {
	void *hva;
	uint32_t len;
	bool writable;		/* device writes it (VIRTQ_DESC_F_WRITE) */
};

struct virtq_chain {
	uint16_t head;		/* what virtq_push() hands back */
	unsigned int nr;	/* buffers in bufs */
	unsigned int nr_readable;	/* the first nr_readable are device-readable */
	uint64_t readable_len, writable_len;
	struct virtq_buf bufs[VIRTQ_MAX_SIZE];
};

struct virtq {
	/* Set by the driver through the transport. */
	uint16_t size;
	uint64_t desc_gpa, avail_gpa, used_gpa;
	bool ready;
	/* Negotiated ring features (virtq_set_features), fixed while ready. */
	bool event_idx, indirect;
	/* Device progress: the next avail entry to take, the next used entry to fill. */
	uint16_t last_avail;
	uint16_t used_idx;
	/*
	 * EVENT_IDX: used idx at the last virtq_need_interrupt(), valid once
	 * one was made. Not saved: after a restore the first one interrupts,
	 * which a driver takes as a spurious interrupt at worst.
	 */
	uint16_t signalled_used;
	bool signalled_used_valid;
	/* Host views of the rings, valid while ready. */
	const struct guestmem *mem;
	void *desc, *avail, *used;
};

/* Forget everything: the state after a device reset. */
void virtq_reset(struct virtq *q);

/* Take the ring features the driver acked (its feature bits); before virtq_enable(). */
void virtq_set_features(struct virtq *q, uint64_t driver_features);

/*
 * Check size and ring addresses against mem and make the queue usable.
 * -EINVAL (with the reason in err) if any is bad; the queue stays off.
 * The indices are kept as they are: 0 after a reset, the saved ones
 * after a restore.
 */
int virtq_enable(struct virtq *q, const struct guestmem *mem, char *err, size_t errlen);

/*
 * Take the next available chain into c. 1: got one; 0: ring empty;
 * -EIO: the guest broke a rule (reason in err), the queue must not be
 * used again until reset.
 */
int virtq_pop(struct virtq *q, struct virtq_chain *c, char *err, size_t errlen);

/*
 * Give back the last n chains taken and not pushed (the device could not
 * use them yet): the next virtq_pop() returns them again, in order.
 */
void virtq_unpop(struct virtq *q, uint16_t n);

/* Chains the driver made available that we have not taken; -EIO if more than size. */
int virtq_pending(const struct virtq *q);
/* The same; when there are none, the driver is asked to notify at its next one (EVENT_IDX). */
int virtq_pending_arm(struct virtq *q);

/* Return a chain with len bytes written into its writable buffers. */
void virtq_push(struct virtq *q, uint16_t head, uint32_t len);

/*
 * After one or more virtq_push(): does the driver want an interrupt for
 * them? Always without EVENT_IDX (as the transport always did); with it,
 * vring_need_event(used_event, used idx now, used idx at the last call).
 */
bool virtq_need_interrupt(struct virtq *q);

#endif /* KVMLU_VMM_VIRTIO_VIRTQ_H */
