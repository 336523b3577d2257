/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What virtio-net's transmit half (virtio_net.c) and receive half
 * (virtio_net_rx.c) share: copies between a chain and a buffer, and the
 * vnet header's check against the offloads acked (TUN_F_* flags).
 */
#ifndef KVMLU_VMM_DEVICES_VIRTIO_NET_FRAME_H
#define KVMLU_VMM_DEVICES_VIRTIO_NET_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_net.h>

#include "vmm/virtio/virtq.h"

/*
 * Move len bytes between buf and c's buffers [from, to), starting at
 * offset off of them: into the chain when in, else out of it. false if
 * the buffers end first.
 */
bool virtio_net_chain_move(const struct virtq_chain *c, unsigned int from, unsigned int to,
			   size_t off, void *buf, size_t len, bool in);

/*
 * Check header h of a frame of len bytes (after the header) against the
 * TUN_F_* offloads allowed that way, and clean it: NULL if it may cross
 * (h now holds what to pass on), else why not. rx: from the tap to the
 * guest, where DATA_VALID (the tap checked the checksum) is kept when
 * the guest acked checksums and cleared otherwise; tx: the driver must
 * not set it (5.1.6.2.1), and it means nothing to the tap: cleared.
 */
const char *virtio_net_hdr_check(struct virtio_net_hdr_v1 *h, size_t len, unsigned int allow,
				 bool rx);

#endif
