// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-blk: opening the disk and handling one request (see
 * virtio_blk.h). The I/O thread and quiesce are in virtio_blk_io.c.
 *
 * A request is a chain: a 16-byte header (type, reserved, sector) in
 * device-readable bytes, data, and a status byte as the last
 * device-writable byte. The spec lets the driver frame these across
 * descriptors any way it likes, so offsets are taken over the chain's
 * bytes, not per descriptor. Lengths and sectors come from the guest:
 * every sum is checked before it is used as a file offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/virtio_blk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/devices/virtio_blk.h"

struct blk_config {
	uint64_t capacity;
	uint32_t size_max;
	uint32_t seg_max;
	uint32_t geometry;	/* not offered: 0 */
	uint32_t blk_size;	/* VIRTIO_BLK_F_BLK_SIZE */
};

static int blk_identify(int fd, struct virtio_blk_identity *id, char *err, size_t errlen)
{
	struct stat st;
	uint64_t size;

	if (fstat(fd, &st) < 0)
		return kvmlu_err(err, errlen, -errno, "disk %s: fstat: %s", id->path,
				 strerror(errno));
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size) < 0)
			return kvmlu_err(err, errlen, -errno, "disk %s: BLKGETSIZE64: %s",
					 id->path, strerror(errno));
	} else if (S_ISREG(st.st_mode)) {
		size = (uint64_t)st.st_size;
	} else {
		return kvmlu_err(err, errlen, -EINVAL,
				 "disk %s: not a regular file or block device", id->path);
	}
	if (S_ISBLK(st.st_mode)) {
		/*
		 * A block device's node lives in devtmpfs, made anew at every
		 * boot: its st_dev/st_ino differ after a kexec though the disk
		 * is the same. What stays is the device number; so record
		 * st_rdev and inode 0 (with the size, checked below).
		 */
		id->dev = (uint64_t)st.st_rdev;
		id->ino = 0;
	} else {
		id->dev = (uint64_t)st.st_dev;
		id->ino = (uint64_t)st.st_ino;
	}
	id->size = size;
	return 0;
}

int virtio_blk_identity_check(const struct virtio_blk_identity *want,
			      const struct virtio_blk_identity *have, char *err, size_t errlen)
{
	if (want->dev != have->dev || want->ino != have->ino)
		return kvmlu_err(err, errlen, -ESTALE,
				 "disk %s is not the same file: device/inode %llu/%llu, recorded %llu/%llu",
				 have->path, (unsigned long long)have->dev,
				 (unsigned long long)have->ino, (unsigned long long)want->dev,
				 (unsigned long long)want->ino);
	if (want->size != have->size)
		return kvmlu_err(err, errlen, -ESTALE,
				 "disk %s changed size: %llu bytes now, %llu recorded (the size the "
				 "guest was told): put the size back (truncate -s %llu %s), or shut "
				 "the VM down and start it again to use the new size", have->path,
				 (unsigned long long)have->size, (unsigned long long)want->size,
				 (unsigned long long)want->size, have->path);
	return 0;
}

void virtio_blk_now(const struct virtio_blk *b, struct virtio_blk_now *now)
{
	struct virtio_blk_identity id;
	struct stat st;
	char err[64];

	memset(now, 0, sizeof(*now));
	if (b->fd < 0 || fstat(b->fd, &st) < 0)
		return;
	snprintf(id.path, sizeof(id.path), "%s", b->ident.path);
	if (blk_identify(b->fd, &id, err, sizeof(err)))
		return;
	now->known = true;
	now->size = id.size;
	now->deleted = st.st_nlink == 0;
	if (now->size != b->ident.size)
		snprintf(now->problem, sizeof(now->problem),
			 "%llu bytes now, the guest was told %llu: I/O past the end fails and "
			 "a live upgrade is refused until the size is put back (truncate -s %llu), "
			 "or shut the VM down", (unsigned long long)now->size,
			 (unsigned long long)b->ident.size, (unsigned long long)b->ident.size);
	else if (now->deleted)
		snprintf(now->problem, sizeof(now->problem),
			 "deleted: the VM still reads and writes the open file, but no path "
			 "reaches it, so a host update cannot restore the VM; shut it down, or "
			 "link the file back (it is /proc/%d/fd/%d)", (int)getpid(), b->fd);
}

/* The transport and config, once fd and identity are known. */
static int blk_setup(struct virtio_blk *b, const struct virtio_blk_spec *spec,
		     unsigned int index, const struct guestmem *mem, char *err, size_t errlen)
{
	struct blk_config cfg = { 0 };
	uint64_t features;
	int rc;

	b->readonly = spec->readonly;
	snprintf(b->id, sizeof(b->id), "%s", spec->id);
	if (spec->id[0])
		snprintf(b->name, sizeof(b->name), "virtio-blk %s", spec->id);
	else
		snprintf(b->name, sizeof(b->name), "virtio-blk %u", index);
	b->capacity = b->ident.size / VIRTIO_BLK_SECTOR;
	cfg.capacity = b->capacity;
	cfg.seg_max = VIRTIO_BLK_SEG_MAX;
	/* The unit requests are checked in; saying so keeps the guest's sector size. */
	cfg.blk_size = VIRTIO_BLK_SECTOR;
	features = (1ULL << VIRTIO_BLK_F_SEG_MAX) | (1ULL << VIRTIO_BLK_F_FLUSH) |
		   (1ULL << VIRTIO_BLK_F_BLK_SIZE) | (1ULL << VIRTIO_RING_F_EVENT_IDX) |
		   (1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	if (b->readonly)
		features |= 1ULL << VIRTIO_BLK_F_RO;
	rc = virtio_mmio_init(&b->t, b->name, VIRTIO_ID_BLOCK_DEVICE, features, 1, &cfg,
			      sizeof(cfg), mem);
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s: transport: %s", b->name, strerror(-rc));
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	device_thread_init(&b->io);
	rc = virtio_blk_io_init(b);
	if (rc) {
		virtio_blk_close(b);
		return kvmlu_err(err, errlen, rc, "%s: request slots: %s", b->name, strerror(-rc));
	}
	return 0;
}

static void blk_zero(struct virtio_blk *b)
{
	memset(b, 0, sizeof(*b));
	b->fd = b->io.ctl_fd = b->done_fd = -1;
}

int virtio_blk_open(struct virtio_blk *b, const struct virtio_blk_spec *spec,
		    unsigned int index, const struct guestmem *mem, char *err, size_t errlen)
{
	int fd, rc;

	blk_zero(b);
	if (strlen(spec->id) > VIRTIO_BLK_ID_MAX)
		return kvmlu_err(err, errlen, -EINVAL, "disk id '%s': at most %d bytes", spec->id,
				 VIRTIO_BLK_ID_MAX);
	fd = open(spec->path, (spec->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "disk %s: %s%s", spec->path,
				 strerror(errno),
				 errno == EROFS || errno == EACCES ? " (add ,readonly?)" : "");
	/* Absolute: the restore after a kexec runs elsewhere and reopens by it. */
	if (!realpath(spec->path, b->ident.path)) {
		rc = kvmlu_err(err, errlen, -errno, "disk %s: realpath: %s", spec->path,
			       strerror(errno));
		goto err_close;
	}
	if (flock(fd, (spec->readonly ? LOCK_SH : LOCK_EX) | LOCK_NB) < 0) {
		rc = kvmlu_err(err, errlen, -errno, "disk %s: %s (another VM has it open?)",
			       spec->path, strerror(errno));
		goto err_close;
	}
	rc = blk_identify(fd, &b->ident, err, errlen);
	if (rc)
		goto err_close;
	rc = blk_setup(b, spec, index, mem, err, errlen);
	if (rc)
		goto err_close;
	b->fd = fd;
	return 0;
err_close:
	close(fd);
	return rc;
}

int virtio_blk_adopt(struct virtio_blk *b, int fd, const struct virtio_blk_spec *spec,
		     const struct virtio_blk_identity *ident, unsigned int index,
		     const struct guestmem *mem, char *err, size_t errlen)
{
	int rc;

	blk_zero(b);
	snprintf(b->ident.path, sizeof(b->ident.path), "%s", ident->path);
	rc = blk_identify(fd, &b->ident, err, errlen);
	if (!rc)
		rc = virtio_blk_identity_check(ident, &b->ident, err, errlen);
	if (!rc)
		rc = blk_setup(b, spec, index, mem, err, errlen);
	if (rc)
		return rc;
	b->fd = fd;
	return 0;
}

/* Copy n bytes at offset off of the chain's readable part into out. */
static bool chain_read(const struct virtq_chain *c, uint64_t off, void *out, size_t n)
{
	char *dst = out;

	for (unsigned int i = 0; i < c->nr_readable && n; i++) {
		const struct virtq_buf *bf = &c->bufs[i];

		if (off >= bf->len) {
			off -= bf->len;
			continue;
		}
		size_t k = bf->len - off < n ? bf->len - off : n;

		memcpy(dst, (char *)bf->hva + off, k);
		dst += k;
		n -= k;
		off = 0;
	}
	return n == 0;
}

/*
 * iovecs over [off, off+len) of the readable (or writable) part. The
 * chain has at most VIRTQ_MAX_SIZE buffers, so iov needs no more.
 */
static int chain_iov(const struct virtq_chain *c, bool writable, uint64_t off, uint64_t len,
		     struct iovec *iov)
{
	unsigned int first = writable ? c->nr_readable : 0;
	unsigned int last = writable ? c->nr : c->nr_readable;
	int n = 0;

	for (unsigned int i = first; i < last && len; i++) {
		const struct virtq_buf *bf = &c->bufs[i];

		if (off >= bf->len) {
			off -= bf->len;
			continue;
		}
		uint64_t k = bf->len - off < len ? bf->len - off : len;

		iov[n].iov_base = (char *)bf->hva + off;
		iov[n].iov_len = (size_t)k;
		n++;
		len -= k;
		off = 0;
	}
	return n;
}

/* The status byte: the last byte of the writable part. */
static uint8_t *chain_status(const struct virtq_chain *c)
{
	for (unsigned int i = c->nr; i > c->nr_readable; i--)
		if (c->bufs[i - 1].len)
			return (uint8_t *)c->bufs[i - 1].hva + c->bufs[i - 1].len - 1;
	return NULL;
}

/* preadv/pwritev until all of len is done; a short transfer is an I/O error. */
static int blk_rw(struct virtio_blk *b, bool write, struct iovec *iov, int niov,
		  uint64_t off, uint64_t len)
{
	while (len) {
		ssize_t r = write ? pwritev(b->fd, iov, niov, (off_t)off)
				  : preadv(b->fd, iov, niov, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		off += (uint64_t)r;
		len -= (uint64_t)r;
		while (niov && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			niov--;
		}
		if (niov && r) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

/* Data of len bytes at sector: inside the disk, whole sectors, a used len that fits. */
static bool blk_range_ok(const struct virtio_blk *b, uint64_t sector, uint64_t len)
{
	return len % VIRTIO_BLK_SECTOR == 0 && len <= VIRTIO_BLK_REQ_MAX && sector <= b->capacity &&
	       len / VIRTIO_BLK_SECTOR <= b->capacity - sector;
}

int virtio_blk_handle(struct virtio_blk *b, const struct virtq_chain *c)
{
	struct virtio_blk_outhdr hdr;
	struct iovec iov[VIRTQ_MAX_SIZE];
	uint8_t *status = chain_status(c);
	uint64_t len, written = 0;
	uint8_t st = VIRTIO_BLK_S_OK;
	int n;

	if (!status || !chain_read(c, 0, &hdr, sizeof(hdr)))
		return -EIO;
	__atomic_fetch_add(&b->requests, 1, __ATOMIC_RELAXED);
	switch (hdr.type) {
	case VIRTIO_BLK_T_IN:
		len = c->writable_len - 1;
		if (!blk_range_ok(b, hdr.sector, len)) {
			st = VIRTIO_BLK_S_IOERR;
			break;
		}
		n = chain_iov(c, true, 0, len, iov);
		if (blk_rw(b, false, iov, n, hdr.sector * VIRTIO_BLK_SECTOR, len))
			st = VIRTIO_BLK_S_IOERR;
		else
			written = len;
		break;
	case VIRTIO_BLK_T_OUT:
		len = c->readable_len - sizeof(hdr);
		if (b->readonly || !blk_range_ok(b, hdr.sector, len)) {
			st = VIRTIO_BLK_S_IOERR;
			break;
		}
		n = chain_iov(c, false, sizeof(hdr), len, iov);
		if (blk_rw(b, true, iov, n, hdr.sector * VIRTIO_BLK_SECTOR, len))
			st = VIRTIO_BLK_S_IOERR;
		break;
	case VIRTIO_BLK_T_FLUSH:
		if (!b->readonly && fdatasync(b->fd) < 0)
			st = VIRTIO_BLK_S_IOERR;
		break;
	case VIRTIO_BLK_T_GET_ID: {
		char id[VIRTIO_BLK_ID_MAX] = { 0 };

		/* Not NUL-terminated when it is 20 bytes: that is the spec's format. */
		memcpy(id, b->id, strnlen(b->id, sizeof(id)));
		len = c->writable_len - 1 < sizeof(id) ? c->writable_len - 1 : sizeof(id);
		n = chain_iov(c, true, 0, len, iov);
		for (int i = 0, k = 0; i < n; k += (int)iov[i].iov_len, i++)
			memcpy(iov[i].iov_base, id + k, iov[i].iov_len);
		written = len;
		break;
	}
	default:
		st = VIRTIO_BLK_S_UNSUPP;
		break;
	}
	if (st == VIRTIO_BLK_S_IOERR)
		__atomic_fetch_add(&b->io_errors, 1, __ATOMIC_RELAXED);
	*status = st;
	return (int)(written + 1);
}

int virtio_blk_sync(struct virtio_blk *b, char *err, size_t errlen)
{
	if (b->readonly)
		return 0;
	if (fdatasync(b->fd) < 0)
		return kvmlu_err(err, errlen, -errno, "%s: fdatasync %s: %s", b->name,
				 b->ident.path, strerror(errno));
	return 0;
}

void virtio_blk_close(struct virtio_blk *b)
{
	virtio_blk_io_fini(b);
	if (b->t.nr_queues) {
		virtio_mmio_destroy(&b->t);
		pthread_cond_destroy(&b->cond);
		pthread_mutex_destroy(&b->lock);
		device_thread_fini(&b->io);
	}
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
}
