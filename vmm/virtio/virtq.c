// SPDX-License-Identifier: GPL-2.0
/*
 * Split virtqueue walking (see virtq.h for the rules and unhappy paths).
 * Ring layout (virtio 1.x 2.7): descriptor table of 16-byte entries,
 * 16-aligned; avail ring (flags, idx, ring[size]), 2-aligned; used ring
 * (flags, idx, ring[size] of {id, len}), 4-aligned. With
 * VIRTIO_RING_F_EVENT_IDX each ring has one more 16-bit word after its
 * entries: used_event after the avail ring's, avail_event after the used
 * ring's; both are mapped with the rings at enable.
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

void virtq_set_features(struct virtq *q, uint64_t driver_features)
{
	q->event_idx = (driver_features >> VIRTIO_RING_F_EVENT_IDX) & 1;
	q->indirect = (driver_features >> VIRTIO_RING_F_INDIRECT_DESC) & 1;
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
	uint64_t ev = q->event_idx ? 2 : 0;	/* used_event / avail_event */
	int rc;

	q->ready = false;
	if (n == 0 || n > VIRTQ_MAX_SIZE || (n & (n - 1)))
		return kvmlu_err(err, errlen, -EINVAL,
				 "queue size %llu: must be a power of two, 1..%d",
				 (unsigned long long)n, VIRTQ_MAX_SIZE);
	rc = virtq_map(mem, q->desc_gpa, 16 * n, 16, "descriptor table", &desc, err, errlen);
	if (!rc)
		rc = virtq_map(mem, q->avail_gpa, AVAIL_RING_OFF + 2 * n + ev, 2, "avail ring",
			       &avail, err, errlen);
	if (!rc)
		rc = virtq_map(mem, q->used_gpa, USED_RING_OFF + 8 * n + ev, 4, "used ring",
			       &used, err, errlen);
	if (rc)
		return rc;
	q->mem = mem;
	q->desc = desc;
	q->avail = avail;
	q->used = used;
	q->signalled_used_valid = false;
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
static void virtq_read_desc(const void *table, uint16_t i, struct virtq_desc *d)
{
	memcpy(d, (const char *)table + 16 * (size_t)i, sizeof(*d));
}

static uint16_t *virtq_avail_event(const struct virtq *q)
{
	return (uint16_t *)((char *)q->used + USED_RING_OFF + 8 * (size_t)q->size);
}

static uint16_t *virtq_used_event(const struct virtq *q)
{
	return (uint16_t *)((char *)q->avail + AVAIL_RING_OFF + 2 * (size_t)q->size);
}

/*
 * The ring looked empty. With EVENT_IDX, ask for a notify at the next
 * entry, then look again: a driver that added one after our first look
 * may have read the old avail_event and not notified (the full fence
 * orders our store before our second load, as the driver's own barrier
 * orders its idx store before its avail_event load).
 */
static uint16_t virtq_arm_notify(struct virtq *q, uint16_t avail_idx)
{
	if (!q->event_idx)
		return avail_idx;
	__atomic_store_n(virtq_avail_event(q), q->last_avail, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return virtq_avail_idx(q);
}

int virtq_pending_arm(struct virtq *q)
{
	int n = virtq_pending(q);

	if (n || !q->ready)
		return n;
	virtq_arm_notify(q, virtq_avail_idx(q));
	return virtq_pending(q);	/* the look after asking */
}

/* Append one buffer (a direct descriptor, or an entry of an indirect table). */
static int virtq_add_buf(const struct virtq *q, struct virtq_chain *c, const struct virtq_desc *d,
			 const char *where, unsigned int i, char *err, size_t errlen)
{
	void *hva;

	if (c->nr >= VIRTQ_MAX_SIZE)
		return kvmlu_err(err, errlen, -EIO, "chain at head %u has more than %d buffers",
				 c->head, VIRTQ_MAX_SIZE);
	hva = guestmem_gpa_to_hva(q->mem, d->addr, d->len);
	if (!hva)
		return kvmlu_err(err, errlen, -EIO,
				 "%s %u: buffer [0x%llx, +%u) is not in guest RAM", where, i,
				 (unsigned long long)d->addr, d->len);
	if (d->flags & VIRTQ_DESC_F_WRITE) {
		c->writable_len += d->len;
	} else {
		if (c->nr > c->nr_readable)
			return kvmlu_err(err, errlen, -EIO,
					 "%s %u: device-readable after device-writable", where, i);
		c->nr_readable++;
		c->readable_len += d->len;
	}
	c->bufs[c->nr++] = (struct virtq_buf){
		.hva = hva, .len = d->len, .writable = (d->flags & VIRTQ_DESC_F_WRITE) != 0,
	};
	return 0;
}

/*
 * The table an indirect descriptor d (descriptor i of the ring) points
 * at: mapped once, each entry copied once, walked from entry 0.
 */
static int virtq_walk_indirect(const struct virtq *q, struct virtq_chain *c,
			       const struct virtq_desc *d, uint16_t i, char *err, size_t errlen)
{
	struct virtq_desc e;
	const void *table;
	unsigned int entries, steps = 0;
	uint16_t j = 0;
	int rc;

	if (!q->indirect)
		return kvmlu_err(err, errlen, -EIO,
				 "descriptor %u is indirect, which was not negotiated", i);
	if (d->flags & VIRTQ_DESC_F_NEXT)
		return kvmlu_err(err, errlen, -EIO, "descriptor %u: indirect and next at once", i);
	if (d->len == 0 || d->len % 16 || d->len / 16 > VIRTQ_MAX_SIZE)
		return kvmlu_err(err, errlen, -EIO,
				 "descriptor %u: indirect table of %u bytes, not 16..%d x 16", i,
				 d->len, VIRTQ_MAX_SIZE);
	entries = d->len / 16;
	table = guestmem_gpa_to_hva(q->mem, d->addr, d->len);
	if (!table)
		return kvmlu_err(err, errlen, -EIO,
				 "descriptor %u: indirect table [0x%llx, +%u) is not in guest RAM", i,
				 (unsigned long long)d->addr, d->len);
	for (;;) {
		/* Each entry at most once: a longer walk is a loop. */
		if (steps++ >= entries)
			return kvmlu_err(err, errlen, -EIO,
					 "indirect table of descriptor %u: walk longer than its %u entries (a loop?)",
					 i, entries);
		virtq_read_desc(table, j, &e);
		if (e.flags & VIRTQ_DESC_F_INDIRECT)
			return kvmlu_err(err, errlen, -EIO,
					 "indirect table of descriptor %u: entry %u is indirect too", i, j);
		rc = virtq_add_buf(q, c, &e, "indirect entry", j, err, errlen);
		if (rc)
			return rc;
		if (!(e.flags & VIRTQ_DESC_F_NEXT))
			return 0;
		if (e.next >= entries)
			return kvmlu_err(err, errlen, -EIO,
					 "indirect table of descriptor %u: entry %u: next %u >= %u entries",
					 i, j, e.next, entries);
		j = e.next;
	}
}

int virtq_pop(struct virtq *q, struct virtq_chain *c, char *err, size_t errlen)
{
	uint16_t avail_idx, pending, head, i;
	struct virtq_desc d;
	unsigned int n = 0;
	int rc;

	if (!q->ready)
		return 0;
	avail_idx = virtq_avail_idx(q);
	pending = (uint16_t)(avail_idx - q->last_avail);
	if (pending == 0) {
		avail_idx = virtq_arm_notify(q, avail_idx);
		pending = (uint16_t)(avail_idx - q->last_avail);
		if (pending == 0)
			return 0;
	}
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
		/* A chain may use each descriptor at most once, so never more than size. */
		if (n++ >= q->size)
			return kvmlu_err(err, errlen, -EIO,
					 "chain at head %u is longer than the queue size %u (a loop?)",
					 head, q->size);
		virtq_read_desc(q->desc, i, &d);
		if (d.flags & VIRTQ_DESC_F_INDIRECT) {
			/* No NEXT on it (checked there): the table ends the chain. */
			rc = virtq_walk_indirect(q, c, &d, i, err, errlen);
			if (rc)
				return rc;
			break;
		}
		rc = virtq_add_buf(q, c, &d, "descriptor", i, err, errlen);
		if (rc)
			return rc;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			break;
		if (d.next >= q->size)
			return kvmlu_err(err, errlen, -EIO, "descriptor %u: next %u >= queue size %u",
					 i, d.next, q->size);
		i = d.next;
	}
	q->last_avail++;
	return 1;
}

void virtq_unpop(struct virtq *q, uint16_t n)
{
	q->last_avail = (uint16_t)(q->last_avail - n);
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

bool virtq_need_interrupt(struct virtq *q)
{
	uint16_t old = q->signalled_used, now = q->used_idx, event;
	bool valid = q->signalled_used_valid;

	if (!q->ready || !q->event_idx)
		return true;
	q->signalled_used = now;
	q->signalled_used_valid = true;
	/*
	 * Our used idx store before our used_event load; the driver orders
	 * its used_event store before its next used idx load the same way,
	 * so one of us sees the other and no completion goes unannounced.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	event = __atomic_load_n(virtq_used_event(q), __ATOMIC_RELAXED);
	if (!valid)
		return true;
	/* vring_need_event: did used idx step over event in (old, now]? mod 2^16. */
	return (uint16_t)(now - event - 1) < (uint16_t)(now - old);
}
