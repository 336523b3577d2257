// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-net: the tap, the MAC, and moving one frame each way (see
 * virtio_net.h). The device thread and pause are in virtio_net_io.c.
 *
 * The tap and the guest speak the same 12-byte header (struct
 * virtio_net_hdr_v1), but no offload is negotiated on either side, so
 * every header that crosses is all zero except num_buffers (1 on
 * receive, as the spec asks without VIRTIO_NET_F_MRG_RXBUF). The guest's
 * header is copied and checked, never passed on: a header asking for a
 * checksum or segmentation we did not offer drops its frame.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/virtio_net.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/devices/virtio_net.h"

_Static_assert(sizeof(struct virtio_net_hdr_v1) == VIRTIO_NET_HDR_LEN, "1.x header size");

/* Config space (5.1.4): mac, then status; nothing else is offered. */
struct net_config {
	uint8_t mac[6];
	uint16_t status;
} __attribute__((packed));

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool virtio_net_mac_parse(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	if (strlen(s) != 17)
		return false;
	for (int i = 0; i < 6; i++) {
		int hi = hexval(s[3 * i]), lo = hexval(s[3 * i + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return false;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	/* A NIC's own address is unicast (I/G bit clear) and not all zeros. */
	if ((m[0] & 1) || !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]))
		return false;
	memcpy(mac, m, 6);
	return true;
}

void virtio_net_mac_format(const uint8_t mac[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

int virtio_net_mac_generate(uint8_t mac[6])
{
	if (getrandom(mac, 6, 0) != 6)
		return errno ? -errno : -EIO;
	mac[0] = (uint8_t)((mac[0] & 0xfc) | 0x02);	/* unicast, locally administered */
	return 0;
}

static void net_zero(struct virtio_net *n)
{
	memset(n, 0, offsetof(struct virtio_net, chain));
	n->fd = n->ctl_fd = -1;
}

int virtio_net_init_fd(struct virtio_net *n, int fd, const struct virtio_net_spec *spec,
		       const struct guestmem *mem, char *err, size_t errlen)
{
	struct net_config cfg = { .status = VIRTIO_NET_S_LINK_UP };
	uint64_t features = (1ULL << VIRTIO_NET_F_MAC) | (1ULL << VIRTIO_NET_F_STATUS);
	int rc;

	net_zero(n);
	if (!spec->has_mac)
		return kvmlu_err(err, errlen, -EINVAL, "tap %s: no MAC", spec->tap);
	n->spec = *spec;
	snprintf(n->name, sizeof(n->name), "virtio-net %s", spec->tap);
	memcpy(cfg.mac, spec->mac, 6);
	rc = virtio_mmio_init(&n->t, n->name, VIRTIO_ID_NET, features, 2, &cfg, sizeof(cfg), mem);
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s: transport: %s", n->name, strerror(-rc));
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cond, NULL);
	n->fd = fd;
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
	if (rc)
		close(fd);
	return rc;
}

int virtio_net_adopt(struct virtio_net *n, int fd, const struct virtio_net_spec *spec,
		     const struct guestmem *mem, char *err, size_t errlen)
{
	int rc;

	net_zero(n);
	rc = tap_check(fd, spec->tap, err, errlen);
	if (rc)
		return rc;
	return virtio_net_init_fd(n, fd, spec, mem, err, errlen);
}

/* Copy len bytes at offset off of c's readable part into out. */
static bool chain_copy_out(const struct virtq_chain *c, size_t off, void *out, size_t len)
{
	char *dst = out;

	for (unsigned int i = 0; i < c->nr_readable && len; i++) {
		const struct virtq_buf *b = &c->bufs[i];
		size_t k;

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		k = b->len - off < len ? b->len - off : len;
		memcpy(dst, (char *)b->hva + off, k);
		dst += k;
		len -= k;
		off = 0;
	}
	return len == 0;
}

/* Why a transmit chain is not sent, or NULL to send it. */
static const char *tx_refusal(const struct virtq_chain *c)
{
	struct virtio_net_hdr_v1 h;

	if (c->nr != c->nr_readable)
		return "device-writable buffer";
	if (c->readable_len < VIRTIO_NET_HDR_LEN)
		return "shorter than the header";
	if (c->readable_len - VIRTIO_NET_HDR_LEN > VIRTIO_NET_FRAME_MAX)
		return "frame too long";
	if (!chain_copy_out(c, 0, &h, sizeof(h)))
		return "shorter than the header";
	/* One read of the header, checked on our copy: no offload was negotiated. */
	if (h.flags || h.gso_type != VIRTIO_NET_HDR_GSO_NONE)
		return "header asks for an offload";
	return NULL;
}

static void tx_one(struct virtio_net *n, const struct virtq_chain *c)
{
	static const struct virtio_net_hdr_v1 zero_hdr;
	struct iovec iov[1 + VIRTQ_MAX_SIZE];
	size_t off = VIRTIO_NET_HDR_LEN, total;
	unsigned int nv = 1;
	ssize_t w;

	if (tx_refusal(c)) {
		__atomic_fetch_add(&n->tx_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	iov[0] = (struct iovec){ .iov_base = (void *)&zero_hdr, .iov_len = sizeof(zero_hdr) };
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

unsigned int virtio_net_tx(struct virtio_net *n)
{
	unsigned int done = 0, batch = 0;

	while (virtio_mmio_pop(&n->t, VIRTIO_NET_TXQ, &n->chain) > 0) {
		bool last;

		tx_one(n, &n->chain);
		done++;
		last = ++batch == NET_IRQ_BATCH || virtio_mmio_pending(&n->t, VIRTIO_NET_TXQ) == 0;
		/* Transmit buffers are only read: the used length is 0. */
		virtio_mmio_push(&n->t, VIRTIO_NET_TXQ, n->chain.head, 0, last);
		if (last)
			batch = 0;
	}
	return done;
}

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/*
 * The frame of len bytes (header included) in n->frame into one rx
 * chain. Returns the used length pushed (0: frame dropped), or -1 if no
 * chain could be taken (the frame is dropped, nothing pushed).
 */
static int rx_one(struct virtio_net *n, size_t len, bool *pushed)
{
	struct virtio_net_hdr_v1 h;
	struct virtq_chain *c = &n->chain;
	size_t off = 0;

	*pushed = false;
	memcpy(&h, n->frame, sizeof(h));
	/* TUNSETOFFLOAD 0 means neither can come; if one does, it cannot go on whole. */
	if (h.gso_type != VIRTIO_NET_HDR_GSO_NONE || (h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return -1;
	memset(&h, 0, sizeof(h));
	h.num_buffers = 1;
	memcpy(n->frame, &h, sizeof(h));
	if (virtio_mmio_pop(&n->t, VIRTIO_NET_RXQ, c) <= 0)
		return -1;
	*pushed = true;
	if (c->nr_readable || c->writable_len < len)
		return 0;
	for (unsigned int i = 0; i < c->nr && off < len; i++) {
		size_t k = c->bufs[i].len < len - off ? c->bufs[i].len : len - off;

		memcpy(c->bufs[i].hva, n->frame + off, k);
		off += k;
	}
	return (int)len;
}

unsigned int virtio_net_rx(struct virtio_net *n)
{
	unsigned int done = 0, batch = 0, reads = 0;

	/*
	 * At most VIRTIO_NET_RX_BUDGET frames a call, whatever becomes of them:
	 * under a flood that the guest keeps posting buffers for, the thread
	 * must still get back to the transmit queue (the guest's ACKs).
	 */
	while (reads < VIRTIO_NET_RX_BUDGET && !n->tap_failed &&
	       virtio_mmio_pending(&n->t, VIRTIO_NET_RXQ)) {
		ssize_t r = read(n->fd, n->frame, sizeof(n->frame));
		bool pushed, last;
		int used;

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
		if ((size_t)r < VIRTIO_NET_HDR_LEN) {
			__atomic_fetch_add(&n->rx_dropped, 1, __ATOMIC_RELAXED);
			continue;
		}
		used = rx_one(n, (size_t)r, &pushed);
		if (used <= 0)
			__atomic_fetch_add(&n->rx_dropped, 1, __ATOMIC_RELAXED);
		if (!pushed)
			continue;
		if (used > 0) {
			__atomic_fetch_add(&n->rx_packets, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&n->rx_bytes, (uint64_t)r - VIRTIO_NET_HDR_LEN,
					   __ATOMIC_RELAXED);
		}
		done++;
		last = ++batch == NET_IRQ_BATCH || reads == VIRTIO_NET_RX_BUDGET ||
		       virtio_mmio_pending(&n->t, VIRTIO_NET_RXQ) == 0 || !fd_readable(n->fd);
		virtio_mmio_push(&n->t, VIRTIO_NET_RXQ, n->chain.head, (uint32_t)(used > 0 ? used : 0),
				 last);
		if (last)
			batch = 0;
	}
	return done;
}

void virtio_net_close(struct virtio_net *n)
{
	if (n->thread_started) {
		uint64_t one = 1;

		pthread_mutex_lock(&n->lock);
		n->stop = true;
		pthread_mutex_unlock(&n->lock);
		if (write(n->ctl_fd, &one, sizeof(one)) < 0) {
			/* full counter: already signalled */
		}
		pthread_join(n->thread, NULL);
		n->thread_started = false;
	}
	if (n->t.nr_queues) {
		virtio_mmio_destroy(&n->t);
		pthread_cond_destroy(&n->cond);
		pthread_mutex_destroy(&n->lock);
	}
	if (n->ctl_fd >= 0)
		close(n->ctl_fd);
	if (n->fd >= 0)
		close(n->fd);
	n->fd = n->ctl_fd = -1;
}
