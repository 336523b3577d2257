/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-blk (virtio 1.x 5.2) on a raw image file or a block device,
 * over the virtio-mmio transport (vmm/virtio/). One request queue.
 * Offered: VIRTIO_BLK_F_SEG_MAX, VIRTIO_BLK_F_FLUSH (fdatasync),
 * VIRTIO_BLK_F_RO for --disk ...,readonly; GET_ID answers the disk's id.
 * Not offered: indirect descriptors, event idx, discard, write zeroes.
 *
 * Lifecycle: virtio_blk_open() opens the disk (or virtio_blk_adopt()
 * takes an fd received on a live upgrade), records what identifies it
 * (path, st_dev/st_ino, size) and sets the transport up;
 * virtio_blk_start() starts the I/O thread, which is the only thread
 * that does disk I/O (never a vCPU); virtio_blk_quiesce() returns once
 * every request the guest made available has completed (a paused VM's
 * state is captured only after it); virtio_blk_close() stops the thread
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

#include "vmm/virtio/virtio_mmio.h"

#define VIRTIO_ID_BLOCK_DEVICE	2
#define VIRTIO_BLK_SECTOR	512
#define VIRTIO_BLK_ID_MAX	20	/* VIRTIO_BLK_ID_BYTES */
#define VIRTIO_BLK_SEG_MAX	(VIRTQ_MAX_SIZE - 2)	/* header and status take two */
/* Largest data length of one request; Linux sends at most a few MiB. */
#define VIRTIO_BLK_REQ_MAX	(1ULL << 30)

/* What --disk asked for (vmm/options.c). */
struct virtio_blk_spec {
	const char *path;
	bool readonly;
	char id[VIRTIO_BLK_ID_MAX + 1];	/* "" when not given */
};

/* What identifies the disk: recorded at pause, checked after a kexec. */
struct virtio_blk_identity {
	char path[PATH_MAX];	/* absolute, as opened */
	uint64_t dev, ino;	/* st_dev, st_ino; a block device: st_rdev, 0 */
	uint64_t size;		/* bytes */
};

struct virtio_blk {
	struct virtio_mmio t;
	char name[32];			/* "virtio-blk <id or index>", for messages */
	int fd;
	bool readonly;
	char id[VIRTIO_BLK_ID_MAX + 1];
	struct virtio_blk_identity ident;
	uint64_t capacity;		/* 512-byte sectors */

	/* The I/O thread and its quiesce handshake. */
	pthread_t thread;
	bool thread_started;
	int ctl_fd;			/* eventfd: stop or quiesce requested */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	uint64_t quiesce_req, quiesce_done;

	struct virtq_chain chain;	/* the request being handled (I/O thread only) */
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

/* Handle every available request now, in the caller's thread (tests, quiesce). */
void virtio_blk_process(struct virtio_blk *b);

/*
 * One request: fills the status byte and returns the bytes written into
 * the chain's writable buffers, or -EIO for a chain that cannot be a
 * request (no header, no status byte).
 */
int virtio_blk_handle(struct virtio_blk *b, const struct virtq_chain *c);

void virtio_blk_close(struct virtio_blk *b);

#endif /* KVMLU_VMM_DEVICES_VIRTIO_BLK_H */
