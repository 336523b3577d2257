/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-net (virtio 1.x 5.1) on a tap interface, over the virtio-mmio
 * transport (vmm/virtio/). Queue 0 receives, queue 1 transmits; no
 * control queue, no multiqueue. Offered: VIRTIO_NET_F_MAC (the MAC of
 * --net, or one generated at the first start and then kept in the state),
 * VIRTIO_NET_F_STATUS (link always up), the offloads the tap can do
 * (VIRTIO_NET_OFFLOAD_FEATURES: partial checksums and TCP
 * segmentation with ECN, each way) and VIRTIO_NET_F_MRG_RXBUF (a received
 * frame may fill several receive chains). Each frame has the 12-byte 1.x
 * header in front, which the tap speaks too: a header is copied, checked
 * against the features the driver acked, and passed on; one that asks for
 * an offload not acked, or whose offsets lie outside its frame, drops its
 * frame. The tap's TUNSETOFFLOAD follows the acked guest features
 * (virtio_net_offloads()): nothing acked is TUNSETOFFLOAD 0, whole frames.
 *
 * Lifecycle: virtio_net_open() opens the tap (tap.h), or
 * virtio_net_adopt() takes the fd passed on a live upgrade (checked,
 * never reopened); virtio_net_start() starts the device's thread, the
 * only one that reads or writes the tap or the rings (never a vCPU);
 * virtio_net_quiesce() at pause: every frame the guest made available
 * for transmission is written to the tap and completed, and the thread
 * stops moving frames (received frames wait in the tap's queue) until
 * virtio_net_resume(); virtio_net_close() stops the thread and closes
 * the tap.
 *
 * A received frame is read from the tap with one readv straight into the
 * buffers of the receive chain at the head of the ring, with a bounce
 * buffer behind them for what does not fit; with MRG_RXBUF that rest is
 * copied into as many further chains as it needs (num_buffers in the
 * header), otherwise the frame is dropped. When the guest has not posted
 * chains enough for it yet, the frame is held (held[]) and its chains
 * given back until the next receive kick; only a frame larger than the
 * whole ring is dropped. The chains of a frame are completed in the same
 * step: at any pause a frame is in the used ring, held, or still in the
 * tap, never in between, so none is delivered twice.
 *
 * Unhappy paths, none of which stops the VM: a receive chain too small
 * for the frame (without MRG_RXBUF, or a ring too small for it), or
 * with device-readable buffers, is completed with length 0 and the frame
 * dropped (rx_dropped; Linux counts a length error and reposts the
 * buffer); a frame from the tap whose header the guest may not see (an
 * offload it did not ack, left from before a feature change) is dropped
 * and its chain takes the next frame; a transmit chain shorter than the
 * header, longer than the header and VIRTIO_NET_FRAME_MAX, with
 * device-writable buffers or with a header that asks for an offload not
 * acked, names an unknown gso_type, has gso_size 0 with segmentation, or
 * hdr_len or the checksum field outside the frame, is completed and not
 * sent (tx_dropped); a tap write that fails drops that frame
 * (tx_dropped). A read of the tap that fails for
 * good (the interface was deleted under us) is said once on stderr and
 * the NIC stops receiving, rather than spin on an fd that stays
 * readable. Hostile rings are the transport's device error (NEEDS_RESET).
 */
#ifndef KVMLU_VMM_DEVICES_VIRTIO_NET_H
#define KVMLU_VMM_DEVICES_VIRTIO_NET_H

#include <linux/virtio_net.h>
#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/device.h"
#include "vmm/device_config.h"
#include "vmm/devices/device_thread.h"
#include "vmm/devices/tap.h"
#include "vmm/virtio/virtio_mmio.h"

#define VIRTIO_ID_NET		1
#define VIRTIO_NET_RXQ		0
#define VIRTIO_NET_TXQ		1
#define VIRTIO_NET_HDR_LEN	TAP_VNET_HDR_LEN
/*
 * Largest frame: a 64 KiB MTU and its Ethernet and VLAN headers; also
 * more than a TCP segmentation frame holds (64 KiB with its headers).
 */
#define VIRTIO_NET_FRAME_MAX	(65535 + 18)
/* Offered and acked, each way: checksum, TCP segmentation v4/v6, with ECN. */
#define VIRTIO_NET_OFFLOAD_FEATURES                                                     \
	((1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_GUEST_CSUM) |              \
	 (1ULL << VIRTIO_NET_F_GUEST_TSO4) | (1ULL << VIRTIO_NET_F_GUEST_TSO6) |        \
	 (1ULL << VIRTIO_NET_F_GUEST_ECN) | (1ULL << VIRTIO_NET_F_HOST_TSO4) |          \
	 (1ULL << VIRTIO_NET_F_HOST_TSO6) | (1ULL << VIRTIO_NET_F_HOST_ECN))
/* tap_offloads before the first TUNSETOFFLOAD on an adopted fd: anything. */
#define VIRTIO_NET_OFFLOADS_UNKNOWN	0xffffffffu
/* Completions between two interrupts at most, as virtio-blk. */
#define VIRTIO_NET_IRQ_BATCH	16
/* Frames one virtio_net_rx() call reads at most before the thread looks at tx again. */
#define VIRTIO_NET_RX_BUDGET	64

struct virtio_net {
	struct virtio_mmio t;
	char name[32];		/* "virtio-net <tap>", for messages */
	int fd;			/* the tap (in unit tests: a datagram socket) */
	struct virtio_net_spec spec;

	struct vm_device dev;	/* what the VM holds (virtio_net_device.c) */

	/* The device thread and its pause handshake (device_thread.h, virtio_net_io.c). */
	struct device_thread io;

	bool tap_failed;	/* a read of the tap failed for good: no more receiving */
	bool is_tap;		/* fd is a tap (not a unit test's socket): ioctls apply */
	/*
	 * TUN_F_* the tap was last set to (VIRTIO_NET_OFFLOADS_UNKNOWN: not
	 * yet by us); on a socket, what would have been set. Device thread,
	 * or the restore before it starts.
	 */
	unsigned int tap_offloads;
	bool offload_err_said;
	/* device thread only */
	struct virtq_chain chain;	/* the chain a frame is read into */
	struct virtq_chain more;	/* MRG_RXBUF: the frame's further chains, one at a time */
	uint16_t done_head[VIRTQ_MAX_SIZE];	/* a frame's chains, to complete in order */
	uint32_t done_len[VIRTQ_MAX_SIZE];
	/* rx bounce: what does not fit the first chain; one byte more finds overlong frames */
	uint8_t frame[VIRTIO_NET_HDR_LEN + VIRTIO_NET_FRAME_MAX + 1];
	/*
	 * MRG_RXBUF: a frame read before the guest had posted chains enough
	 * for it, delivered before the tap is read again (held_len 0: none).
	 * It stays across a pause; an upgrade or a kexec loses it, as a
	 * frame still in the tap is lost across a kexec.
	 */
	uint8_t held[VIRTIO_NET_HDR_LEN + VIRTIO_NET_FRAME_MAX];
	size_t held_len;
	uint64_t kick_rx_bytes, kick_tx_bytes;	/* the counters at the last transmit kick */
	/* atomic: `status` reads them */
	uint64_t rx_packets, rx_bytes, rx_dropped, tx_packets, tx_bytes, tx_dropped;
};

/*
 * Open spec->tap (tap_open(): created if missing, up, on spec->bridge)
 * and set the device up on mem. spec->has_mac must be set.
 */
int virtio_net_open(struct virtio_net *n, const struct virtio_net_spec *spec,
		    const struct guestmem *mem, char *err, size_t errlen);

/* Live upgrade: the old process's tap fd (checked with tap_check(); owned by n on success). */
int virtio_net_adopt(struct virtio_net *n, int fd, const struct virtio_net_spec *spec,
		     const struct guestmem *mem, char *err, size_t errlen);

/* The device on any fd that keeps datagram boundaries (unit tests: a socketpair). */
int virtio_net_init_fd(struct virtio_net *n, int fd, const struct virtio_net_spec *spec,
		       const struct guestmem *mem, char *err, size_t errlen);

int virtio_net_start(struct virtio_net *n, char *err, size_t errlen);
/* Every available tx chain sent and completed; no frame moves until virtio_net_resume(). */
void virtio_net_quiesce(struct virtio_net *n);
void virtio_net_resume(struct virtio_net *n);

/*
 * One step each, in the caller's thread (the device thread, tests):
 * virtio_net_tx() sends every available tx chain; virtio_net_rx() moves
 * frames from the fd into rx chains until either runs out, or it has read
 * VIRTIO_NET_RX_BUDGET frames. Both return how many chains they completed.
 */
unsigned int virtio_net_tx(struct virtio_net *n);
/*
 * virtio_net_tx() without asking the driver for its next kick (EVENT_IDX's
 * avail_event stays where it was): a sending guest queues its next frames
 * without an exit while the device thread looks again after
 * VIRTIO_NET_TX_POLL_US, and only a look that finds nothing new asks.
 */
unsigned int virtio_net_tx_unarmed(struct virtio_net *n);
#define VIRTIO_NET_TX_POLL_US	50
/*
 * The device thread's look at the transmit ring: virtio_net_tx_unarmed(),
 * or virtio_net_tx() when there was nothing to send. Returns whether to
 * look again after VIRTIO_NET_TX_POLL_US.
 */
bool virtio_net_tx_look(struct virtio_net *n);
/*
 * A transmit kick. A guest that received more bytes than it sent since
 * the last kick (a TCP receiver, whose frames are its ACKs) gets
 * virtio_net_tx(): its next frame kicks at once, as an ACK that waits for
 * the look slows the sender down. Otherwise virtio_net_tx_look(). Returns
 * whether the device thread should look again after VIRTIO_NET_TX_POLL_US.
 */
bool virtio_net_tx_kick(struct virtio_net *n);
unsigned int virtio_net_rx(struct virtio_net *n);
/* The features the driver acked, if it is running (DRIVER_OK); else false. */
bool virtio_net_acked(struct virtio_net *n, uint64_t *features);

/*
 * TUN_F_* flags for the features a driver acked: rx the ones the tap may
 * hand us (GUEST_*), else the ones a transmitted header may ask for
 * (CSUM, HOST_*). Each needs its checksum feature, ECN a TSO.
 */
unsigned int virtio_net_offloads(uint64_t features, bool rx);

/*
 * TUNSETOFFLOAD from the features the driver acked, if it is running and
 * they changed. The device thread does it before each receive step, and
 * virtio_net_set_state() at its end (the tap may be new, or the old
 * process's).
 */
void virtio_net_sync_offloads(struct virtio_net *n);

void virtio_net_close(struct virtio_net *n);

#endif /* KVMLU_VMM_DEVICES_VIRTIO_NET_H */
