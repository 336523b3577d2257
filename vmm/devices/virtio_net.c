// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-net: the tap, the MAC, the vnet header and the transmit half
 * (see virtio_net.h). The receive half is virtio_net_rx.c, the device
 * thread and pause virtio_net_io.c.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/devices/virtio_net.h"
#include "vmm/devices/virtio_net_frame.h"

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

bool virtio_net_acked(struct virtio_net *n, uint64_t *features)
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

	if (!virtio_net_acked(n, &f))
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

/* Copy len bytes at offset off of c's readable part into out. */
static bool chain_copy_out(const struct virtq_chain *c, size_t off, void *out, size_t len)
{
	return virtio_net_chain_move(c, 0, c->nr_readable, off, out, len, false);
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
	return virtio_net_hdr_check(h, c->readable_len - VIRTIO_NET_HDR_LEN,
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

/* arm: pop until the ring is empty, which asks the driver for its next kick. */
static unsigned int tx_drain(struct virtio_net *n, bool arm)
{
	unsigned int done = 0, batch = 0;

	while ((arm || virtio_mmio_pending(&n->t, VIRTIO_NET_TXQ)) &&
	       virtio_mmio_pop(&n->t, VIRTIO_NET_TXQ, &n->chain) > 0) {
		uint64_t features;
		bool last;

		/* Read with the chain in flight: a reset waits for it, so they are the chain's. */
		virtio_net_acked(n, &features);
		tx_one(n, &n->chain, features);
		done++;
		last = ++batch == VIRTIO_NET_IRQ_BATCH || virtio_mmio_pending(&n->t, VIRTIO_NET_TXQ) == 0;
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

bool virtio_net_tx_look(struct virtio_net *n)
{
	if (virtio_net_tx_unarmed(n))
		return true;
	virtio_net_tx(n);
	return false;
}

bool virtio_net_tx_kick(struct virtio_net *n)
{
	uint64_t rx = __atomic_load_n(&n->rx_bytes, __ATOMIC_RELAXED);
	uint64_t tx = __atomic_load_n(&n->tx_bytes, __ATOMIC_RELAXED);
	bool receiving = rx - n->kick_rx_bytes > tx - n->kick_tx_bytes;

	n->kick_rx_bytes = rx;
	n->kick_tx_bytes = tx;
	if (!receiving)
		return virtio_net_tx_look(n);
	virtio_net_tx(n);
	return false;
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
