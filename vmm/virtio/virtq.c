// SPDX-License-Identifier: GPL-2.0
/*
 * Split virtqueue walking (see virtq.h for the rules and unhappy paths).
 * Ring layout (virtio 1.x 2.7): descriptor table of 16-byte entries,
 * 16-aligned; avail ring (flags, idx, ring[size]), 2-aligned; used ring
 * (flags, idx, ring[size] of {id, len}), 4-aligned. Without
 * VIRTIO_F_EVENT_IDX there are no used_event/avail_event words.
 *
 * The guest's idx is read with acquire ordering before any entry it
 * covers; our used entries are written before the used idx is released,
 * so the driver never sees an index ahead of its entries. Ring fields are
 * little-endian; x86 is too, so they are used as they are.
 */
#include <errno.h>
#include <string.h>

#include "common/err.h"
#include "vmm/virtio/virtq.h"

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
};

#define AVAIL_IDX_OFF	2
#define AVAIL_RING_OFF	4
#define USED_IDX_OFF	2
#define USED_RING_OFF	4

void virtq_reset(struct virtq *q)
{
	memset(q, 0, sizeof(*q));
}

static int virtq_map(const struct guestmem *mem, uint64_t gpa, uint64_t len,
		     uint64_t align, const char *what, void **out, char *err, size_t errlen)
{
	if (gpa % align)
		return kvmlu_err(err, errlen, -EINVAL, "%s at 0x%llx is not %llu-byte aligned",
				 what, (unsigned long long)gpa, (unsigned long long)align);
	*out = guestmem_gpa_to_hva(mem, gpa, len);
	if (!*out)
		return kvmlu_err(err, errlen, -EINVAL, "%s [0x%llx, +%llu) is not in guest RAM",
				 what, (unsigned long long)gpa, (unsigned long long)len);
	return 0;
}

int virtq_enable(struct virtq *q, const struct guestmem *mem, char *err, size_t errlen)
{
	void *desc, *avail, *used;
	uint64_t n = q->size;
	int rc;

	q->ready = false;
	if (n == 0 || n > VIRTQ_MAX_SIZE || (n & (n - 1)))
		return kvmlu_err(err, errlen, -EINVAL,
				 "queue size %llu: must be a power of two, 1..%d",
				 (unsigned long long)n, VIRTQ_MAX_SIZE);
	rc = virtq_map(mem, q->desc_gpa, 16 * n, 16, "descriptor table", &desc, err, errlen);
	if (!rc)
		rc = virtq_map(mem, q->avail_gpa, AVAIL_RING_OFF + 2 * n, 2, "avail ring",
			       &avail, err, errlen);
	if (!rc)
		rc = virtq_map(mem, q->used_gpa, USED_RING_OFF + 8 * n, 4, "used ring",
			       &used, err, errlen);
	if (rc)
		return rc;
	q->mem = mem;
	q->desc = desc;
	q->avail = avail;
	q->used = used;
	q->ready = true;
	return 0;
}

static uint16_t virtq_avail_idx(const struct virtq *q)
{
	return __atomic_load_n((uint16_t *)((char *)q->avail + AVAIL_IDX_OFF), __ATOMIC_ACQUIRE);
}

int virtq_pending(const struct virtq *q)
{
	uint16_t n;

	if (!q->ready)
		return 0;
	n = (uint16_t)(virtq_avail_idx(q) - q->last_avail);
	return n > q->size ? -EIO : n;
}

/* One descriptor, copied once: every check below is on this copy. */
static void virtq_read_desc(const struct virtq *q, uint16_t i, struct virtq_desc *d)
{
	memcpy(d, (char *)q->desc + 16 * (size_t)i, sizeof(*d));
}

int virtq_pop(struct virtq *q, struct virtq_chain *c, char *err, size_t errlen)
{
	uint16_t avail_idx, pending, head, i;
	struct virtq_desc d;
	unsigned int n = 0;

	if (!q->ready)
		return 0;
	avail_idx = virtq_avail_idx(q);
	pending = (uint16_t)(avail_idx - q->last_avail);
	if (pending == 0)
		return 0;
	/* idx is free-running mod 2^16; more than size ahead is a lie. */
	if (pending > q->size)
		return kvmlu_err(err, errlen, -EIO,
				 "avail idx %u is %u ahead of %u, queue size %u",
				 avail_idx, pending, q->last_avail, q->size);
	memcpy(&head, (char *)q->avail + AVAIL_RING_OFF + 2 * (size_t)(q->last_avail % q->size),
	       sizeof(head));
	if (head >= q->size)
		return kvmlu_err(err, errlen, -EIO, "avail ring entry %u: head %u >= queue size %u",
				 q->last_avail, head, q->size);

	memset(c, 0, offsetof(struct virtq_chain, bufs));
	c->head = head;
	i = head;
	for (;;) {
		void *hva;

		/* A chain may use each descriptor at most once, so never more than size. */
		if (n >= q->size)
			return kvmlu_err(err, errlen, -EIO,
					 "chain at head %u is longer than the queue size %u (a loop?)",
					 head, q->size);
		virtq_read_desc(q, i, &d);
		if (d.flags & VIRTQ_DESC_F_INDIRECT)
			return kvmlu_err(err, errlen, -EIO,
					 "descriptor %u is indirect, which was not negotiated", i);
		hva = guestmem_gpa_to_hva(q->mem, d.addr, d.len);
		if (!hva)
			return kvmlu_err(err, errlen, -EIO,
					 "descriptor %u: buffer [0x%llx, +%u) is not in guest RAM",
					 i, (unsigned long long)d.addr, d.len);
		if (d.flags & VIRTQ_DESC_F_WRITE) {
			c->writable_len += d.len;
		} else {
			if (n > c->nr_readable)
				return kvmlu_err(err, errlen, -EIO,
						 "descriptor %u: device-readable after device-writable", i);
			c->nr_readable++;
			c->readable_len += d.len;
		}
		c->bufs[n++] = (struct virtq_buf){
			.hva = hva, .len = d.len, .writable = (d.flags & VIRTQ_DESC_F_WRITE) != 0,
		};
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			break;
		if (d.next >= q->size)
			return kvmlu_err(err, errlen, -EIO, "descriptor %u: next %u >= queue size %u",
					 i, d.next, q->size);
		i = d.next;
	}
	c->nr = n;
	q->last_avail++;
	return 1;
}

void virtq_push(struct virtq *q, uint16_t head, uint32_t len)
{
	struct virtq_used_elem e = { .id = head, .len = len };

	if (!q->ready)
		return;
	memcpy((char *)q->used + USED_RING_OFF + 8 * (size_t)(q->used_idx % q->size), &e,
	       sizeof(e));
	q->used_idx++;
	/* The entry before the index: the driver reads them in that order. */
	__atomic_store_n((uint16_t *)((char *)q->used + USED_IDX_OFF), q->used_idx,
			 __ATOMIC_RELEASE);
}
