// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/devices/virtio_net*.c without a tap: the device runs
 * on one end of a datagram socketpair (each datagram a tap frame with
 * its 12-byte header), a pretend guest's RAM holds the rings, and the
 * test plays the network on the other end. Each test checks values:
 * bytes on the wire, bytes in guest buffers, used lengths, counters;
 * and the hostile cases (too-small or readable rx chains, oversized,
 * short or offload-asking tx chains, a looping chain).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KVMLU_TEST_VIRTIO_MMIO
#include "tests/unit/vmm/state_devices.h"
#include "tests/unit/vmm/virtio_test_support.h"
#include "vmm/devices/virtio_net.h"
#include "vmm/devices/virtio_net_state.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_vm.h"

/* Queue q's rings: q 0 (rx) at the support header's places, q 1 (tx) after. */
#define RING(q)		(TG_DESC + (uint64_t)(q) * 0x8000)
#define DESC(q)		RING(q)
#define AVAIL(q)	(RING(q) + 0x2000)
#define USED(q)		(RING(q) + 0x3000)
#define QSIZE		16
#define RXBUF		0x20000ULL	/* rx buffers: 0x1000 apart */
#define TXBUF		0x40000ULL
#define BIG		0x60000ULL	/* 0x80000 bytes of room */

struct fixture {
	struct guestmem gm;
	struct virtio_net dev[2];
	struct virtio_net *n;
	int peer;		/* the "network" end */
	int peer2;
	char err[512];
	uint16_t next_avail[2];
	uint16_t next_desc[2];
};

static const uint8_t MAC[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static void *gp(struct fixture *f, uint64_t gpa)
{
	return tg_ptr(&f->gm, gpa);
}

static void desc(struct fixture *f, unsigned int q, uint16_t i, uint64_t addr, uint32_t len,
		 uint16_t flags, uint16_t next)
{
	uint8_t *d = (uint8_t *)gp(f, DESC(q)) + 16 * i;

	memcpy(d, &addr, 8);
	memcpy(d + 8, &len, 4);
	memcpy(d + 12, &flags, 2);
	memcpy(d + 14, &next, 2);
}

static void avail(struct fixture *f, unsigned int q, uint16_t head)
{
	uint8_t *a = gp(f, AVAIL(q));
	uint16_t idx = f->next_avail[q]++, next = f->next_avail[q];

	memcpy(a + 4 + 2 * (idx % QSIZE), &head, 2);
	__atomic_store_n((uint16_t *)(a + 2), next, __ATOMIC_RELEASE);
}

static uint16_t used_idx(struct fixture *f, unsigned int q)
{
	return __atomic_load_n((uint16_t *)((uint8_t *)gp(f, USED(q)) + 2), __ATOMIC_ACQUIRE);
}

static void used_elem(struct fixture *f, unsigned int q, uint16_t idx, uint32_t *id, uint32_t *len)
{
	uint8_t *u = (uint8_t *)gp(f, USED(q)) + 4 + 8 * (idx % QSIZE);

	memcpy(id, u, 4);
	memcpy(len, u + 4, 4);
}

static void setup_queue(struct virtio_mmio *t, unsigned int q)
{
	tg_wr(t, VIRTIO_MMIO_QUEUE_SEL, q);
	tg_wr(t, VIRTIO_MMIO_QUEUE_NUM, QSIZE);
	tg_wr(t, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)DESC(q));
	tg_wr(t, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	tg_wr(t, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)AVAIL(q));
	tg_wr(t, VIRTIO_MMIO_QUEUE_DRIVER_HIGH, 0);
	tg_wr(t, VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)USED(q));
	tg_wr(t, VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0);
	tg_wr(t, VIRTIO_MMIO_QUEUE_READY, 1);
}

static struct virtio_net_spec spec(void)
{
	struct virtio_net_spec s = { .tap = "tap-test", .has_mac = true };

	memcpy(s.mac, MAC, 6);
	return s;
}

/* Device on a fresh socketpair, driven up to DRIVER_OK with both queues. */
static void open_dev(struct fixture *f, struct virtio_net *n, int *peer)
{
	struct virtio_net_spec s = spec();
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(virtio_net_init_fd(n, sv[0], &s, &f->gm, f->err, sizeof(f->err)), 0);
	*peer = sv[1];
}

static void drive(struct virtio_net *n)
{
	tg_negotiate(&n->t, (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_MAC) |
			    (1ULL << VIRTIO_NET_F_STATUS));
	assert_true(tg_rd(&n->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
	setup_queue(&n->t, VIRTIO_NET_RXQ);
	setup_queue(&n->t, VIRTIO_NET_TXQ);
	tg_driver_ok(&n->t);
	assert_int_equal(tg_rd(&n->t, VIRTIO_MMIO_STATUS), 1 | 2 | 4 | 8);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	tg_mem_init(&f->gm);
	f->dev[0].fd = f->dev[0].io.ctl_fd = f->dev[1].fd = f->dev[1].io.ctl_fd = -1;
	f->peer = f->peer2 = -1;
	f->n = &f->dev[0];
	open_dev(f, f->n, &f->peer);
	drive(f->n);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	virtio_net_close(&f->dev[0]);
	virtio_net_close(&f->dev[1]);
	if (f->peer >= 0)
		close(f->peer);
	if (f->peer2 >= 0)
		close(f->peer2);
	tg_mem_free(&f->gm);
	free(f);
	return 0;
}

/* A frame of len bytes, byte i = seed + i. */
static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i);
}

static bool is_fill(const uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed + i))
			return false;
	return true;
}

/* The network sends one frame: a header (flags, gso_type as given) and len bytes. */
static void net_send(int peer, size_t len, uint8_t seed, uint8_t flags, uint8_t gso)
{
	static uint8_t buf[VIRTIO_NET_HDR_LEN + VIRTIO_NET_FRAME_MAX];
	struct virtio_net_hdr_v1 h = { .flags = flags, .gso_type = gso };

	memcpy(buf, &h, sizeof(h));
	fill(buf + sizeof(h), len, seed);
	assert_int_equal(send(peer, buf, sizeof(h) + len, 0), (ssize_t)(sizeof(h) + len));
}

/* One rx chain: a single writable buffer of len bytes at slot i. */
static void post_rx(struct fixture *f, uint16_t i, uint32_t len)
{
	desc(f, VIRTIO_NET_RXQ, i, RXBUF + 0x1000ULL * i, len, VIRTQ_DESC_F_WRITE, 0);
	avail(f, VIRTIO_NET_RXQ, i);
}

/* One tx chain at head i: header (12 bytes) then len bytes of frame in a second buffer. */
static void post_tx(struct fixture *f, uint16_t i, uint32_t len, uint8_t seed)
{
	uint64_t hdr = TXBUF + 0x2000ULL * i, data = hdr + 0x100;
	struct virtio_net_hdr_v1 h = { .num_buffers = 0 };

	memcpy(gp(f, hdr), &h, sizeof(h));
	fill(gp(f, data), len, seed);
	desc(f, VIRTIO_NET_TXQ, i, hdr, sizeof(h), VIRTQ_DESC_F_NEXT, (uint16_t)(i + 1));
	desc(f, VIRTIO_NET_TXQ, (uint16_t)(i + 1), data, len, 0, 0);
	avail(f, VIRTIO_NET_TXQ, i);
}

static void test_virtio_net_offers_mac_status_and_two_queues(void **state)
{
	struct fixture *f = *state;
	uint8_t cfg[8];

	assert_int_equal(tg_rd(&f->n->t, VIRTIO_MMIO_DEVICE_ID), VIRTIO_ID_NET);
	tg_wr(&f->n->t, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	/*
	 * MAC, STATUS, checksum and TCP segmentation both ways, mergeable rx
	 * buffers, and event indices (fewer kicks and interrupts).
	 */
	assert_int_equal(tg_rd(&f->n->t, VIRTIO_MMIO_DEVICE_FEATURES),
			 (1u << VIRTIO_NET_F_MAC) | (1u << VIRTIO_NET_F_STATUS) |
			 (1u << VIRTIO_NET_F_CSUM) | (1u << VIRTIO_NET_F_GUEST_CSUM) |
			 (1u << VIRTIO_NET_F_GUEST_TSO4) | (1u << VIRTIO_NET_F_GUEST_TSO6) |
			 (1u << VIRTIO_NET_F_GUEST_ECN) | (1u << VIRTIO_NET_F_HOST_TSO4) |
			 (1u << VIRTIO_NET_F_HOST_TSO6) | (1u << VIRTIO_NET_F_HOST_ECN) |
			 (1u << VIRTIO_NET_F_MRG_RXBUF) | (1u << VIRTIO_RING_F_EVENT_IDX));
	tg_wr(&f->n->t, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	assert_int_equal(tg_rd(&f->n->t, VIRTIO_MMIO_DEVICE_FEATURES), 1);	/* VERSION_1 */
	for (int i = 0; i < 8; i++)
		virtio_mmio_read(&f->n->t, VIRTIO_MMIO_CONFIG + i, &cfg[i], 1);
	assert_memory_equal(cfg, MAC, 6);
	assert_int_equal(cfg[6] | cfg[7] << 8, VIRTIO_NET_S_LINK_UP);
	tg_wr(&f->n->t, VIRTIO_MMIO_QUEUE_SEL, 2);
	assert_int_equal(tg_rd(&f->n->t, VIRTIO_MMIO_QUEUE_NUM_MAX), 0);
}

static void test_virtio_net_tx_sends_frame_with_zero_header(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[4096];
	struct virtio_net_hdr_v1 zero = { 0 };
	uint32_t id, len;

	post_tx(f, 0, 1000, 7);
	assert_int_equal(virtio_net_tx(f->n), 1);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 12 + 1000);
	assert_memory_equal(buf, &zero, 12);
	assert_true(is_fill(buf + 12, 1000, 7));
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 1);
	used_elem(f, VIRTIO_NET_TXQ, 0, &id, &len);
	assert_int_equal(id, 0);
	assert_int_equal(len, 0);
	assert_int_equal(f->n->tx_packets, 1);
	assert_int_equal(f->n->tx_bytes, 1000);
	assert_true(tg_eventfd(f->n->t.irq_fd) >= 1);
}

static void test_virtio_net_tx_header_split_across_buffers(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];
	uint64_t a = TXBUF, b = TXBUF + 0x100;

	/* 5 bytes of header, then 7 more with the first 20 bytes of frame. */
	memset(gp(f, a), 0, 5);
	memset(gp(f, b), 0, 7);
	fill((uint8_t *)gp(f, b) + 7, 20, 3);
	desc(f, VIRTIO_NET_TXQ, 0, a, 5, VIRTQ_DESC_F_NEXT, 1);
	desc(f, VIRTIO_NET_TXQ, 1, b, 27, 0, 0);
	avail(f, VIRTIO_NET_TXQ, 0);
	assert_int_equal(virtio_net_tx(f->n), 1);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 32);
	assert_true(is_fill(buf + 12, 20, 3));
}

static void test_virtio_net_tx_drops_hostile_chains(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_hdr_v1 csum = { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM };
	struct virtio_net_hdr_v1 gso = { .gso_type = VIRTIO_NET_HDR_GSO_TCPV4 };
	uint8_t buf[128];

	/* shorter than the header */
	desc(f, VIRTIO_NET_TXQ, 0, TXBUF, 11, 0, 0);
	avail(f, VIRTIO_NET_TXQ, 0);
	/* a device-writable buffer in a transmit chain */
	desc(f, VIRTIO_NET_TXQ, 1, TXBUF, 12, VIRTQ_DESC_F_NEXT, 2);
	desc(f, VIRTIO_NET_TXQ, 2, TXBUF + 0x100, 64, VIRTQ_DESC_F_WRITE, 0);
	avail(f, VIRTIO_NET_TXQ, 1);
	/* frame longer than any frame without offloads */
	memset(gp(f, BIG), 0, 12);
	desc(f, VIRTIO_NET_TXQ, 3, BIG, 12 + VIRTIO_NET_FRAME_MAX + 1, 0, 0);
	avail(f, VIRTIO_NET_TXQ, 3);
	/* checksum and segmentation offloads that were never negotiated */
	memcpy(gp(f, TXBUF + 0x1000), &csum, 12);
	desc(f, VIRTIO_NET_TXQ, 4, TXBUF + 0x1000, 60, 0, 0);
	avail(f, VIRTIO_NET_TXQ, 4);
	memcpy(gp(f, TXBUF + 0x2000), &gso, 12);
	desc(f, VIRTIO_NET_TXQ, 5, TXBUF + 0x2000, 60, 0, 0);
	avail(f, VIRTIO_NET_TXQ, 5);

	assert_int_equal(virtio_net_tx(f->n), 5);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 5);
	assert_int_equal(f->n->tx_dropped, 5);
	assert_int_equal(f->n->tx_packets, 0);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	/* Dropped frames are not a device error: the next one goes out. */
	assert_false(tg_rd(&f->n->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	post_tx(f, 6, 60, 1);
	assert_int_equal(virtio_net_tx(f->n), 1);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 72);
}

static void test_virtio_net_tx_largest_frame_goes_out(void **state)
{
	struct fixture *f = *state;
	static uint8_t buf[12 + VIRTIO_NET_FRAME_MAX + 16];
	int sz = 1 << 20;

	assert_int_equal(setsockopt(f->n->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)), 0);
	memset(gp(f, BIG), 0, 12);
	fill((uint8_t *)gp(f, BIG) + 12, VIRTIO_NET_FRAME_MAX, 9);
	desc(f, VIRTIO_NET_TXQ, 0, BIG, 12 + VIRTIO_NET_FRAME_MAX, 0, 0);
	avail(f, VIRTIO_NET_TXQ, 0);
	assert_int_equal(virtio_net_tx(f->n), 1);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 12 + VIRTIO_NET_FRAME_MAX);
	assert_true(is_fill(buf + 12, VIRTIO_NET_FRAME_MAX, 9));
}

static void test_virtio_net_rx_delivers_frame_with_num_buffers_1(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_hdr_v1 h;
	uint32_t id, len;

	post_rx(f, 3, 1526);
	net_send(f->peer, 1514, 5, VIRTIO_NET_HDR_F_DATA_VALID, 0);
	assert_int_equal(virtio_net_rx(f->n), 1);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
	used_elem(f, VIRTIO_NET_RXQ, 0, &id, &len);
	assert_int_equal(id, 3);
	assert_int_equal(len, 12 + 1514);
	memcpy(&h, gp(f, RXBUF + 0x3000), 12);
	/* GUEST_CSUM was not negotiated: flags must be 0; 1.x: num_buffers 1. */
	assert_int_equal(h.flags, 0);
	assert_int_equal(h.gso_type, 0);
	assert_int_equal(h.num_buffers, 1);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF + 0x3000) + 12, 1514, 5));
	assert_int_equal(f->n->rx_packets, 1);
	assert_int_equal(f->n->rx_bytes, 1514);
	assert_true(tg_eventfd(f->n->t.irq_fd) >= 1);
}

static void test_virtio_net_rx_frame_spans_buffers_of_one_chain(void **state)
{
	struct fixture *f = *state;
	uint32_t id, len;

	/* header alone in the first buffer (as Linux does), the frame in three more */
	desc(f, VIRTIO_NET_RXQ, 0, RXBUF, 12, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1);
	desc(f, VIRTIO_NET_RXQ, 1, RXBUF + 0x1000, 100, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2);
	desc(f, VIRTIO_NET_RXQ, 2, RXBUF + 0x2000, 100, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 3);
	desc(f, VIRTIO_NET_RXQ, 3, RXBUF + 0x3000, 100, VIRTQ_DESC_F_WRITE, 0);
	avail(f, VIRTIO_NET_RXQ, 0);
	net_send(f->peer, 250, 11, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 1);
	used_elem(f, VIRTIO_NET_RXQ, 0, &id, &len);
	assert_int_equal(len, 262);
	assert_true(is_fill(gp(f, RXBUF + 0x1000), 100, 11));
	assert_true(is_fill(gp(f, RXBUF + 0x2000), 100, 111));
	assert_true(is_fill(gp(f, RXBUF + 0x3000), 50, 211));
}

static void test_virtio_net_rx_too_small_chain_drops_frame_not_device(void **state)
{
	struct fixture *f = *state;
	uint32_t id, len;

	post_rx(f, 0, 100);
	post_rx(f, 1, 2048);
	net_send(f->peer, 1000, 1, 0, 0);
	net_send(f->peer, 500, 2, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 2);
	used_elem(f, VIRTIO_NET_RXQ, 0, &id, &len);
	assert_int_equal(id, 0);
	assert_int_equal(len, 0);	/* dropped: Linux counts a length error, reposts */
	used_elem(f, VIRTIO_NET_RXQ, 1, &id, &len);
	assert_int_equal(id, 1);
	assert_int_equal(len, 512);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF + 0x1000) + 12, 500, 2));
	assert_int_equal(f->n->rx_dropped, 1);
	assert_int_equal(f->n->rx_packets, 1);
	assert_false(tg_rd(&f->n->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
}

static void test_virtio_net_rx_chain_with_readable_buffer_drops_frame(void **state)
{
	struct fixture *f = *state;
	uint32_t id, len;

	desc(f, VIRTIO_NET_RXQ, 0, RXBUF, 64, VIRTQ_DESC_F_NEXT, 1);
	desc(f, VIRTIO_NET_RXQ, 1, RXBUF + 0x1000, 2048, VIRTQ_DESC_F_WRITE, 0);
	avail(f, VIRTIO_NET_RXQ, 0);
	memset(gp(f, RXBUF), 0xab, 64);
	net_send(f->peer, 60, 1, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 1);
	used_elem(f, VIRTIO_NET_RXQ, 0, &id, &len);
	assert_int_equal(len, 0);
	assert_int_equal(*(uint8_t *)gp(f, RXBUF), 0xab);	/* readable: never written */
	assert_int_equal(f->n->rx_dropped, 1);
}

static void test_virtio_net_rx_waits_in_fd_when_no_buffer(void **state)
{
	struct fixture *f = *state;
	uint8_t b;

	net_send(f->peer, 100, 4, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 0);
	/* Not read, so not lost: still in the "tap". */
	assert_int_equal(recv(f->n->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT), 1);
	post_rx(f, 0, 2048);
	assert_int_equal(virtio_net_rx(f->n), 1);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF) + 12, 100, 4));
}

static void test_virtio_net_rx_offload_frame_from_tap_dropped(void **state)
{
	struct fixture *f = *state;
	uint32_t id, len;

	post_rx(f, 0, 2048);
	net_send(f->peer, 100, 1, 0, VIRTIO_NET_HDR_GSO_TCPV4);
	net_send(f->peer, 100, 2, VIRTIO_NET_HDR_F_NEEDS_CSUM, 0);
	net_send(f->peer, 100, 3, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 1);
	/* The two the guest did not ack were read into the chain, which then took the third. */
	used_elem(f, VIRTIO_NET_RXQ, 0, &id, &len);
	assert_int_equal(len, 112);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF) + 12, 100, 3));
	assert_int_equal(f->n->rx_dropped, 2);
}

static void test_virtio_net_rx_loop_is_device_error(void **state)
{
	struct fixture *f = *state;

	desc(f, VIRTIO_NET_RXQ, 0, RXBUF, 64, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1);
	desc(f, VIRTIO_NET_RXQ, 1, RXBUF, 64, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 0);
	avail(f, VIRTIO_NET_RXQ, 0);
	net_send(f->peer, 100, 1, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 0);
	assert_true(tg_rd(&f->n->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 0);
	/* Broken: nothing more is read from the tap. */
	net_send(f->peer, 100, 2, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 0);
}

static void test_virtio_net_rx_stops_on_a_tap_that_is_gone(void **state)
{
	struct fixture *f = *state;
	uint32_t id, len;
	int w = open("/dev/null", O_WRONLY | O_CLOEXEC);

	post_rx(f, 0, 2048);
	/* Reads now fail at once (EBADF), as a deleted tap's do (EBADFD): do not spin on it. */
	assert_true(w >= 0);
	assert_true(dup2(w, f->n->fd) >= 0);
	close(w);
	/* The chain taken for the read that failed goes back empty, once. */
	assert_int_equal(virtio_net_rx(f->n), 1);
	assert_true(f->n->tap_failed);
	assert_int_equal(virtio_net_rx(f->n), 0);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
	used_elem(f, VIRTIO_NET_RXQ, 0, &id, &len);
	assert_int_equal(len, 0);
	/* Transmit still works, and the device is not in error. */
	post_tx(f, 0, 60, 1);
	assert_int_equal(virtio_net_tx(f->n), 1);
	assert_int_equal(f->n->tx_packets, 1);
	assert_false(tg_rd(&f->n->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
}

static void test_virtio_net_rx_reads_at_most_a_budget_per_call(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_spec s = spec();
	struct virtio_net *n = &f->dev[1];
	int sv[2], sz = 1 << 20;
	uint32_t id, len;

	/* seqpacket: unlike a datagram pair, it queues more than 10 records, as a tap does. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)), 0);
	f->peer2 = sv[1];
	assert_int_equal(virtio_net_init_fd(n, sv[0], &s, &f->gm, f->err, sizeof(f->err)), 0);
	drive(n);
	post_rx(f, 0, 2048);
	post_rx(f, 1, 2048);
	/* A flood the guest cannot take (offload frames): each is read and dropped. */
	for (int i = 0; i < VIRTIO_NET_RX_BUDGET + 10; i++)
		net_send(f->peer2, 60, (uint8_t)i, 0, VIRTIO_NET_HDR_GSO_TCPV4);
	net_send(f->peer2, 60, 7, 0, 0);
	/* One chain took them all in turn; at the budget it goes back empty. */
	assert_int_equal(virtio_net_rx(n), 1);
	assert_int_equal(n->rx_dropped, VIRTIO_NET_RX_BUDGET);
	used_elem(f, VIRTIO_NET_RXQ, 0, &id, &len);
	assert_int_equal(id, 0);
	assert_int_equal(len, 0);
	/* The next call goes on where it stopped, and the good frame gets the next buffer. */
	assert_int_equal(virtio_net_rx(n), 1);
	assert_int_equal(n->rx_dropped, VIRTIO_NET_RX_BUDGET + 10);
	used_elem(f, VIRTIO_NET_RXQ, 1, &id, &len);
	assert_int_equal(len, 72);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF + 0x1000) + 12, 60, 7));
	assert_true(tg_eventfd(n->t.irq_fd) >= 1);
}

static void wait_used(struct fixture *f, unsigned int q, uint16_t want)
{
	for (int i = 0; i < 2000 && used_idx(f, q) != want; i++)
		usleep(1000);
	assert_int_equal(used_idx(f, q), want);
}

static void kick(struct virtio_net *n, unsigned int q)
{
	tg_wr(&n->t, VIRTIO_MMIO_QUEUE_NOTIFY, q);
}

static void test_virtio_net_thread_moves_frames_and_pause_holds_them(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];

	assert_int_equal(virtio_net_start(f->n, f->err, sizeof(f->err)), 0);
	post_rx(f, 0, 2048);
	kick(f->n, VIRTIO_NET_RXQ);
	net_send(f->peer, 64, 1, 0, 0);
	wait_used(f, VIRTIO_NET_RXQ, 1);
	post_tx(f, 0, 60, 2);
	kick(f->n, VIRTIO_NET_TXQ);
	wait_used(f, VIRTIO_NET_TXQ, 1);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), 0), 72);

	/* A tx chain posted without a notify is still sent by the quiesce. */
	post_tx(f, 2, 60, 3);
	post_rx(f, 1, 2048);
	virtio_net_quiesce(f->n);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 2);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 72);
	assert_true(is_fill(buf + 12, 60, 3));
	/* Paused: a frame arriving now stays out of guest RAM, even when kicked. */
	net_send(f->peer, 64, 9, 0, 0);
	kick(f->n, VIRTIO_NET_RXQ);
	usleep(50000);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
	/* Resumed: it arrives, once. */
	virtio_net_resume(f->n);
	wait_used(f, VIRTIO_NET_RXQ, 2);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF + 0x1000) + 12, 64, 9));
	usleep(20000);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 2);
	assert_int_equal(f->n->rx_packets, 2);
}

/* A live upgrade in miniature: state out of one device, into a second on the same "tap". */
static void test_virtio_net_state_moves_to_new_device(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_state s;
	struct virtio_net_spec sp = spec();
	int fd;

	post_rx(f, 0, 2048);
	net_send(f->peer, 80, 1, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 1);
	post_rx(f, 1, 2048);
	virtio_net_quiesce(f->n);
	assert_int_equal(virtio_net_get_state(f->n, &s), 0);
	assert_int_equal(virtio_net_state_validate(&s, f->err, sizeof(f->err)), 0);
	assert_int_equal(s.t.q[0].last_avail, 1);
	assert_int_equal(s.t.q[0].used_idx, 1);
	assert_memory_equal(s.mac, MAC, 6);
	assert_string_equal(s.tap, "tap-test");

	/* The new device gets the old one's fd (as SCM_RIGHTS would give a dup). */
	fd = dup(f->n->fd);
	assert_int_equal(virtio_net_init_fd(&f->dev[1], fd, &sp, &f->gm, f->err, sizeof(f->err)), 0);
	assert_int_equal(virtio_net_set_state(&f->dev[1], &s, f->err, sizeof(f->err)), 0);
	virtio_net_close(f->n);
	net_send(f->peer, 90, 2, 0, 0);
	assert_int_equal(virtio_net_rx(&f->dev[1]), 1);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 2);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF + 0x1000) + 12, 90, 2));
}

static void test_virtio_net_state_refuses_other_mac_or_tap(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_state s, bad;
	struct virtio_net_spec sp = spec();
	int sv[2];

	assert_int_equal(virtio_net_get_state(f->n, &s), 0);
	sp.mac[5] ^= 1;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	f->peer2 = sv[1];
	assert_int_equal(virtio_net_init_fd(&f->dev[1], sv[0], &sp, &f->gm, f->err, sizeof(f->err)), 0);
	assert_int_equal(virtio_net_set_state(&f->dev[1], &s, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "mac 52:54:00:12:34:56"));

	bad = s;
	bad.mac[0] = 0x01;	/* multicast */
	assert_int_equal(virtio_net_state_validate(&bad, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "unicast"));
	bad = s;
	bad.mac[3] ^= 1;	/* not what the guest read from config */
	assert_int_equal(virtio_net_state_validate(&bad, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "config"));
	bad = s;
	snprintf(bad.tap, sizeof(bad.tap), "a/b");
	assert_int_equal(virtio_net_state_validate(&bad, f->err, sizeof(f->err)), -EINVAL);
	bad = s;
	memset(bad.bridge, 'x', sizeof(bad.bridge));	/* not terminated */
	assert_int_equal(virtio_net_state_validate(&bad, f->err, sizeof(f->err)), -EINVAL);
	bad = s;
	bad.t.q[1].last_avail = 0x10000;
	assert_int_equal(virtio_net_state_validate(&bad, f->err, sizeof(f->err)), -EINVAL);
	bad = s;
	bad.t.device_id = 2;
	assert_int_equal(virtio_net_state_validate(&bad, f->err, sizeof(f->err)), -EINVAL);
}

/* Everything this device offers on top of VERSION_1, MAC and STATUS. */
#define ALL_OFFLOADS                                                                   \
	((1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_GUEST_CSUM) |             \
	 (1ULL << VIRTIO_NET_F_GUEST_TSO4) | (1ULL << VIRTIO_NET_F_GUEST_TSO6) |       \
	 (1ULL << VIRTIO_NET_F_GUEST_ECN) | (1ULL << VIRTIO_NET_F_HOST_TSO4) |         \
	 (1ULL << VIRTIO_NET_F_HOST_TSO6) | (1ULL << VIRTIO_NET_F_HOST_ECN) |          \
	 (1ULL << VIRTIO_NET_F_MRG_RXBUF))
#define TUN_ALL (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN)

/* The driver resets the device and comes back with VERSION_1, MAC, STATUS and extra. */
static void redrive(struct fixture *f, struct virtio_net *n, uint64_t extra)
{
	tg_negotiate(&n->t, (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_MAC) |
			    (1ULL << VIRTIO_NET_F_STATUS) | extra);
	assert_true(tg_rd(&n->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
	for (unsigned int q = 0; q < 2; q++) {
		memset(gp(f, AVAIL(q)), 0, 0x1000);
		memset(gp(f, USED(q)), 0, 0x1000);
		f->next_avail[q] = 0;
	}
	setup_queue(&n->t, VIRTIO_NET_RXQ);
	setup_queue(&n->t, VIRTIO_NET_TXQ);
	tg_driver_ok(&n->t);
}

/* The network sends one frame of len bytes behind header h. */
static void net_send_hdr(int peer, const struct virtio_net_hdr_v1 *h, size_t len, uint8_t seed)
{
	static uint8_t buf[VIRTIO_NET_HDR_LEN + VIRTIO_NET_FRAME_MAX];

	memcpy(buf, h, sizeof(*h));
	fill(buf + sizeof(*h), len, seed);
	assert_int_equal(send(peer, buf, sizeof(*h) + len, 0), (ssize_t)(sizeof(*h) + len));
}

/* One tx chain at head i: header h, then len bytes of frame. */
static void post_tx_hdr(struct fixture *f, uint16_t i, const struct virtio_net_hdr_v1 *h,
			uint32_t len, uint8_t seed)
{
	uint64_t hdr = TXBUF + 0x2000ULL * i, data = hdr + 0x100;

	memcpy(gp(f, hdr), h, sizeof(*h));
	fill(gp(f, data), len, seed);
	desc(f, VIRTIO_NET_TXQ, i, hdr, sizeof(*h), VIRTQ_DESC_F_NEXT, (uint16_t)(i + 1));
	desc(f, VIRTIO_NET_TXQ, (uint16_t)(i + 1), data, len, 0, 0);
	avail(f, VIRTIO_NET_TXQ, i);
}

/* A TCPv4 segmentation header as Linux sends it for a frame of >= 54 bytes. */
static struct virtio_net_hdr_v1 tso4_hdr(void)
{
	return (struct virtio_net_hdr_v1){ .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
					   .gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .hdr_len = 54,
					   .gso_size = 1448, .csum_start = 34, .csum_offset = 16 };
}

static void test_virtio_net_offloads_follow_acked_features(void **state)
{
	struct fixture *f = *state;
	uint64_t g = (1ULL << VIRTIO_NET_F_GUEST_CSUM) | (1ULL << VIRTIO_NET_F_GUEST_TSO4) |
		     (1ULL << VIRTIO_NET_F_GUEST_TSO6) | (1ULL << VIRTIO_NET_F_GUEST_ECN);

	/* What each set of acked features lets through, each way. */
	assert_int_equal(virtio_net_offloads(g, true), TUN_ALL);
	assert_int_equal(virtio_net_offloads(g, false), 0);
	assert_int_equal(virtio_net_offloads(1ULL << VIRTIO_NET_F_GUEST_TSO4, true), 0);
	assert_int_equal(virtio_net_offloads((1ULL << VIRTIO_NET_F_GUEST_CSUM) |
					     (1ULL << VIRTIO_NET_F_GUEST_ECN), true), TUN_F_CSUM);
	assert_int_equal(virtio_net_offloads((1ULL << VIRTIO_NET_F_CSUM) |
					     (1ULL << VIRTIO_NET_F_HOST_TSO6), false),
			 TUN_F_CSUM | TUN_F_TSO6);
	assert_int_equal(virtio_net_offloads(ALL_OFFLOADS, false), TUN_ALL);

	/* No offload acked: the tap stays at TUNSETOFFLOAD 0. */
	virtio_net_rx(f->n);
	assert_int_equal(f->n->tap_offloads, 0);
	/* Acked, then DRIVER_OK: set before the next frame is read. */
	redrive(f, f->n, ALL_OFFLOADS);
	assert_int_equal(virtio_net_rx(f->n), 0);
	assert_int_equal(f->n->tap_offloads, TUN_ALL);
	/* Checksums only. */
	redrive(f, f->n, (1ULL << VIRTIO_NET_F_GUEST_CSUM));
	virtio_net_rx(f->n);
	assert_int_equal(f->n->tap_offloads, TUN_F_CSUM);
	/* A driver that comes back acking none: back to 0, whole frames. */
	redrive(f, f->n, ALL_OFFLOADS);
	virtio_net_rx(f->n);
	tg_negotiate(&f->n->t, (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_MAC));
	virtio_net_rx(f->n);	/* not running yet: left as it was */
	assert_int_equal(f->n->tap_offloads, TUN_ALL);
	redrive(f, f->n, 0);
	virtio_net_rx(f->n);
	assert_int_equal(f->n->tap_offloads, 0);
}

static void test_virtio_net_tx_passes_checked_offload_header(void **state)
{
	struct fixture *f = *state;
	static uint8_t buf[12 + 4000];
	struct virtio_net_hdr_v1 h = tso4_hdr(), got;
	struct virtio_net_hdr_v1 csum = { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM |
						   VIRTIO_NET_HDR_F_DATA_VALID,
					  .csum_start = 34, .csum_offset = 6, .gso_size = 99,
					  .hdr_len = 7 };

	redrive(f, f->n, ALL_OFFLOADS);
	h.num_buffers = 77;
	post_tx_hdr(f, 0, &h, 3000, 4);
	h.gso_type = VIRTIO_NET_HDR_GSO_TCPV6 | VIRTIO_NET_HDR_GSO_ECN;
	post_tx_hdr(f, 2, &h, 3000, 5);
	post_tx_hdr(f, 4, &csum, 300, 6);
	assert_int_equal(virtio_net_tx(f->n), 3);
	assert_int_equal(f->n->tx_dropped, 0);
	/* The guest's header goes to the tap as it was, num_buffers aside. */
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 12 + 3000);
	memcpy(&got, buf, 12);
	h = tso4_hdr();
	assert_memory_equal(&got, &h, 12);
	assert_true(is_fill(buf + 12, 3000, 4));
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 12 + 3000);
	memcpy(&got, buf, 12);
	assert_int_equal(got.gso_type, VIRTIO_NET_HDR_GSO_TCPV6 | VIRTIO_NET_HDR_GSO_ECN);
	/* Checksum only: DATA_VALID (not the driver's to set) and the unused fields cleared. */
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 12 + 300);
	memcpy(&got, buf, 12);
	assert_int_equal(got.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
	assert_int_equal(got.csum_start, 34);
	assert_int_equal(got.csum_offset, 6);
	assert_int_equal(got.gso_size, 0);
	assert_int_equal(got.hdr_len, 0);
	assert_int_equal(f->n->tx_packets, 3);
	assert_int_equal(f->n->tx_bytes, 6300);
}

static void test_virtio_net_tx_drops_lying_offload_headers(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_hdr_v1 bad[9];
	uint8_t buf[128];
	unsigned int nr = 0;

	redrive(f, f->n, ALL_OFFLOADS);
	for (unsigned int i = 0; i < 9; i++)
		bad[i] = tso4_hdr();
	bad[nr++].hdr_len = 1001;			/* hdr_len beyond a 1000-byte frame */
	bad[nr++].gso_size = 0;				/* segmentation into segments of 0 */
	bad[nr].csum_start = 990;			/* 990 + 9 + 2 > 1000 */
	bad[nr++].csum_offset = 9;
	bad[nr++].csum_start = 0xffff;			/* no wrap around */
	bad[nr++].gso_type = VIRTIO_NET_HDR_GSO_UDP;	/* UFO: not offered */
	bad[nr++].gso_type = 0x42;			/* no such type */
	bad[nr++].flags = VIRTIO_NET_HDR_F_NEEDS_CSUM | 0x80;	/* unknown flag */
	bad[nr++].flags = 0;				/* segmentation with a full checksum */
	bad[nr] = (struct virtio_net_hdr_v1){ .gso_type = VIRTIO_NET_HDR_GSO_ECN };
	nr++;						/* ECN and no segmentation */
	/* Two descriptors a chain, 16 in the table: eight, then the ninth. */
	for (unsigned int i = 0; i < 8; i++)
		post_tx_hdr(f, (uint16_t)(2 * i), &bad[i], 1000, 1);
	assert_int_equal(virtio_net_tx(f->n), 8);
	post_tx_hdr(f, 0, &bad[8], 1000, 1);
	assert_int_equal(virtio_net_tx(f->n), 1);
	assert_int_equal(f->n->tx_dropped, nr);
	assert_int_equal(f->n->tx_packets, 0);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_false(tg_rd(&f->n->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);

	/* Checksums and TSO4 acked, not TSO6 nor ECN: those are lies too. */
	redrive(f, f->n, (1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_HOST_TSO4));
	bad[0] = tso4_hdr();
	bad[0].gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
	bad[1] = tso4_hdr();
	bad[1].gso_type |= VIRTIO_NET_HDR_GSO_ECN;
	bad[2] = tso4_hdr();
	post_tx_hdr(f, 0, &bad[0], 1000, 1);
	post_tx_hdr(f, 2, &bad[1], 1000, 1);
	post_tx_hdr(f, 4, &bad[2], 60, 2);		/* and one that is fine */
	assert_int_equal(virtio_net_tx(f->n), 3);
	assert_int_equal(f->n->tx_dropped, nr + 2);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 72);
	assert_true(is_fill(buf + 12, 60, 2));
}

static void test_virtio_net_rx_passes_offload_header_when_acked(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_hdr_v1 h = tso4_hdr(), got;
	struct virtio_net_hdr_v1 valid = { .flags = VIRTIO_NET_HDR_F_DATA_VALID };
	uint32_t id, len;

	redrive(f, f->n, ALL_OFFLOADS);
	post_rx(f, 0, 4096);
	post_rx(f, 1, 4096);
	h.num_buffers = 9;	/* the tap's garbage: ours to write */
	net_send_hdr(f->peer, &h, 3000, 8);
	net_send_hdr(f->peer, &valid, 100, 9);
	assert_int_equal(virtio_net_rx(f->n), 2);
	used_elem(f, VIRTIO_NET_RXQ, 0, &id, &len);
	assert_int_equal(len, 12 + 3000);
	memcpy(&got, gp(f, RXBUF), 12);
	h.num_buffers = 1;
	assert_memory_equal(&got, &h, 12);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF) + 12, 3000, 8));
	/* The tap checked this one's checksum, and the guest acked GUEST_CSUM: it may know. */
	memcpy(&got, gp(f, RXBUF + 0x1000), 12);
	assert_int_equal(got.flags, VIRTIO_NET_HDR_F_DATA_VALID);
	assert_int_equal(got.num_buffers, 1);
	assert_int_equal(f->n->rx_packets, 2);
}

static void test_virtio_net_rx_drops_lying_headers_from_tap(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_hdr_v1 h[6];
	uint32_t id, len;

	redrive(f, f->n, ALL_OFFLOADS & ~(1ULL << VIRTIO_NET_F_GUEST_TSO6));
	for (int i = 0; i < 6; i++)
		h[i] = tso4_hdr();
	h[0].hdr_len = 501;				/* beyond a 500-byte frame */
	h[1].gso_size = 0;
	h[2].csum_start = 490;				/* 490 + 16 + 2 > 500 */
	h[3].gso_type = VIRTIO_NET_HDR_GSO_UDP;
	h[4].gso_type = VIRTIO_NET_HDR_GSO_TCPV6;	/* the guest did not ack it */
	post_rx(f, 0, 2048);
	for (int i = 0; i < 5; i++)
		net_send_hdr(f->peer, &h[i], 500, (uint8_t)i);
	h[5].gso_size = 1448;	/* a true one, of one segment shorter than gso_size */
	net_send_hdr(f->peer, &h[5], 500, 5);
	/* The lies are dropped; the chain they were read into takes the true one. */
	assert_int_equal(virtio_net_rx(f->n), 1);
	assert_int_equal(f->n->rx_dropped, 5);
	used_elem(f, VIRTIO_NET_RXQ, 0, &id, &len);
	assert_int_equal(id, 0);
	assert_int_equal(len, 512);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF) + 12, 500, 5));
	assert_false(tg_rd(&f->n->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
}

static void test_virtio_net_rx_mergeable_frame_fills_several_chains(void **state)
{
	struct fixture *f = *state;
	static uint8_t all[12 + 5000];
	struct virtio_net_hdr_v1 h = tso4_hdr(), got;
	uint32_t id, len, want[4] = { 1526, 1526, 1526, 5012 - 3 * 1526 };
	size_t off = 0;

	redrive(f, f->n, ALL_OFFLOADS);
	for (uint16_t i = 0; i < 4; i++)
		post_rx(f, i, 1526);
	net_send_hdr(f->peer, &h, 5000, 3);
	assert_int_equal(virtio_net_rx(f->n), 4);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 4);
	for (uint16_t i = 0; i < 4; i++) {
		used_elem(f, VIRTIO_NET_RXQ, i, &id, &len);
		assert_int_equal(id, i);
		assert_int_equal(len, want[i]);
		memcpy(all + off, gp(f, RXBUF + 0x1000ULL * i), len);
		off += len;
	}
	memcpy(&got, all, 12);
	assert_int_equal(got.num_buffers, 4);
	assert_int_equal(got.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
	assert_true(is_fill(all + 12, 5000, 3));
	assert_int_equal(f->n->rx_packets, 1);
	assert_int_equal(f->n->rx_bytes, 5000);
	assert_true(tg_eventfd(f->n->t.irq_fd) >= 1);

	/*
	 * Two chains for a frame that needs four: the frame is held, not
	 * dropped, and nothing completed; a frame behind it waits in the tap.
	 */
	post_rx(f, 4, 1526);
	post_rx(f, 5, 1526);
	net_send_hdr(f->peer, &h, 5000, 5);
	net_send(f->peer, 60, 1, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 0);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 4);
	assert_int_equal(f->n->rx_dropped, 0);
	assert_int_equal(f->n->held_len, 12 + 5000);
	/* Two more chains: the held frame whole in chains 4..7, then the small one in 8. */
	post_rx(f, 6, 1526);
	post_rx(f, 7, 1526);
	post_rx(f, 8, 1526);
	assert_int_equal(virtio_net_rx(f->n), 5);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 9);
	off = 0;
	for (uint16_t i = 4; i < 8; i++) {
		used_elem(f, VIRTIO_NET_RXQ, i, &id, &len);
		assert_int_equal(id, i);
		assert_int_equal(len, want[i - 4]);
		memcpy(all + off, gp(f, RXBUF + 0x1000ULL * i), len);
		off += len;
	}
	memcpy(&got, all, 12);
	assert_int_equal(got.num_buffers, 4);
	assert_true(is_fill(all + 12, 5000, 5));
	assert_int_equal(f->n->held_len, 0);
	assert_int_equal(f->n->rx_dropped, 0);
	assert_int_equal(f->n->rx_packets, 3);
	/* Small frames still take one chain each, num_buffers 1. */
	used_elem(f, VIRTIO_NET_RXQ, 8, &id, &len);
	assert_int_equal(id, 8);
	assert_int_equal(len, 12 + 60);
	memcpy(&got, gp(f, RXBUF + 0x8000), 12);
	assert_int_equal(got.num_buffers, 1);
	assert_true(is_fill((uint8_t *)gp(f, RXBUF + 0x8000) + 12, 60, 1));
}

/*
 * EVENT_IDX on the receive side: a frame waiting in the tap with the ring
 * empty asks the driver for its next receive kick (avail_event at the next
 * index), so a driver that posts chains wakes the device; without that ask
 * the device would wait for a kick that never comes.
 */
static void test_virtio_net_rx_empty_ring_asks_for_the_next_kick(void **state)
{
	struct fixture *f = *state;
	uint8_t *ae_p;
	uint16_t ae;

	redrive(f, f->n, 1ULL << VIRTIO_RING_F_EVENT_IDX);
	ae_p = (uint8_t *)gp(f, USED(VIRTIO_NET_RXQ)) + 4 + 8 * QSIZE;
	memcpy(ae_p, &(uint16_t){ 0x7777 }, 2);
	post_rx(f, 0, 1526);
	net_send(f->peer, 60, 1, 0, 0);
	net_send(f->peer, 60, 2, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 1);
	memcpy(&ae, ae_p, 2);
	assert_int_equal(ae, 1);
	assert_int_equal(virtio_mmio_pending_arm(&f->n->t, VIRTIO_NET_RXQ), 0);
	post_rx(f, 1, 1526);
	assert_int_equal(virtio_net_rx(f->n), 1);
	/* The tap empty too: the thread's look before it sleeps asks. */
	assert_int_equal(virtio_mmio_pending_arm(&f->n->t, VIRTIO_NET_RXQ), 0);
	memcpy(&ae, ae_p, 2);
	assert_int_equal(ae, 2);
}

/*
 * The device driven again with EVENT_IDX acked, and the transmit ring's
 * avail_event marked 0x7777: where the device asks for the next kick.
 */
static uint8_t *tx_event_idx_marked(struct fixture *f)
{
	uint8_t *ae_p;

	redrive(f, f->n, 1ULL << VIRTIO_RING_F_EVENT_IDX);
	ae_p = (uint8_t *)gp(f, USED(VIRTIO_NET_TXQ)) + 4 + 8 * QSIZE;
	memcpy(ae_p, &(uint16_t){ 0x7777 }, 2);
	return ae_p;
}

static uint16_t avail_event(const uint8_t *ae_p)
{
	uint16_t ae;

	memcpy(&ae, ae_p, 2);
	return ae;
}

/*
 * A send without asking for the next kick: virtio_net_tx_unarmed() sends
 * what is there and leaves EVENT_IDX's avail_event where it was (a
 * sending guest queues more without an exit); virtio_net_tx(), the
 * thread's look that finds nothing new, sets it to the next index.
 */
static void test_virtio_net_tx_unarmed_leaves_the_next_kick_unasked(void **state)
{
	struct fixture *f = *state;
	uint8_t *ae_p, buf[2048];

	ae_p = tx_event_idx_marked(f);
	post_tx(f, 0, 100, 1);
	post_tx(f, 2, 200, 2);
	assert_int_equal(virtio_net_tx_unarmed(f->n), 2);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 12 + 100);
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 12 + 200);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 2);
	assert_int_equal(virtio_net_tx_unarmed(f->n), 0);
	assert_int_equal(avail_event(ae_p), 0x7777);
	assert_int_equal(virtio_net_tx(f->n), 0);
	assert_int_equal(avail_event(ae_p), 2);
}

/*
 * A transmit kick from a guest that mostly receives (a TCP receiver
 * sending its ACKs) asks for the next kick at once; from a guest that
 * mostly sends it does not, and the thread looks again instead.
 */
static void test_virtio_net_tx_kick_asks_at_once_for_a_receiver(void **state)
{
	struct fixture *f = *state;
	uint8_t *ae_p, buf[2048];

	ae_p = tx_event_idx_marked(f);
	/* Sending 1000 bytes, nothing received: send, look again later. */
	post_tx(f, 0, 1000, 1);
	assert_true(virtio_net_tx_kick(f->n));
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 12 + 1000);
	assert_int_equal(avail_event(ae_p), 0x7777);
	/* 1400 bytes received, 60 sent since that kick: ask at once. */
	post_rx(f, 0, 1526);
	net_send(f->peer, 1400, 3, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 1);
	post_tx(f, 2, 60, 2);
	assert_false(virtio_net_tx_kick(f->n));
	assert_int_equal(recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT), 12 + 60);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 2);
	assert_int_equal(avail_event(ae_p), 2);
	/* Sending again, nothing received since: back to the look. */
	memcpy(ae_p, &(uint16_t){ 0x7777 }, 2);
	post_tx(f, 4, 500, 4);
	assert_true(virtio_net_tx_kick(f->n));
	assert_int_equal(avail_event(ae_p), 0x7777);
}

/*
 * A frame larger than the whole receive ring (16 chains of 1526 bytes)
 * can never be delivered: it is dropped, every chain completed empty, and
 * the next frame goes through; holding it would stop receiving for good.
 */
static void test_virtio_net_rx_frame_larger_than_ring_dropped(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_hdr_v1 h = tso4_hdr(), got;
	uint32_t id, len;

	redrive(f, f->n, ALL_OFFLOADS);
	for (uint16_t i = 0; i < QSIZE; i++)
		post_rx(f, i, 1526);
	net_send_hdr(f->peer, &h, 30000, 7);
	assert_int_equal(virtio_net_rx(f->n), QSIZE);
	for (uint16_t i = 0; i < QSIZE; i++) {
		used_elem(f, VIRTIO_NET_RXQ, i, &id, &len);
		assert_int_equal(id, i);
		assert_int_equal(len, 0);
	}
	assert_int_equal(f->n->rx_dropped, 1);
	assert_int_equal(f->n->held_len, 0);
	post_rx(f, 0, 1526);
	net_send(f->peer, 60, 2, 0, 0);
	assert_int_equal(virtio_net_rx(f->n), 1);
	memcpy(&got, gp(f, RXBUF), 12);
	assert_int_equal(got.num_buffers, 1);
	assert_int_equal(f->n->rx_packets, 1);
}

/* A live upgrade (or a kexec's new tap): the restored features set the tap's offloads. */
static void test_virtio_net_state_restore_sets_offloads_again(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_state s;
	struct virtio_net_spec sp = spec();
	struct virtio_net_hdr_v1 h = tso4_hdr(), got;

	redrive(f, f->n, ALL_OFFLOADS);
	virtio_net_rx(f->n);
	assert_int_equal(f->n->tap_offloads, TUN_ALL);
	virtio_net_quiesce(f->n);
	assert_int_equal(virtio_net_get_state(f->n, &s), 0);
	assert_int_equal(s.t.driver_features & ALL_OFFLOADS, ALL_OFFLOADS);
	assert_int_equal(virtio_net_state_validate(&s, f->err, sizeof(f->err)), 0);

	assert_int_equal(virtio_net_init_fd(&f->dev[1], dup(f->n->fd), &sp, &f->gm, f->err,
					    sizeof(f->err)), 0);
	assert_int_equal(f->dev[1].tap_offloads, 0);	/* as tap_open() leaves a new tap */
	assert_int_equal(virtio_net_set_state(&f->dev[1], &s, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->dev[1].tap_offloads, TUN_ALL);
	virtio_net_close(f->n);
	post_rx(f, 0, 4096);
	net_send_hdr(f->peer, &h, 2000, 1);
	assert_int_equal(virtio_net_rx(&f->dev[1]), 1);
	memcpy(&got, gp(f, RXBUF), 12);
	assert_int_equal(got.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
}

/* A state saved before offloads were offered (no offload acked) restores, without offloads. */
static void test_virtio_net_state_without_offloads_restores(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_state s;
	struct virtio_net_spec sp = spec();

	virtio_net_quiesce(f->n);
	assert_int_equal(virtio_net_get_state(f->n, &s), 0);
	/* What the device offered then. */
	s.t.device_features = (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_MAC) |
			      (1ULL << VIRTIO_NET_F_STATUS);
	assert_int_equal(virtio_net_state_validate(&s, f->err, sizeof(f->err)), 0);
	assert_int_equal(virtio_net_init_fd(&f->dev[1], dup(f->n->fd), &sp, &f->gm, f->err,
					    sizeof(f->err)), 0);
	f->dev[1].tap_offloads = VIRTIO_NET_OFFLOADS_UNKNOWN;	/* as an adopted fd */
	assert_int_equal(virtio_net_set_state(&f->dev[1], &s, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->dev[1].tap_offloads, 0);
	/* It goes on offering what it offered, so a guest that resets sees the same device. */
	assert_int_equal(f->dev[1].t.device_features, s.t.device_features);
}

/*
 * offloads=off: the device offers no checksum or segmentation offload
 * (MRG_RXBUF stays); a driver that asks for one anyway does not get
 * FEATURES_OK, and the reduced offer crosses a save and restore into a
 * device made with the default offer.
 */
static void test_virtio_net_offloads_off_offers_none(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_spec sp = spec();
	struct virtio_net_state s;
	struct virtio_net *n = &f->dev[1];
	int sv[2];

	sp.no_offloads = true;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	f->peer2 = sv[1];
	assert_int_equal(virtio_net_init_fd(n, sv[0], &sp, &f->gm, f->err, sizeof(f->err)), 0);
	assert_int_equal(n->t.device_features & VIRTIO_NET_OFFLOAD_FEATURES, 0);
	assert_true(n->t.device_features >> VIRTIO_NET_F_MRG_RXBUF & 1);
	tg_negotiate(&n->t, (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_CSUM));
	assert_false(tg_rd(&n->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);

	virtio_net_close(n);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	close(f->peer2);
	f->peer2 = sv[1];
	assert_int_equal(virtio_net_init_fd(n, sv[0], &sp, &f->gm, f->err, sizeof(f->err)), 0);
	drive(n);
	virtio_net_quiesce(n);
	assert_int_equal(virtio_net_get_state(n, &s), 0);
	virtio_net_close(n);
	sp.no_offloads = false;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	close(f->peer2);
	f->peer2 = sv[1];
	assert_int_equal(virtio_net_init_fd(n, sv[0], &sp, &f->gm, f->err, sizeof(f->err)), 0);
	assert_int_not_equal(n->t.device_features & VIRTIO_NET_OFFLOAD_FEATURES, 0);
	assert_int_equal(virtio_net_set_state(n, &s, f->err, sizeof(f->err)), 0);
	assert_int_equal(n->t.device_features & VIRTIO_NET_OFFLOAD_FEATURES, 0);
}

/*
 * The committed state of a NIC saved before the offloads were offered
 * (tests/state-corpus/good/two_vcpus_virtio_net.dtb: VERSION_1, MAC and
 * STATUS offered and acked) restores into today's device, which offers
 * more, and leaves the tap without offloads. Run from the top of the tree.
 */
static void test_virtio_net_state_from_the_corpus_restores(void **state)
{
	struct fixture *f = *state;
	struct virtio_net_spec sp = { .tap = "vm1-net0", .bridge = "br0", .has_mac = true };
	struct guestmem rings = { .nr = 1 };
	struct state_vm vs;
	size_t size;
	void *blob;
	FILE *fp = fopen("tests/state-corpus/good/two_vcpus_virtio_net.dtb", "rb");
	int sv[2];

	assert_non_null(fp);
	blob = malloc(1 << 20);
	assert_non_null(blob);
	size = fread(blob, 1, 1 << 20, fp);
	fclose(fp);
	assert_int_equal(state_fdt_load(blob, size, 0, &vs, f->err, sizeof(f->err)), 0);
	free(blob);
	assert_int_equal(state_vm_count(&vs, &virtio_net_type), 1);
	assert_int_equal(NET(&vs, 0)->t.driver_features & ALL_OFFLOADS, 0);
	/* Guest RAM where the saved rings are. */
	rings.r[0] = (struct guestmem_region){ .gpa = 0x7e000000, .size = 0x10000, .fd = -1 };
	rings.r[0].hva = calloc(1, 0x10000);
	assert_non_null(rings.r[0].hva);
	memcpy(sp.mac, NET(&vs, 0)->mac, 6);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	f->peer2 = sv[1];
	assert_int_equal(virtio_net_init_fd(&f->dev[1], sv[0], &sp, &rings, f->err,
					    sizeof(f->err)), 0);
	f->dev[1].tap_offloads = VIRTIO_NET_OFFLOADS_UNKNOWN;	/* as an adopted fd */
	assert_int_equal(virtio_net_set_state(&f->dev[1], NET(&vs, 0), f->err, sizeof(f->err)), 0);
	assert_int_equal(f->dev[1].tap_offloads, 0);
	assert_int_equal(f->dev[1].t.queues[0].last_avail, 0x1234);
	virtio_net_close(&f->dev[1]);
	state_vm_free(&vs);
	free(rings.r[0].hva);
}

static void test_virtio_net_mac_parse(void **state)
{
	uint8_t m[6], g[6];
	char s[18];

	(void)state;
	assert_true(virtio_net_mac_parse("52:54:00:AB:cd:0f", m));
	virtio_net_mac_format(m, s);
	assert_string_equal(s, "52:54:00:ab:cd:0f");
	assert_false(virtio_net_mac_parse("01:00:5e:00:00:01", m));	/* multicast */
	assert_false(virtio_net_mac_parse("00:00:00:00:00:00", m));
	assert_false(virtio_net_mac_parse("52:54:00:ab:cd", m));
	assert_false(virtio_net_mac_parse("52-54-00-ab-cd-0f", m));
	assert_false(virtio_net_mac_parse("52:54:00:ab:cd:0g", m));
	assert_false(virtio_net_mac_parse("52:54:00:ab:cd:0f0", m));
	assert_int_equal(virtio_net_mac_generate(g), 0);
	assert_int_equal(g[0] & 3, 2);	/* unicast, locally administered */
}

static void test_tap_name_valid(void **state)
{
	(void)state;
	assert_true(tap_name_valid("tap0"));
	assert_true(tap_name_valid("vm1.net-0_a"));
	assert_true(tap_name_valid("fifteen-chars-x"));
	assert_false(tap_name_valid("sixteen-chars-xy"));
	assert_false(tap_name_valid(""));
	assert_false(tap_name_valid("tap%d"));
	assert_false(tap_name_valid("a/b"));
	assert_false(tap_name_valid(".."));
}

static void test_tap_set_offload_names_the_tap_and_flags(void **state)
{
	char err[256];
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	/* Flags outside what virtio-net may ask for: refused before any ioctl. */
	assert_int_equal(tap_set_offload(sv[0], "t0", TUN_F_CSUM | TUN_F_UFO, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "tap t0: TUNSETOFFLOAD 0x11: unknown flags"));
	/* Not a tap: the kernel's refusal, with the tap's name and the flags. */
	assert_true(tap_set_offload(sv[0], "t0", TUN_F_CSUM | TUN_F_TSO4, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "tap t0: TUNSETOFFLOAD 0x3: "));
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_virtio_net_offers_mac_status_and_two_queues, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_tx_sends_frame_with_zero_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_tx_header_split_across_buffers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_tx_drops_hostile_chains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_tx_largest_frame_goes_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_delivers_frame_with_num_buffers_1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_frame_spans_buffers_of_one_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_too_small_chain_drops_frame_not_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_chain_with_readable_buffer_drops_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_waits_in_fd_when_no_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_offload_frame_from_tap_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_loop_is_device_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_stops_on_a_tap_that_is_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_reads_at_most_a_budget_per_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_thread_moves_frames_and_pause_holds_them, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_state_moves_to_new_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_state_refuses_other_mac_or_tap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_offloads_follow_acked_features, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_tx_passes_checked_offload_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_tx_drops_lying_offload_headers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_passes_offload_header_when_acked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_drops_lying_headers_from_tap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_empty_ring_asks_for_the_next_kick,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_tx_kick_asks_at_once_for_a_receiver,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_tx_unarmed_leaves_the_next_kick_unasked,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_frame_larger_than_ring_dropped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_rx_mergeable_frame_fills_several_chains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_state_restore_sets_offloads_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_state_without_offloads_restores, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_offloads_off_offers_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_net_state_from_the_corpus_restores, setup, teardown),
		cmocka_unit_test(test_virtio_net_mac_parse),
		cmocka_unit_test(test_tap_name_valid),
		cmocka_unit_test(test_tap_set_offload_names_the_tap_and_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
