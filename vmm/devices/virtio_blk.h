/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-blk (virtio 1.x 5.2) on a raw image file or a block device,
 * over the virtio-mmio transport (vmm/virtio/). One request queue.
 * Offered: VIRTIO_BLK_F_SEG_MAX, VIRTIO_BLK_F_FLUSH (fdatasync),
 * VIRTIO_BLK_F_RO for --disk ...,readonly, and the ring features
 * VIRTIO_RING_F_EVENT_IDX and VIRTIO_RING_F_INDIRECT_DESC (virtq.h);
 * GET_ID answers the disk's id. Not offered: discard, write zeroes.
 *
 * Lifecycle: virtio_blk_open() opens the disk (or virtio_blk_adopt()
 * takes an fd received on a live upgrade), records what identifies it
 * (path, st_dev/st_ino, size) and sets the transport up;
 * virtio_blk_start() starts the I/O thread and VIRTIO_BLK_WORKERS
 * workers, the only threads that do disk I/O (never a vCPU): the I/O
 * thread takes requests off the ring into request slots and hands them
 * to the workers, which complete them in any order, each into the used
 * ring as it finishes; the I/O thread raises one interrupt per batch of
 * completions (as EVENT_IDX allows). virtio_blk_quiesce() returns once
 * every request the guest made available has completed (a paused VM's
 * state is captured only after it); virtio_blk_close() stops the threads
 * and closes the disk.
 *
 * Unhappy paths: a missing or unopenable disk is refused at open with
 * the path and errno; a write to a read-only disk, or a sector outside
 * it, completes with VIRTIO_BLK_S_IOERR; an unknown request type with
 * VIRTIO_BLK_S_UNSUPP; a chain with no room for the header or status is
 * a device error (NEEDS_RESET).
 */
#ifndef KVMLU_VMM_DEVICES_VIRTIO_BLK_H
#define KVMLU_VMM_DEVICES_VIRTIO_BLK_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vmm/device.h"
#include "vmm/device_config.h"
#include "vmm/devices/device_thread.h"
#include "vmm/virtio/virtio_mmio.h"

#define VIRTIO_ID_BLOCK_DEVICE	2
#define VIRTIO_BLK_SECTOR	512
/*
 * Data segments of one request: a chain holds at most VIRTQ_MAX_SIZE
 * buffers (virtq.h; through an indirect table too), of which header and
 * status take two (when they have buffers of their own, as Linux does).
 */
#define VIRTIO_BLK_SEG_MAX	(VIRTQ_MAX_SIZE - 2)
/* Requests in flight at most: a full ring of the largest size we offer. */
#define VIRTIO_BLK_INFLIGHT	VIRTQ_MAX_SIZE
/* Threads doing the I/O of requests in flight, each one request at a time. */
#define VIRTIO_BLK_WORKERS	8
/* Largest data length of one request; Linux sends at most a few MiB. */
#define VIRTIO_BLK_REQ_MAX	(1ULL << 30)

/* One request in flight: its chain, from the ring until the used ring. */
struct virtio_blk_req {
	struct virtq_chain chain;
	struct virtio_blk_req *next;	/* free list or work queue, under the device lock */
};

struct virtio_blk {
	struct virtio_mmio t;
	char name[32];			/* "virtio-blk <id or index>", for messages */
	int fd;
	bool readonly;
	char id[VIRTIO_BLK_ID_MAX + 1];
	struct virtio_blk_identity ident;
	uint64_t capacity;		/* 512-byte sectors */

	struct vm_device dev;		/* what the VM holds (virtio_blk_device.c) */

	/* The I/O thread and its quiesce handshake (device_thread.h). */
	struct device_thread io;
	pthread_mutex_t lock;		/* the request slots and lists below */
	pthread_cond_t cond;		/* nr_inflight reached 0 */

	/* Requests in flight and the workers doing their I/O (virtio_blk_io.c). */
	struct virtio_blk_req *reqs;	/* VIRTIO_BLK_INFLIGHT slots */
	struct virtio_blk_req *free_reqs;	/* under lock, as the three below */
	struct virtio_blk_req *work_head, *work_tail;	/* taken, no worker yet */
	unsigned int nr_inflight;	/* taken from the ring, not yet in the used ring */
	pthread_cond_t work;		/* work queued, or workers_stop */
	bool workers_stop;
	pthread_t workers[VIRTIO_BLK_WORKERS];
	unsigned int nr_workers;
	int done_fd;			/* eventfd: a worker completed requests */

	uint64_t requests, io_errors;	/* atomic: `status` reads them */
};

/*
 * Open spec->path (O_RDWR, or O_RDONLY with readonly) and set the device
 * up on mem; index names it when there is no id. Takes an exclusive
 * (read-only: shared) flock so two VMs cannot write one disk.
 */
int virtio_blk_open(struct virtio_blk *b, const struct virtio_blk_spec *spec,
		    unsigned int index, const struct guestmem *mem, char *err, size_t errlen);

/*
 * Live upgrade: the same, on an fd received from the old process (owned
 * by b on success), whose identity must equal ident (the old process's
 * record), so a wrong fd is refused rather than written.
 */
int virtio_blk_adopt(struct virtio_blk *b, int fd, const struct virtio_blk_spec *spec,
		     const struct virtio_blk_identity *ident, unsigned int index,
		     const struct guestmem *mem, char *err, size_t errlen);

/*
 * The disk as it is now, read from its open fd (status, at every call):
 * a file truncated or grown under the VM, or deleted, is not what the
 * guest was told. problem is "" when the disk still matches what the
 * guest was told, else what changed and the way out.
 */
struct virtio_blk_now {
	bool known;		/* fstat worked */
	uint64_t size;		/* bytes now */
	bool deleted;		/* st_nlink == 0: no name reaches the file any more */
	char problem[320];
};

void virtio_blk_now(const struct virtio_blk *b, struct virtio_blk_now *now);

/* Compare the identity of an open disk with a recorded one; err says what differs. */
int virtio_blk_identity_check(const struct virtio_blk_identity *want,
			      const struct virtio_blk_identity *have, char *err, size_t errlen);

int virtio_blk_start(struct virtio_blk *b, char *err, size_t errlen);

/* Every available request done and pushed; the caller keeps the vCPUs parked. */
void virtio_blk_quiesce(struct virtio_blk *b);

/*
 * Make what the guest wrote durable (fdatasync; nothing for a read-only
 * disk), flushed or not: before a kexec, which drops this kernel's page
 * cache while the guest keeps believing its completed writes are there.
 */
int virtio_blk_sync(struct virtio_blk *b, char *err, size_t errlen);

/*
 * Handle every available request now, in the caller's thread (tests, and
 * quiesce before the threads start); never while the threads run.
 */
void virtio_blk_process(struct virtio_blk *b);

/*
 * The steps of a request, as the threads take them (and tests, to
 * complete requests in an order of their choosing): take the next
 * available request into a free slot (1; 0 when the ring is empty, the
 * device not live, or every slot in flight); do its I/O and put it in
 * the used ring without an interrupt, freeing its slot (any thread).
 */
int virtio_blk_take(struct virtio_blk *b, struct virtio_blk_req **r);
void virtio_blk_complete(struct virtio_blk *b, struct virtio_blk_req *r);

/* Request slots (virtio_blk_open and _adopt) and, at close, the threads and slots. */
int virtio_blk_io_init(struct virtio_blk *b);
void virtio_blk_io_fini(struct virtio_blk *b);

/*
 * One request: fills the status byte and returns the bytes written into
 * the chain's writable buffers, or -EIO for a chain that cannot be a
 * request (no header, no status byte).
 */
int virtio_blk_handle(struct virtio_blk *b, const struct virtq_chain *c);

void virtio_blk_close(struct virtio_blk *b);

#endif /* KVMLU_VMM_DEVICES_VIRTIO_BLK_H */
