/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pretend guest for the virtio unit tests: guest RAM as two malloc'ed
 * regions with a hole between them (as below/above the PCI hole), and a
 * driver that writes descriptors and ring entries the way a guest (or a
 * hostile one) would. No /dev/kvm involved.
 */
#ifndef KVMLU_TEST_VIRTIO_SUPPORT_H
#define KVMLU_TEST_VIRTIO_SUPPORT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guestmem/guestmem.h"
#include "vmm/virtio/virtq.h"

#define TG_LOW_SIZE	(1u << 20)		/* region 0: [0, 1 MiB) */
#define TG_HIGH_GPA	0x100000000ULL		/* region 1: [4 GiB, +64 KiB) */
#define TG_HIGH_SIZE	(64u << 10)
#define TG_DESC		0x1000ULL		/* ring placement in region 0 */
#define TG_AVAIL	0x3000ULL
#define TG_USED		0x4000ULL
#define TG_DATA		0x10000ULL		/* buffers from here */

static inline void tg_mem_init(struct guestmem *gm)
{
	memset(gm, 0, sizeof(*gm));
	gm->nr = 2;
	gm->r[0].gpa = 0;
	gm->r[0].size = TG_LOW_SIZE;
	gm->r[0].hva = calloc(1, TG_LOW_SIZE);
	gm->r[0].fd = -1;
	gm->r[1].gpa = TG_HIGH_GPA;
	gm->r[1].size = TG_HIGH_SIZE;
	gm->r[1].hva = calloc(1, TG_HIGH_SIZE);
	gm->r[1].fd = -1;
	gm->total = TG_LOW_SIZE + TG_HIGH_SIZE;
}

static inline void tg_mem_free(struct guestmem *gm)
{
	free(gm->r[0].hva);
	free(gm->r[1].hva);
	memset(gm, 0, sizeof(*gm));
}

static inline void *tg_ptr(struct guestmem *gm, uint64_t gpa)
{
	return guestmem_gpa_to_hva(gm, gpa, 1);
}

static inline void tg_desc(struct guestmem *gm, uint16_t i, uint64_t addr, uint32_t len,
			   uint16_t flags, uint16_t next)
{
	uint8_t *d = (uint8_t *)tg_ptr(gm, TG_DESC) + 16 * i;

	memcpy(d, &addr, 8);
	memcpy(d + 8, &len, 4);
	memcpy(d + 12, &flags, 2);
	memcpy(d + 14, &next, 2);
}

/* Put head at avail ring slot idx (mod size) and publish avail idx = idx + 1. */
static inline void tg_avail(struct guestmem *gm, uint16_t size, uint16_t idx, uint16_t head)
{
	uint8_t *a = tg_ptr(gm, TG_AVAIL);
	uint16_t next = (uint16_t)(idx + 1);

	memcpy(a + 4 + 2 * (idx % size), &head, 2);
	memcpy(a + 2, &next, 2);
}

static inline void tg_set_avail_idx(struct guestmem *gm, uint16_t idx)
{
	memcpy((uint8_t *)tg_ptr(gm, TG_AVAIL) + 2, &idx, 2);
}

static inline uint16_t tg_used_idx(struct guestmem *gm)
{
	uint16_t v;

	memcpy(&v, (uint8_t *)tg_ptr(gm, TG_USED) + 2, 2);
	return v;
}

static inline void tg_used_elem(struct guestmem *gm, uint16_t size, uint16_t idx,
				uint32_t *id, uint32_t *len)
{
	uint8_t *u = (uint8_t *)tg_ptr(gm, TG_USED) + 4 + 8 * (idx % size);

	memcpy(id, u, 4);
	memcpy(len, u + 4, 4);
}


#ifdef KVMLU_TEST_VIRTIO_MMIO
#include "vmm/virtio/virtio_mmio.h"

static inline uint32_t tg_rd(struct virtio_mmio *t, uint64_t off)
{
	uint32_t v;

	virtio_mmio_read(t, off, (uint8_t *)&v, 4);
	return v;
}

static inline void tg_wr(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
	virtio_mmio_write(t, off, (const uint8_t *)&v, 4);
}

/* What Linux's virtio_mmio does up to FEATURES_OK, accepting features. */
static inline void tg_negotiate(struct virtio_mmio *t, uint64_t features)
{
	tg_wr(t, VIRTIO_MMIO_STATUS, 0);
	tg_wr(t, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
	tg_wr(t, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	tg_wr(t, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	tg_wr(t, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
	tg_wr(t, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	tg_wr(t, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
	tg_wr(t, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
	      VIRTIO_STATUS_FEATURES_OK);
}

/* Queue 0 of the given size at TG_DESC/TG_AVAIL/TG_USED, then QueueReady. */
static inline void tg_queue(struct virtio_mmio *t, uint32_t size)
{
	tg_wr(t, VIRTIO_MMIO_QUEUE_SEL, 0);
	tg_wr(t, VIRTIO_MMIO_QUEUE_NUM, size);
	tg_wr(t, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)TG_DESC);
	tg_wr(t, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	tg_wr(t, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)TG_AVAIL);
	tg_wr(t, VIRTIO_MMIO_QUEUE_DRIVER_HIGH, 0);
	tg_wr(t, VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)TG_USED);
	tg_wr(t, VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0);
	tg_wr(t, VIRTIO_MMIO_QUEUE_READY, 1);
}

static inline void tg_driver_ok(struct virtio_mmio *t)
{
	tg_wr(t, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
	      VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK);
}

/* Eventfd counter (0 if nothing pending), read and cleared. */
static inline uint64_t tg_eventfd(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}
#endif

#endif /* KVMLU_TEST_VIRTIO_SUPPORT_H */
