// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-net: the tap, the MAC, the vnet header and moving one frame
 * each way (see virtio_net.h). The device thread and pause are in
 * virtio_net_io.c.
 *
 * The tap and the guest speak the same 12-byte header (struct
 * virtio_net_hdr_v1, little-endian as x86-64 is). Both ways a header is
 * read once into a local copy, checked against the offloads the driver
 * acked (net_hdr_check()), cleaned (fields an offload does not use are
 * zeroed, num_buffers is ours) and only that copy is passed on: the
 * guest can change its buffers under us, but not what we checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/devices/virtio_net.h"

_Static_assert(sizeof(struct virtio_net_hdr_v1) == VIRTIO_NET_HDR_LEN, "1.x header size");
/* The header's fields are little-endian (1.x) and the tap's native: read as they are. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "a little-endian host");

/* Config space (5.1.4): mac, then status; nothing else is offered. */
struct net_config {
	uint8_t mac[6];
	uint16_t status;
} __attribute__((packed));

static void net_zero(struct virtio_net *n)
{
	memset(n, 0, offsetof(struct virtio_net, chain));
	n->fd = n->io.ctl_fd = -1;
}

unsigned int virtio_net_offloads(uint64_t f, bool rx)
{
	unsigned int csum = rx ? VIRTIO_NET_F_GUEST_CSUM : VIRTIO_NET_F_CSUM;
	unsigned int tso4 = rx ? VIRTIO_NET_F_GUEST_TSO4 : VIRTIO_NET_F_HOST_TSO4;
	unsigned int tso6 = rx ? VIRTIO_NET_F_GUEST_TSO6 : VIRTIO_NET_F_HOST_TSO6;
	unsigned int ecn = rx ? VIRTIO_NET_F_GUEST_ECN : VIRTIO_NET_F_HOST_ECN;
	unsigned int m;

	/* 5.1.3.1: TSO needs the checksum feature, ECN a TSO; the tap asks the same. */
	if (!(f >> csum & 1))
		return 0;
	m = TUN_F_CSUM;
	if (f >> tso4 & 1)
		m |= TUN_F_TSO4;
	if (f >> tso6 & 1)
		m |= TUN_F_TSO6;
	if ((f >> ecn & 1) && (m & (TUN_F_TSO4 | TUN_F_TSO6)))
		m |= TUN_F_TSO_ECN;
	return m;
}

/* The features the driver acked, if it is running (DRIVER_OK); else false. */
static bool net_acked(struct virtio_net *n, uint64_t *features)
{
	bool live;

	pthread_mutex_lock(&n->t.lock);
	live = n->t.status & VIRTIO_STATUS_DRIVER_OK;
	*features = live ? n->t.driver_features : 0;
	pthread_mutex_unlock(&n->t.lock);
	return live;
}

void virtio_net_sync_offloads(struct virtio_net *n)
{
	char err[160];
	uint64_t f;
	unsigned int want;

	if (!net_acked(n, &f))
		return;
	want = virtio_net_offloads(f, true);
	if (want == n->tap_offloads)
		return;
	/* Once per change either way: a refusal is not retried for every frame. */
	n->tap_offloads = want;
	if (!n->is_tap || !tap_set_offload(n->fd, n->spec.tap, want, err, sizeof(err)))
		return;
	/* The guest then gets whole frames, or drops (rx_dropped) of offloaded ones queued before. */
	if (!n->offload_err_said)
		fprintf(stderr, "kvmlu-vmm: %s: %s\n", n->name, err);
	n->offload_err_said = true;
}

int virtio_net_init_fd(struct virtio_net *n, int fd, const struct virtio_net_spec *spec,
		       const struct guestmem *mem, char *err, size_t errlen)
{
	struct net_config cfg = { .status = VIRTIO_NET_S_LINK_UP };
	uint64_t features = (1ULL << VIRTIO_NET_F_MAC) | (1ULL << VIRTIO_NET_F_STATUS) |
			    VIRTIO_NET_OFFLOAD_FEATURES | (1ULL << VIRTIO_NET_F_MRG_RXBUF) |
			    (1ULL << VIRTIO_RING_F_EVENT_IDX);
	int rc;

	net_zero(n);
	if (!spec->has_mac)
		return kvmlu_err(err, errlen, -EINVAL, "tap %s: no MAC", spec->tap);
	if (spec->no_offloads)
		features &= ~VIRTIO_NET_OFFLOAD_FEATURES;
	n->spec = *spec;
	snprintf(n->name, sizeof(n->name), "virtio-net %s", spec->tap);
	memcpy(cfg.mac, spec->mac, 6);
	rc = virtio_mmio_init(&n->t, n->name, VIRTIO_ID_NET, features, 2, &cfg, sizeof(cfg), mem);
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s: transport: %s", n->name, strerror(-rc));
	device_thread_init(&n->io);
	n->fd = fd;
	n->tap_offloads = 0;
	return 0;
}

int virtio_net_open(struct virtio_net *n, const struct virtio_net_spec *spec,
		    const struct guestmem *mem, char *err, size_t errlen)
{
	int fd, rc;

	net_zero(n);
	rc = tap_open(spec->tap, spec->bridge, &fd, err, errlen);
	if (rc)
		return rc;
	rc = virtio_net_init_fd(n, fd, spec, mem, err, errlen);
	if (rc) {
		close(fd);
		return rc;
	}
	n->is_tap = true;	/* tap_open() set TUNSETOFFLOAD 0: tap_offloads is right */
	return 0;
}

int virtio_net_adopt(struct virtio_net *n, int fd, const struct virtio_net_spec *spec,
		     const struct guestmem *mem, char *err, size_t errlen)
{
	int rc;

	net_zero(n);
	rc = tap_check(fd, spec->tap, err, errlen);
	if (rc)
		return rc;
	rc = virtio_net_init_fd(n, fd, spec, mem, err, errlen);
	if (rc)
		return rc;
	/* The old process set the offloads of its guest: set them again, whatever they were. */
	n->is_tap = true;
	n->tap_offloads = VIRTIO_NET_OFFLOADS_UNKNOWN;
	return 0;
}

/*
 * Move len bytes between buf and c's buffers [from, to), starting at
 * offset off of them: into the chain when in, else out of it. false if
 * the buffers end first.
 */
static bool chain_move(const struct virtq_chain *c, unsigned int from, unsigned int to,
		       size_t off, void *buf, size_t len, bool in)
{
	char *p = buf;

	for (unsigned int i = from; i < to && len; i++) {
		const struct virtq_buf *b = &c->bufs[i];
		size_t k;

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		k = b->len - off < len ? b->len - off : len;
		if (in)
			memcpy((char *)b->hva + off, p, k);
		else
			memcpy(p, (char *)b->hva + off, k);
		p += k;
		len -= k;
		off = 0;
	}
	return len == 0;
}

static bool chain_copy(const struct virtq_chain *c, unsigned int from, unsigned int to,
		       size_t off, void *out, size_t len)
{
	return chain_move(c, from, to, off, out, len, false);
}

/* Copy len bytes at offset off of c's readable part into out. */
static bool chain_copy_out(const struct virtq_chain *c, size_t off, void *out, size_t len)
{
	return chain_copy(c, 0, c->nr_readable, off, out, len);
}

/*
 * Check header h of a frame of len bytes (after the header) against the
 * TUN_F_* offloads allowed that way, and clean it: NULL if it may cross
 * (h now holds what to pass on), else why not. rx: from the tap to the
 * guest, where DATA_VALID (the tap checked the checksum) is kept when
 * the guest acked checksums and cleared otherwise; tx: the driver must
 * not set it (5.1.6.2.1), and it means nothing to the tap: cleared.
 */
static const char *net_hdr_check(struct virtio_net_hdr_v1 *h, size_t len, unsigned int allow,
				 bool rx)
{
	uint8_t gso = h->gso_type & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;
	unsigned int need;

	if (h->flags & ~(VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID))
		return "unknown header flags";
	if (!rx || !(allow & TUN_F_CSUM))
		h->flags &= (uint8_t)~VIRTIO_NET_HDR_F_DATA_VALID;
	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		if (!(allow & TUN_F_CSUM))
			return "partial checksum not acked";
		/* The 16-bit checksum field lies inside the frame. */
		if ((size_t)h->csum_start + h->csum_offset + 2 > len)
			return "checksum field outside the frame";
	} else {
		h->csum_start = h->csum_offset = 0;
	}
	switch (gso) {
	case VIRTIO_NET_HDR_GSO_NONE:
		if (h->gso_type & VIRTIO_NET_HDR_GSO_ECN)
			return "ECN without segmentation";
		h->gso_size = h->hdr_len = 0;
		h->num_buffers = 0;
		return NULL;
	case VIRTIO_NET_HDR_GSO_TCPV4:
		need = TUN_F_TSO4;
		break;
	case VIRTIO_NET_HDR_GSO_TCPV6:
		need = TUN_F_TSO6;
		break;
	default:
		return "unknown gso_type";	/* UDP (UFO), UDP_L4 (USO): not offered */
	}
	if (!(allow & need))
		return "segmentation not acked";
	if ((h->gso_type & VIRTIO_NET_HDR_GSO_ECN) && !(allow & TUN_F_TSO_ECN))
		return "ECN segmentation not acked";
	/* 5.1.6.2.1: a segmentation frame has its checksum left to the device. */
	if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return "segmentation without a partial checksum";
	/*
	 * gso_size is a segment size, not an offset: a frame of one segment
	 * shorter than it is legal (tcp_gso_segment() passes it on whole).
	 */
	if (h->gso_size == 0)
		return "segmentation with gso_size 0";
	if (h->hdr_len > len)
		return "hdr_len beyond the frame";
	h->num_buffers = 0;
	return NULL;
}

/* Why a transmit chain is not sent, or NULL to send it with header *h. */
static const char *tx_refusal(const struct virtq_chain *c, uint64_t features,
			      struct virtio_net_hdr_v1 *h)
{
	if (c->nr != c->nr_readable)
		return "device-writable buffer";
	if (c->readable_len < VIRTIO_NET_HDR_LEN)
		return "shorter than the header";
	if (c->readable_len - VIRTIO_NET_HDR_LEN > VIRTIO_NET_FRAME_MAX)
		return "frame too long";
	if (!chain_copy_out(c, 0, h, sizeof(*h)))
		return "shorter than the header";
	/* One read of the header, checked and passed on as our copy. */
	return net_hdr_check(h, c->readable_len - VIRTIO_NET_HDR_LEN,
			     virtio_net_offloads(features, false), false);
}

static void tx_one(struct virtio_net *n, const struct virtq_chain *c, uint64_t features)
{
	struct virtio_net_hdr_v1 h;
	struct iovec iov[1 + VIRTQ_MAX_SIZE];
	size_t off = VIRTIO_NET_HDR_LEN, total;
	unsigned int nv = 1;
	ssize_t w;

	if (tx_refusal(c, features, &h)) {
		__atomic_fetch_add(&n->tx_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	iov[0] = (struct iovec){ .iov_base = &h, .iov_len = sizeof(h) };
	for (unsigned int i = 0; i < c->nr_readable; i++) {
		const struct virtq_buf *b = &c->bufs[i];

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		iov[nv++] = (struct iovec){ .iov_base = (char *)b->hva + off, .iov_len = b->len - off };
		off = 0;
	}
	total = c->readable_len;
	do
		w = writev(n->fd, iov, (int)nv);
	while (w < 0 && errno == EINTR);
	if (w < 0 || (size_t)w != total) {
		__atomic_fetch_add(&n->tx_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&n->tx_packets, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&n->tx_bytes, total - VIRTIO_NET_HDR_LEN, __ATOMIC_RELAXED);
}

/* Completions between two interrupts at most, as virtio-blk. */
#define NET_IRQ_BATCH 16

/* arm: pop until the ring is empty, which asks the driver for its next kick. */
static unsigned int tx_drain(struct virtio_net *n, bool arm)
{
	unsigned int done = 0, batch = 0;

	while ((arm || virtio_mmio_pending(&n->t, VIRTIO_NET_TXQ)) &&
	       virtio_mmio_pop(&n->t, VIRTIO_NET_TXQ, &n->chain) > 0) {
		uint64_t features;
		bool last;

		/* Read with the chain in flight: a reset waits for it, so they are the chain's. */
		net_acked(n, &features);
		tx_one(n, &n->chain, features);
		done++;
		last = ++batch == NET_IRQ_BATCH || virtio_mmio_pending(&n->t, VIRTIO_NET_TXQ) == 0;
		/* Transmit buffers are only read: the used length is 0. */
		virtio_mmio_push(&n->t, VIRTIO_NET_TXQ, n->chain.head, 0, last);
		if (last)
			batch = 0;
	}
	return done;
}

unsigned int virtio_net_tx(struct virtio_net *n)
{
	return tx_drain(n, true);
}

unsigned int virtio_net_tx_unarmed(struct virtio_net *n)
{
	return tx_drain(n, false);
}

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/* Copy len bytes of src into c's writable buffers from offset off; false if they end first. */
static bool chain_copy_in(const struct virtq_chain *c, size_t off, const void *src, size_t len)
{
	return chain_move(c, c->nr_readable, c->nr, off, (void *)src, len, true);
}

/* Copy len bytes at offset off of c's writable part into out (the header the tap wrote). */
static bool chain_copy_written(const struct virtq_chain *c, size_t off, void *out, size_t len)
{
	return chain_copy(c, c->nr_readable, c->nr, off, out, len);
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
	if (net_hdr_check(&h, len - VIRTIO_NET_HDR_LEN, virtio_net_offloads(features, true), true))
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
			net_acked(n, &features);
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
		last = batch + nr >= NET_IRQ_BATCH || !readable ||
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

void virtio_net_close(struct virtio_net *n)
{
	device_thread_stop(&n->io);
	if (n->t.nr_queues) {
		virtio_mmio_destroy(&n->t);
		device_thread_fini(&n->io);
	}
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}
