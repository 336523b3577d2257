// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: virtio-net's receive and transmit paths against a
 * hostile guest and hostile frames. The input is both queues' setup
 * (size and ring addresses), the frame's length, which of the offload
 * and MRG_RXBUF features the driver acked (a bit each: the feature bits
 * below 16), a frame as the tap would hand it over (12-byte header
 * first, its offsets unchecked), then the guest RAM bytes that hold the
 * rings, buffers and transmit headers. Guest RAM is two exactly-sized heap regions with a hole
 * between them, so ASan reports any access outside guest RAM. The device
 * runs on a datagram socketpair in place of the tap: every transmit
 * chain is sent or dropped and completed, the frame (given twice) is
 * delivered, dropped or left in the fd; nothing may crash, and every
 * completed chain must be one the guest made available.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/devices/virtio_net.h"

#define LOW_SIZE	(64u << 10)
#define HIGH_GPA	0x100000000ULL
#define HIGH_SIZE	(4u << 10)
#define PARAM_BYTES	20	/* 8 u16 of queue setup, the frame's length, the features */
#define FRAME_MAX	4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct virtio_net n;

static void queue(struct virtq *q, const uint16_t *v, bool high)
{
	q->size = v[0];
	q->desc_gpa = (uint64_t)v[1] * 2 + (high ? HIGH_GPA : 0);
	q->avail_gpa = (uint64_t)v[2] * 2;
	q->used_gpa = (uint64_t)v[3] * 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_net_spec spec = { .tap = "fuzz0", .has_mac = true, .mac = { 2, 0, 0, 0, 0, 1 } };
	static struct guestmem gm;
	uint16_t v[10], used_before[2];
	char err[256];
	uint8_t sink[256];
	size_t flen, m;
	int sv[2];

	if (size < PARAM_BYTES)
		return 0;
	memcpy(v, data, sizeof(v));
	data += PARAM_BYTES;
	size -= PARAM_BYTES;
	flen = v[8] % FRAME_MAX;
	if (flen > size)
		flen = size;
	gm.nr = 2;
	gm.r[0] = (struct guestmem_region){ .gpa = 0, .size = LOW_SIZE, .fd = -1 };
	gm.r[1] = (struct guestmem_region){ .gpa = HIGH_GPA, .size = HIGH_SIZE, .fd = -1 };
	gm.r[0].hva = calloc(1, LOW_SIZE);
	gm.r[1].hva = calloc(1, HIGH_SIZE);
	if (!gm.r[0].hva || !gm.r[1].hva)
		abort();
	m = size - flen < LOW_SIZE ? size - flen : LOW_SIZE;
	memcpy(gm.r[0].hva, data + flen, m);
	if (size - flen > m)
		memcpy(gm.r[1].hva, data + flen + m,
		       size - flen - m < HIGH_SIZE ? size - flen - m : HIGH_SIZE);

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) ||
	    fcntl(sv[0], F_SETFL, O_NONBLOCK) || fcntl(sv[1], F_SETFL, O_NONBLOCK))
		abort();
	if (virtio_net_init_fd(&n, sv[0], &spec, &gm, err, sizeof(err)))
		abort();
	/* What a driver leaves after negotiation; each queue enabled if its setup fits RAM. */
	n.t.driver_features = n.t.device_features &
			      ((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_STATUS) | v[9]);
	n.t.status = 15;
	queue(&n.t.queues[VIRTIO_NET_RXQ], v, false);
	queue(&n.t.queues[VIRTIO_NET_TXQ], v + 4, v[7] & 1);
	virtq_enable(&n.t.queues[VIRTIO_NET_RXQ], &gm, err, sizeof(err));
	virtq_enable(&n.t.queues[VIRTIO_NET_TXQ], &gm, err, sizeof(err));
	used_before[0] = n.t.queues[0].used_idx;
	used_before[1] = n.t.queues[1].used_idx;

	virtio_net_tx(&n);
	while (recv(sv[1], sink, sizeof(sink), MSG_DONTWAIT | MSG_TRUNC) >= 0)
		;
	for (int i = 0; i < 2; i++)
		if (send(sv[1], data, flen, MSG_DONTWAIT) < 0)
			break;
	virtio_net_rx(&n);
	/* Never more completions than chains taken, and nothing left in flight. */
	for (int q = 0; q < 2; q++)
		if ((uint16_t)(n.t.queues[q].used_idx - used_before[q]) >
		    (uint16_t)(n.t.queues[q].last_avail - used_before[q]))
			abort();
	if (n.t.inflight)
		abort();
	/* The tap is told only what the driver acked. */
	if (n.tap_offloads != virtio_net_offloads(n.t.driver_features, true))
		abort();
	virtio_net_close(&n);	/* closes sv[0] */
	close(sv[1]);
	free(gm.r[0].hva);
	free(gm.r[1].hva);
	return 0;
}
