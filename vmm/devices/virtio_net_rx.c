// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-net's receive half: frames from the tap into the guest's
 * receive chains (see virtio_net.h for what is delivered, held or
 * dropped). Device thread only.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "vmm/devices/virtio_net.h"
#include "vmm/devices/virtio_net_frame.h"

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/* Copy len bytes of src into c's writable buffers from offset off; false if they end first. */
static bool chain_copy_in(const struct virtq_chain *c, size_t off, const void *src, size_t len)
{
	return virtio_net_chain_move(c, c->nr_readable, c->nr, off, (void *)src, len, true);
}

/* Copy len bytes at offset off of c's writable part into out (the header the tap wrote). */
static bool chain_copy_written(const struct virtq_chain *c, size_t off, void *out, size_t len)
{
	return virtio_net_chain_move(c, c->nr_readable, c->nr, off, out, len, false);
}

/* Room a read may use: a frame, its header and the byte that shows it was too long. */
#define RX_READ_MAX (VIRTIO_NET_HDR_LEN + VIRTIO_NET_FRAME_MAX + 1)

/*
 * The iovecs for one read into chain c: its writable buffers (none if it
 * has readable ones, or too little room for a header), at most
 * RX_READ_MAX bytes of them, then the bounce buffer. Returns the bytes
 * of the chain in iov (0: the chain takes no frame).
 */
static size_t rx_iov(struct virtio_net *n, const struct virtq_chain *c, struct iovec *iov,
		     unsigned int *nv)
{
	size_t room = 0;

	*nv = 0;
	if (!c->nr_readable && c->writable_len >= VIRTIO_NET_HDR_LEN)
		for (unsigned int i = 0; i < c->nr && room < RX_READ_MAX; i++) {
			size_t k = c->bufs[i].len;

			if (k > RX_READ_MAX - room)
				k = RX_READ_MAX - room;
			if (!k)
				continue;
			iov[(*nv)++] = (struct iovec){ .iov_base = c->bufs[i].hva, .iov_len = k };
			room += k;
		}
	iov[(*nv)++] = (struct iovec){ .iov_base = n->frame, .iov_len = sizeof(n->frame) };
	return room;
}

/* len bytes of buf scattered over iov[0..nv) (the chain's buffers, then the bounce). */
static size_t iov_from_buf(const struct iovec *iov, unsigned int nv, const uint8_t *buf, size_t len)
{
	size_t off = 0;

	for (unsigned int i = 0; i < nv && off < len; i++) {
		size_t k = iov[i].iov_len < len - off ? iov[i].iov_len : len - off;

		memcpy(iov[i].iov_base, buf + off, k);
		off += k;
	}
	return off;
}

/* What rx_frame() did with a frame. */
enum rx_outcome {
	RX_DELIVERED,	/* its chains are in n->done_head/len, with their lengths */
	RX_DROP_EMPTY,	/* dropped; its chains are in n->done_head, to complete empty */
	RX_DROP_KEEP,	/* dropped; n->chain untouched for the guest, it takes the next frame */
	RX_HELD,	/* in n->held until the guest posts more chains; its chains given back */
};

/*
 * MRG_RXBUF: the rest bytes of the frame beyond the first chain (now at
 * the start of n->frame) into further chains, appended to done_head and
 * done_len from index 1. Returns how many chains were popped; *ok false
 * if the ring ran out or a chain cannot take data (then none of them
 * gets the frame), *ran_out true for the first: more chains may come.
 */
static unsigned int rx_more(struct virtio_net *n, size_t rest, bool *ok, bool *ran_out)
{
	size_t off = 0;
	unsigned int k = 0;

	*ok = true;
	*ran_out = false;
	while (off < rest) {
		size_t take;

		if (k + 1 == VIRTQ_MAX_SIZE) {
			*ok = false;
			break;
		}
		if (virtio_mmio_pop(&n->t, VIRTIO_NET_RXQ, &n->more) <= 0) {
			*ok = false;
			*ran_out = true;
			break;
		}
		k++;
		n->done_head[k] = n->more.head;
		n->done_len[k] = 0;
		if (n->more.nr_readable || !n->more.writable_len) {
			*ok = false;
			break;
		}
		take = rest - off < n->more.writable_len ? rest - off : (size_t)n->more.writable_len;
		chain_copy_in(&n->more, 0, n->frame + off, take);
		n->done_len[k] = (uint32_t)take;
		off += take;
	}
	return k;
}

/*
 * One frame of len bytes (header included) just read into n->chain
 * (room bytes of it; the rest in n->frame), with features acked. Sets
 * *nr to the chains to complete (n->done_head/len), none for RX_DROP_KEEP.
 */
static enum rx_outcome rx_frame(struct virtio_net *n, size_t len, size_t room, uint64_t features,
				unsigned int *nr)
{
	struct virtio_net_hdr_v1 h;
	unsigned int k = 0;
	bool ok = true, ran_out = false;

	*nr = 0;
	n->done_head[0] = n->chain.head;
	n->done_len[0] = 0;
	if (!room) {
		/* A chain that cannot take a frame: complete it empty, as Linux expects. */
		*nr = 1;
		return RX_DROP_EMPTY;
	}
	if (len < VIRTIO_NET_HDR_LEN || len > VIRTIO_NET_HDR_LEN + VIRTIO_NET_FRAME_MAX)
		return RX_DROP_KEEP;
	chain_copy_written(&n->chain, 0, &h, sizeof(h));
	/* Offloaded frames queued before the guest's features changed cannot go on. */
	if (virtio_net_hdr_check(&h, len - VIRTIO_NET_HDR_LEN, virtio_net_offloads(features, true), true))
		return RX_DROP_KEEP;
	if (len > room) {
		if (features >> VIRTIO_NET_F_MRG_RXBUF & 1)
			k = rx_more(n, len - room, &ok, &ran_out);
		else
			ok = false;	/* too small a chain: Linux counts a length error */
	}
	/*
	 * Too few chains posted yet (the guest refills as it reads): hold the
	 * frame, give its chains back and wait for the next kick, rather than
	 * drop a 64 KiB segment that TCP would have to send again. A ring
	 * that is all ours and still too small never will be: drop.
	 */
	if (!ok && ran_out && 1 + k < virtio_mmio_queue_size(&n->t, VIRTIO_NET_RXQ)) {
		chain_copy_written(&n->chain, 0, n->held, room);
		memcpy(n->held + room, n->frame, len - room);
		n->held_len = len;
		virtio_mmio_unpop(&n->t, VIRTIO_NET_RXQ, 1 + k);
		return RX_HELD;
	}
	*nr = 1 + k;
	if (!ok) {
		for (unsigned int i = 0; i <= k; i++)
			n->done_len[i] = 0;
		return RX_DROP_EMPTY;
	}
	/* Ours: num_buffers; the rest as checked. Written last, over what the tap put there. */
	h.num_buffers = (uint16_t)(1 + k);
	chain_copy_in(&n->chain, 0, &h, sizeof(h));
	n->done_len[0] = (uint32_t)(len < room ? len : room);
	return RX_DELIVERED;
}

unsigned int virtio_net_rx(struct virtio_net *n)
{
	struct iovec iov[VIRTQ_MAX_SIZE + 1];
	unsigned int done = 0, batch = 0, reads = 0, nv = 0;
	uint64_t features = 0;
	size_t room = 0;
	bool have = false, readable;

	virtio_net_sync_offloads(n);
	readable = fd_readable(n->fd);
	/*
	 * At most VIRTIO_NET_RX_BUDGET frames a call, whatever becomes of them:
	 * under a flood that the guest keeps posting buffers for, the thread
	 * must still get back to the transmit queue (the guest's ACKs).
	 */
	while (reads < VIRTIO_NET_RX_BUDGET && !n->tap_failed) {
		enum rx_outcome out;
		unsigned int nr;
		ssize_t r;
		bool last;

		if (!have) {
			/* A chain is taken only for a frame that is there: none is wasted. */
			/* An empty ring asks for the receive kick that refills it (EVENT_IDX). */
			if ((!readable && !n->held_len) ||
			    !virtio_mmio_pending_arm(&n->t, VIRTIO_NET_RXQ) ||
			    virtio_mmio_pop(&n->t, VIRTIO_NET_RXQ, &n->chain) <= 0)
				break;
			have = true;
			/* With a chain in flight a reset waits: the features are this frame's. */
			virtio_net_acked(n, &features);
			room = rx_iov(n, &n->chain, iov, &nv);
		}
		if (n->held_len) {
			/* The held frame first, into this chain as if read now. */
			r = (ssize_t)iov_from_buf(iov, nv, n->held, n->held_len);
			n->held_len = 0;
		} else {
			r = readv(n->fd, iov, (int)nv);
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;		/* nothing waiting */
		if (r <= 0) {
			/* EBADFD: the interface was deleted; it would poll readable forever. */
			n->tap_failed = true;
			fprintf(stderr, "kvmlu-vmm: %s: read: %s; no more frames are received\n",
				n->name, r < 0 ? strerror(errno) : "end of file");
			break;
		}
		reads++;
		out = rx_frame(n, (size_t)r, room, features, &nr);
		if (out == RX_HELD) {
			have = false;	/* given back with its further chains */
			break;
		}
		if (out != RX_DELIVERED)
			__atomic_fetch_add(&n->rx_dropped, 1, __ATOMIC_RELAXED);
		if (out == RX_DROP_KEEP)
			continue;
		have = false;
		if (out == RX_DELIVERED) {
			__atomic_fetch_add(&n->rx_packets, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&n->rx_bytes, (uint64_t)r - VIRTIO_NET_HDR_LEN,
					   __ATOMIC_RELAXED);
		}
		/* Interrupt now if the batch is full or nothing more comes in this call. */
		readable = reads < VIRTIO_NET_RX_BUDGET && fd_readable(n->fd);
		last = batch + nr >= VIRTIO_NET_IRQ_BATCH || !readable ||
		       virtio_mmio_pending(&n->t, VIRTIO_NET_RXQ) == 0;
		for (unsigned int i = 0; i < nr; i++)
			virtio_mmio_push(&n->t, VIRTIO_NET_RXQ, n->done_head[i], n->done_len[i],
					 last && i == nr - 1);
		done += nr;
		batch = last ? 0 : batch + nr;
	}
	if (have) {
		/* Taken for a frame that was dropped, and no other came: back empty. */
		virtio_mmio_push(&n->t, VIRTIO_NET_RXQ, n->chain.head, 0, true);
		done++;
	}
	return done;
}
