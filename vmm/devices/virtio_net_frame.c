// SPDX-License-Identifier: GPL-2.0
/*
 * Copies between a virtio-net chain and a buffer, and the vnet header's
 * check (see virtio_net_frame.h).
 */
#include <linux/if_tun.h>
#include <string.h>

#include "vmm/devices/virtio_net_frame.h"

bool virtio_net_chain_move(const struct virtq_chain *c, unsigned int from, unsigned int to,
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

const char *virtio_net_hdr_check(struct virtio_net_hdr_v1 *h, size_t len, unsigned int allow,
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
