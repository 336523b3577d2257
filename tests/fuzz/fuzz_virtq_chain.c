// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: descriptor rings and virtio-blk requests as a hostile
 * guest writes them. The input is the queue's setup (size, ring
 * addresses, where the indices start, which ring features are on:
 * EVENT_IDX, INDIRECT_DESC) followed by the guest RAM bytes that hold
 * the rings, descriptors, indirect tables and requests. Guest RAM is two
 * exactly-sized heap regions with a hole between them, so ASan reports
 * any access outside guest RAM. Every chain popped must obey the queue's
 * contract (at most size buffers, or VIRTQ_MAX_SIZE with indirect tables,
 * each inside one region, readable before writable); each is then handled
 * as a block request against a small temp file, and pushed, and the
 * interrupt decision (used_event) is taken after each. Refusals (-EIO)
 * are the expected outcome.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/devices/virtio_blk.h"
#include "vmm/virtio/virtq.h"

#define LOW_SIZE	(64u << 10)
#define HIGH_GPA	0x100000000ULL
#define HIGH_SIZE	(4u << 10)
#define HDR_BYTES	12

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct virtio_blk blk;
static struct guestmem gm;
static bool blk_ready;

static bool in_region(const struct guestmem_region *r, const void *p, uint32_t len)
{
	const char *b = r->hva, *q = p;

	return q >= b && (uint64_t)(q - b) + len <= r->size;
}

/* The block device once per process, on a temp file; blk.readonly is toggled per input. */
static void blk_setup(void)
{
	char path[] = "/tmp/kvmlu-fuzz-virtq-XXXXXX";
	struct virtio_blk_spec spec = { .path = path };
	char err[256];
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, 64 << 10) < 0)
		abort();
	close(fd);
	if (virtio_blk_open(&blk, &spec, 0, &gm, err, sizeof(err)))
		abort();
	unlink(path);
	blk_ready = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtq_chain *c;
	struct virtq q;
	char err[256];
	uint16_t v[6];
	size_t n;

	if (size < HDR_BYTES)
		return 0;
	memcpy(v, data, sizeof(v));
	data += HDR_BYTES;
	size -= HDR_BYTES;
	gm.nr = 2;
	gm.r[0] = (struct guestmem_region){ .gpa = 0, .size = LOW_SIZE, .fd = -1 };
	gm.r[1] = (struct guestmem_region){ .gpa = HIGH_GPA, .size = HIGH_SIZE, .fd = -1 };
	gm.r[0].hva = calloc(1, LOW_SIZE);
	gm.r[1].hva = calloc(1, HIGH_SIZE);
	c = malloc(sizeof(*c));
	if (!gm.r[0].hva || !gm.r[1].hva || !c)
		abort();
	if (!blk_ready)
		blk_setup();
	n = size < LOW_SIZE ? size : LOW_SIZE;
	memcpy(gm.r[0].hva, data, n);
	if (size > n)
		memcpy(gm.r[1].hva, data + n, size - n < HIGH_SIZE ? size - n : HIGH_SIZE);

	virtq_reset(&q);
	q.size = v[0];
	/* Ring addresses anywhere in the low region, or (top bit) past its end. */
	q.desc_gpa = (uint64_t)v[1] * 2 + (v[5] & 1 ? LOW_SIZE : 0);
	q.avail_gpa = (uint64_t)v[2] * 2;
	q.used_gpa = (uint64_t)v[3] * 2;
	q.last_avail = q.used_idx = v[4];
	blk.readonly = v[5] & 2;
	virtq_set_features(&q, (v[5] & 4 ? 1ULL << VIRTIO_RING_F_EVENT_IDX : 0) |
				(v[5] & 8 ? 1ULL << VIRTIO_RING_F_INDIRECT_DESC : 0));
	if (virtq_enable(&q, &gm, err, sizeof(err)) == 0) {
		for (int i = 0; i < 2 * VIRTQ_MAX_SIZE; i++) {
			int r = virtq_pop(&q, c, err, sizeof(err));
			int len;

			if (r <= 0)
				break;
			if (c->nr == 0 || c->nr > (q.indirect ? VIRTQ_MAX_SIZE : q.size) ||
			    c->head >= q.size ||
			    c->nr_readable > c->nr)
				abort();
			for (unsigned int k = 0; k < c->nr; k++) {
				const struct virtq_buf *b = &c->bufs[k];

				if (!in_region(&gm.r[0], b->hva, b->len) &&
				    !in_region(&gm.r[1], b->hva, b->len))
					abort();
				if (b->writable != (k >= c->nr_readable))
					abort();
			}
			len = virtio_blk_handle(&blk, c);
			virtq_push(&q, c->head, len < 0 ? 0 : (uint32_t)len);
			/* Any used_event is allowed; without EVENT_IDX it must always say yes. */
			if (!virtq_need_interrupt(&q) && !q.event_idx)
				abort();
		}
	}
	free(c);
	free(gm.r[0].hva);
	free(gm.r[1].hva);
	return 0;
}
