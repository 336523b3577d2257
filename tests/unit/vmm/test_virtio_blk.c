// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/devices/virtio_blk*.c against a temp file: requests
 * built in a pretend guest's RAM go through the transport's queue to the
 * file and back. Each checks values: bytes in the file, the status byte,
 * the used length; and the refusals (missing file, read-only, sectors
 * outside the disk, chains without header or status).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/virtio_blk.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KVMLU_TEST_VIRTIO_MMIO
#include "tests/unit/vmm/virtio_test_support.h"
#include "vmm/devices/virtio_blk.h"
#include "vmm/devices/virtio_blk_state.h"

#define DISK_SIZE	(64u << 10)	/* 128 sectors */
#define HDR		TG_DATA
#define BUF		(TG_DATA + 0x1000)
#define STATUS		(TG_DATA + 0x8000)

struct fixture {
	struct guestmem gm;
	struct virtio_blk dev[2];
	struct virtio_blk *b;	/* the device the guest talks to */
	char path[64];
	char err[512];
	uint16_t next_avail;
	uint16_t qsize;		/* queue size the driver set up (16 unless a test says) */
	uint64_t ring_features;	/* EVENT_IDX / INDIRECT_DESC acked, when a test says */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int fd;

	tg_mem_init(&f->gm);
	snprintf(f->path, sizeof(f->path), "/tmp/kvmlu-test-blk-XXXXXX");
	fd = mkstemp(f->path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK_SIZE), 0);
	close(fd);
	f->dev[0].fd = f->dev[0].io.ctl_fd = f->dev[1].fd = f->dev[1].io.ctl_fd = -1;
	f->dev[0].done_fd = f->dev[1].done_fd = -1;
	f->b = &f->dev[0];
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	virtio_blk_close(&f->dev[0]);
	virtio_blk_close(&f->dev[1]);
	unlink(f->path);
	tg_mem_free(&f->gm);
	free(f);
	return 0;
}

static void open_disk(struct fixture *f, bool readonly, const char *id)
{
	struct virtio_blk_spec spec = { .path = f->path, .readonly = readonly };
	uint64_t features = (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_BLK_F_FLUSH) |
			    (1ULL << VIRTIO_BLK_F_SEG_MAX);

	snprintf(spec.id, sizeof(spec.id), "%s", id);
	assert_int_equal(virtio_blk_open(f->b, &spec, 0, &f->gm, f->err, sizeof(f->err)), 0);
	if (readonly)
		features |= 1ULL << VIRTIO_BLK_F_RO;
	features |= f->ring_features;
	tg_negotiate(&f->b->t, features);
	assert_true(tg_rd(&f->b->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
	if (!f->qsize)
		f->qsize = 16;
	tg_queue(&f->b->t, f->qsize);
	tg_driver_ok(&f->b->t);
	assert_int_equal(tg_rd(&f->b->t, VIRTIO_MMIO_STATUS), 1 | 2 | 4 | 8);
}

/* header; data of len bytes at BUF (device-writable for reads); status byte. */
static void request(struct fixture *f, uint32_t type, uint64_t sector, uint32_t len,
		    bool data_writable)
{
	struct virtio_blk_outhdr h = { .type = type, .sector = sector };
	uint16_t q = f->qsize, d = (uint16_t)((f->next_avail * 3) % q);

	memcpy(tg_ptr(&f->gm, HDR), &h, sizeof(h));
	*(uint8_t *)tg_ptr(&f->gm, STATUS) = 0xee;
	if (len) {
		tg_desc(&f->gm, d, HDR, sizeof(h), VIRTQ_DESC_F_NEXT, (uint16_t)((d + 1) % q));
		tg_desc(&f->gm, (uint16_t)((d + 1) % q), BUF, len,
			VIRTQ_DESC_F_NEXT | (data_writable ? VIRTQ_DESC_F_WRITE : 0),
			(uint16_t)((d + 2) % q));
	} else {
		tg_desc(&f->gm, d, HDR, sizeof(h), VIRTQ_DESC_F_NEXT, (uint16_t)((d + 2) % q));
	}
	tg_desc(&f->gm, (uint16_t)((d + 2) % q), STATUS, 1, VIRTQ_DESC_F_WRITE, 0);
	tg_avail(&f->gm, q, f->next_avail, d);
	f->next_avail++;
}

/* Run the queue; the status byte and used length of the request just made. */
static uint8_t complete(struct fixture *f, uint32_t *used_len)
{
	uint32_t id;

	virtio_blk_process(f->b);
	assert_int_equal(tg_used_idx(&f->gm), f->next_avail);
	tg_used_elem(&f->gm, f->qsize, (uint16_t)(f->next_avail - 1), &id, used_len);
	return *(uint8_t *)tg_ptr(&f->gm, STATUS);
}

static void test_blk_open_refuses_a_missing_file(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_spec spec = { .path = "/nonexistent/disk.img" };

	assert_int_equal(virtio_blk_open(f->b, &spec, 0, &f->gm, f->err, sizeof(f->err)),
			 -ENOENT);
	assert_string_equal(f->err, "disk /nonexistent/disk.img: No such file or directory");
}

static void test_blk_open_refuses_a_second_writer(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_spec spec = { .path = f->path };
	struct virtio_blk other;

	assert_int_equal(virtio_blk_open(f->b, &spec, 0, &f->gm, f->err, sizeof(f->err)), 0);
	assert_int_equal(virtio_blk_open(&other, &spec, 1, &f->gm, f->err, sizeof(f->err)),
			 -EWOULDBLOCK);
	assert_non_null(strstr(f->err, "another VM has it open?"));
}

static void test_blk_reports_capacity_in_config(void **state)
{
	struct fixture *f = *state;
	uint64_t cap;
	uint32_t seg_max;

	open_disk(f, false, "");
	virtio_mmio_read(&f->b->t, VIRTIO_MMIO_CONFIG, (uint8_t *)&cap, 8);
	assert_int_equal(cap, DISK_SIZE / 512);
	virtio_mmio_read(&f->b->t, VIRTIO_MMIO_CONFIG + 12, (uint8_t *)&seg_max, 4);
	assert_int_equal(seg_max, VIRTIO_BLK_SEG_MAX);
	assert_int_equal(f->b->ident.size, DISK_SIZE);
	assert_int_equal(f->b->ident.path[0], '/');
}

static void test_blk_write_then_read_back(void **state)
{
	struct fixture *f = *state;
	uint8_t file[1024], *buf = tg_ptr(&f->gm, BUF);
	uint32_t len;
	int fd;

	open_disk(f, false, "");
	for (int i = 0; i < 1024; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	request(f, VIRTIO_BLK_T_OUT, 3, 1024, false);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(len, 1);
	fd = open(f->path, O_RDONLY);
	assert_int_equal(pread(fd, file, sizeof(file), 3 * 512), (ssize_t)sizeof(file));
	close(fd);
	assert_memory_equal(file, buf, 1024);

	memset(buf, 0, 1024);
	request(f, VIRTIO_BLK_T_IN, 3, 1024, true);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(len, 1025);
	assert_memory_equal(buf, file, 1024);
	assert_int_equal(buf[1023], (uint8_t)(1023 * 7 + 1));
}

static void test_blk_flush_succeeds(void **state)
{
	struct fixture *f = *state;
	uint32_t len;

	open_disk(f, false, "");
	request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(len, 1);
}

/* prepare-update's sync: a written disk, a read-only one, and a dead fd. */
static void test_blk_sync_makes_writes_durable_or_says_why(void **state)
{
	struct fixture *f = *state;
	uint32_t len;
	int fd;

	open_disk(f, false, "");
	request(f, VIRTIO_BLK_T_OUT, 0, 512, false);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(virtio_blk_sync(f->b, f->err, sizeof(f->err)), 0);
	fd = f->b->fd;
	f->b->fd = -1;
	assert_int_equal(virtio_blk_sync(f->b, f->err, sizeof(f->err)), -EBADF);
	assert_non_null(strstr(f->err, "fdatasync"));
	f->b->readonly = true;
	assert_int_equal(virtio_blk_sync(f->b, f->err, sizeof(f->err)), 0);
	f->b->readonly = false;
	f->b->fd = fd;
}

static void test_blk_readonly_refuses_writes(void **state)
{
	struct fixture *f = *state;
	uint8_t file[512], zero[512] = { 0 };
	uint32_t len, features;
	int fd;

	open_disk(f, true, "");
	tg_wr(&f->b->t, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	features = tg_rd(&f->b->t, VIRTIO_MMIO_DEVICE_FEATURES);
	assert_true(features & (1u << VIRTIO_BLK_F_RO));
	memset(tg_ptr(&f->gm, BUF), 0xab, 512);
	request(f, VIRTIO_BLK_T_OUT, 0, 512, false);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_IOERR);
	fd = open(f->path, O_RDONLY);
	assert_int_equal(pread(fd, file, sizeof(file), 0), 512);
	close(fd);
	assert_memory_equal(file, zero, 512);
	/* Reads still work. */
	request(f, VIRTIO_BLK_T_IN, 0, 512, true);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(len, 513);
	assert_int_equal(*(uint8_t *)tg_ptr(&f->gm, BUF), 0);
}

static void test_blk_out_of_range_sectors_are_ioerr(void **state)
{
	struct fixture *f = *state;
	static const struct { uint64_t sector; uint32_t len; } bad[] = {
		{ 128, 512 },			/* just past the end */
		{ 127, 1024 },			/* runs over it */
		{ UINT64_MAX, 512 },		/* offset would wrap */
		{ UINT64_MAX / 512 + 1, 512 },	/* sector * 512 wraps */
		{ 0, 700 },			/* not whole sectors */
	};
	uint32_t len;

	open_disk(f, false, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		request(f, VIRTIO_BLK_T_IN, bad[i].sector, bad[i].len, true);
		assert_int_equal(complete(f, &len), VIRTIO_BLK_S_IOERR);
		assert_int_equal(len, 1);
		request(f, VIRTIO_BLK_T_OUT, bad[i].sector, bad[i].len, false);
		assert_int_equal(complete(f, &len), VIRTIO_BLK_S_IOERR);
	}
	/* The last sector itself is fine. */
	request(f, VIRTIO_BLK_T_IN, 127, 512, true);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(f->b->io_errors, 10);
}

static void test_blk_get_id_returns_the_id(void **state)
{
	struct fixture *f = *state;
	char want[20] = "data-disk";
	uint32_t len;

	open_disk(f, false, "data-disk");
	memset(tg_ptr(&f->gm, BUF), 0x55, 20);
	request(f, VIRTIO_BLK_T_GET_ID, 0, 20, true);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(len, 21);
	assert_memory_equal(tg_ptr(&f->gm, BUF), want, 20);
}

static void test_blk_unknown_request_is_unsupp(void **state)
{
	struct fixture *f = *state;
	uint32_t len;

	open_disk(f, false, "");
	request(f, VIRTIO_BLK_T_DISCARD, 0, 16, false);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_UNSUPP);
}

static void test_blk_header_split_across_descriptors(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_outhdr h = { .type = VIRTIO_BLK_T_OUT, .sector = 1 };
	uint8_t *buf = tg_ptr(&f->gm, BUF), file[512];
	uint32_t len, id;
	int fd;

	open_disk(f, false, "");
	memcpy(tg_ptr(&f->gm, HDR), &h, sizeof(h));
	memset(buf, 0x3c, 512);
	/* 8 + 8 header bytes, then data in two halves, status at the end of a 2-byte buffer. */
	tg_desc(&f->gm, 0, HDR, 8, VIRTQ_DESC_F_NEXT, 1);
	tg_desc(&f->gm, 1, HDR + 8, 8, VIRTQ_DESC_F_NEXT, 2);
	tg_desc(&f->gm, 2, BUF, 256, VIRTQ_DESC_F_NEXT, 3);
	tg_desc(&f->gm, 3, BUF + 256, 256, VIRTQ_DESC_F_NEXT, 4);
	tg_desc(&f->gm, 4, STATUS - 1, 2, VIRTQ_DESC_F_WRITE, 0);
	tg_avail(&f->gm, 16, 0, 0);
	virtio_blk_process(f->b);
	assert_int_equal(tg_used_idx(&f->gm), 1);
	tg_used_elem(&f->gm, 16, 0, &id, &len);
	assert_int_equal(id, 0);
	assert_int_equal(*(uint8_t *)tg_ptr(&f->gm, STATUS), VIRTIO_BLK_S_OK);
	fd = open(f->path, O_RDONLY);
	assert_int_equal(pread(fd, file, 512, 512), 512);
	close(fd);
	assert_memory_equal(file, buf, 512);
}

static void test_blk_request_without_status_byte_is_a_device_error(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_outhdr h = { .type = VIRTIO_BLK_T_IN };

	open_disk(f, false, "");
	memcpy(tg_ptr(&f->gm, HDR), &h, sizeof(h));
	tg_desc(&f->gm, 0, HDR, sizeof(h), 0, 0);
	tg_avail(&f->gm, 16, 0, 0);
	virtio_blk_process(f->b);
	assert_true(tg_rd(&f->b->t, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	assert_int_equal(tg_used_idx(&f->gm), 0);
	assert_int_equal(f->b->t.inflight, 0);
}

static void test_blk_io_thread_completes_notified_requests_by_quiesce(void **state)
{
	struct fixture *f = *state;
	uint8_t *buf = tg_ptr(&f->gm, BUF);

	open_disk(f, false, "");
	assert_int_equal(virtio_blk_start(f->b, f->err, sizeof(f->err)), 0);
	memset(buf, 0x77, 4096);
	for (int i = 0; i < 5; i++)
		request(f, VIRTIO_BLK_T_OUT, (uint64_t)i * 8, 4096, false);
	/* No notify at all for the last ones: quiesce still drains the ring. */
	tg_wr(&f->b->t, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	virtio_blk_quiesce(f->b);
	assert_int_equal(tg_used_idx(&f->gm), 5);
	assert_int_equal(f->b->requests, 5);
	assert_int_equal(f->b->t.inflight, 0);
	assert_true(tg_rd(&f->b->t, VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_INT_USED_RING);
	assert_true(tg_eventfd(f->b->t.irq_fd) >= 1);
	/* And again, with nothing new: returns at once. */
	virtio_blk_quiesce(f->b);
	assert_int_equal(tg_used_idx(&f->gm), 5);
}

/* What a live upgrade does: state out of one device, into a new one on the same fd. */
static void test_blk_state_moves_a_live_device_to_a_new_one(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_state st;
	struct virtio_blk_spec spec = { .path = f->path };
	struct virtio_blk *nb = &f->dev[1];
	uint32_t len;
	int fd;

	open_disk(f, false, "");
	for (int i = 0; i < 3; i++) {
		request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false);
		assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	}
	virtio_blk_quiesce(f->b);
	assert_int_equal(virtio_blk_get_state(f->b, &st), 0);
	assert_int_equal(st.t.q[0].last_avail, 3);
	assert_int_equal(st.t.q[0].used_idx, 3);
	assert_int_equal(st.t.status, 15);
	assert_int_equal(virtio_blk_state_validate(&st, f->err, sizeof(f->err)), 0);

	fd = dup(f->b->fd);
	assert_int_equal(virtio_blk_adopt(nb, fd, &spec, &st.ident, 0, &f->gm, f->err,
					  sizeof(f->err)), 0);
	assert_int_equal(virtio_blk_set_state(nb, &st, f->err, sizeof(f->err)), 0);
	assert_int_equal(tg_rd(&nb->t, VIRTIO_MMIO_STATUS), 15);
	/* The old device is gone; the guest's next request goes to the new one. */
	virtio_blk_close(f->b);
	f->b = nb;
	memset(tg_ptr(&f->gm, BUF), 0x42, 512);
	request(f, VIRTIO_BLK_T_OUT, 9, 512, false);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(tg_used_idx(&f->gm), 4);
}

static void test_blk_state_refuses_another_disk(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_state st;
	struct virtio_blk other;
	char path2[64] = "/tmp/kvmlu-test-blk2-XXXXXX";
	struct virtio_blk_spec spec = { .path = path2 };
	int fd = mkstemp(path2);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK_SIZE), 0);
	close(fd);
	open_disk(f, false, "");
	assert_int_equal(virtio_blk_get_state(f->b, &st), 0);
	assert_int_equal(virtio_blk_open(&other, &spec, 0, &f->gm, f->err, sizeof(f->err)), 0);
	assert_int_equal(virtio_blk_set_state(&other, &st, f->err, sizeof(f->err)), -ESTALE);
	assert_non_null(strstr(f->err, "is not the same file"));
	virtio_blk_close(&other);
	/* The same inode, grown: the guest saw another capacity. */
	fd = open(f->path, O_RDWR);
	assert_int_equal(ftruncate(fd, 2 * DISK_SIZE), 0);
	close(fd);
	virtio_blk_close(f->b);
	open_disk(f, false, "");
	assert_int_equal(virtio_blk_set_state(f->b, &st, f->err, sizeof(f->err)), -ESTALE);
	assert_non_null(strstr(f->err, "changed size: 131072 bytes now, 65536 recorded"));
	assert_non_null(strstr(f->err, "put the size back (truncate -s 65536 "));
	unlink(path2);
}

static void test_blk_state_refuses_rings_outside_ram(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_state st;
	struct virtio_blk_spec spec = { .path = f->path };
	struct virtio_blk nb;

	open_disk(f, false, "");
	assert_int_equal(virtio_blk_get_state(f->b, &st), 0);
	st.t.q[0].used = TG_HIGH_GPA + TG_HIGH_SIZE;
	assert_int_equal(virtio_blk_adopt(&nb, dup(f->b->fd), &spec, &st.ident, 0, &f->gm,
					  f->err, sizeof(f->err)), 0);
	assert_int_equal(virtio_blk_set_state(&nb, &st, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "queue 0: used ring"));
	assert_int_equal(tg_rd(&nb.t, VIRTIO_MMIO_STATUS), 0);	/* untouched */
	virtio_blk_close(&nb);
}

static void test_blk_interrupts_at_least_every_16_completions(void **state)
{
	struct fixture *f = *state;

	f->qsize = 64;
	open_disk(f, false, "");
	/* Chains share descriptors here; each is a flush, so that is fine. */
	for (int i = 0; i < 40; i++)
		request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	virtio_blk_process(f->b);
	assert_int_equal(tg_used_idx(&f->gm), 40);
	/* 16 + 16 + the last 8 when the ring ran dry. */
	assert_int_equal(f->b->t.interrupts, 3);
}

#define F_RING ((1ULL << VIRTIO_RING_F_EVENT_IDX) | (1ULL << VIRTIO_RING_F_INDIRECT_DESC))
/* Room for up to 128 requests of their own, away from HDR/BUF/STATUS. */
#define RQ_HDR(i)	(0x40000ULL + 16 * (uint64_t)(i))
#define RQ_STATUS(i)	(0x41000ULL + (uint64_t)(i))
#define RQ_TABLE(i)	(0x42000ULL + 48 * (uint64_t)(i))
#define RQ_DATA(i)	(0x50000ULL + 512 * (uint64_t)(i))
#define RQ_MAX		128

/*
 * Request i as Linux with INDIRECT_DESC builds it: descriptor i points at
 * a 3-entry table (header, 512 bytes of data, status); a read's data is
 * device-writable. Made available as avail entry f->next_avail.
 */
static void request_indirect(struct fixture *f, uint16_t i, uint32_t type, uint64_t sector)
{
	struct virtio_blk_outhdr h = { .type = type, .sector = sector };
	uint8_t *t = tg_ptr(&f->gm, RQ_TABLE(i));
	struct { uint64_t addr; uint32_t len; uint16_t flags, next; } e[3] = {
		{ RQ_HDR(i), sizeof(h), VIRTQ_DESC_F_NEXT, 1 },
		{ RQ_DATA(i), 512,
		  VIRTQ_DESC_F_NEXT | (type == VIRTIO_BLK_T_IN ? VIRTQ_DESC_F_WRITE : 0), 2 },
		{ RQ_STATUS(i), 1, VIRTQ_DESC_F_WRITE, 0 },
	};

	memcpy(tg_ptr(&f->gm, RQ_HDR(i)), &h, sizeof(h));
	*(uint8_t *)tg_ptr(&f->gm, RQ_STATUS(i)) = 0xee;
	memcpy(t, e, sizeof(e));
	tg_desc(&f->gm, i, RQ_TABLE(i), sizeof(e), VIRTQ_DESC_F_INDIRECT, 0);
	tg_avail(&f->gm, f->qsize, f->next_avail, i);
	f->next_avail++;
}

static void read_file(struct fixture *f, uint64_t off, void *buf, size_t n)
{
	int fd = open(f->path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, n, (off_t)off), (ssize_t)n);
	close(fd);
}

/* Wait (up to 10 s) for the used idx to reach want. */
static void wait_used(struct fixture *f, uint16_t want)
{
	for (int ms = 0; ms < 10000 && tg_used_idx(&f->gm) != want; ms++)
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	assert_int_equal(tg_used_idx(&f->gm), want);
}

/* Each used entry names a distinct head below n: nothing twice, nothing lost. */
static void assert_used_once_each(struct fixture *f, uint16_t n, uint32_t want_len)
{
	bool seen[RQ_MAX] = { false };
	uint32_t id, len;

	for (uint16_t k = 0; k < n; k++) {
		tg_used_elem(&f->gm, f->qsize, k, &id, &len);
		assert_true(id < n);
		assert_false(seen[id]);
		seen[id] = true;
		assert_int_equal(len, want_len);
		assert_int_equal(*(uint8_t *)tg_ptr(&f->gm, RQ_STATUS(id)), VIRTIO_BLK_S_OK);
	}
}

static void test_blk_offers_blk_size_and_the_ring_features(void **state)
{
	struct fixture *f = *state;
	uint32_t blk_size, seg_max, lo;

	open_disk(f, false, "");
	tg_wr(&f->b->t, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	lo = tg_rd(&f->b->t, VIRTIO_MMIO_DEVICE_FEATURES);
	assert_true(lo & (1u << VIRTIO_BLK_F_BLK_SIZE));
	assert_true(lo & (1u << VIRTIO_BLK_F_SEG_MAX));
	assert_true(lo & (1u << VIRTIO_RING_F_EVENT_IDX));
	assert_true(lo & (1u << VIRTIO_RING_F_INDIRECT_DESC));
	virtio_mmio_read(&f->b->t, VIRTIO_MMIO_CONFIG + 20, (uint8_t *)&blk_size, 4);
	assert_int_equal(blk_size, 512);
	/* Header and status beside SEG_MAX data segments fit the longest chain we take. */
	virtio_mmio_read(&f->b->t, VIRTIO_MMIO_CONFIG + 12, (uint8_t *)&seg_max, 4);
	assert_int_equal(seg_max + 2, VIRTQ_MAX_SIZE);
	assert_int_equal(tg_rd(&f->b->t, VIRTIO_MMIO_QUEUE_NUM_MAX), 256);
}

static void test_blk_completes_requests_out_of_order(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_req *r[8];
	uint8_t file[512];
	uint32_t id, len;

	f->qsize = 16;
	f->ring_features = F_RING;
	open_disk(f, false, "");
	for (uint16_t i = 0; i < 8; i++) {
		memset(tg_ptr(&f->gm, RQ_DATA(i)), 0x10 + i, 512);
		request_indirect(f, i, VIRTIO_BLK_T_OUT, 8 + i);
	}
	for (int i = 0; i < 8; i++)
		assert_int_equal(virtio_blk_take(f->b, &r[i]), 1);
	assert_int_equal(virtio_blk_take(f->b, &r[0]), 0);	/* the ring is empty */
	assert_int_equal(f->b->nr_inflight, 8);
	assert_int_equal(f->b->t.inflight, 8);
	/* Last taken, first done: each lands in the used ring as it completes. */
	for (int i = 7; i >= 0; i--) {
		virtio_blk_complete(f->b, r[i]);
		assert_int_equal(tg_used_idx(&f->gm), 8 - i);
		tg_used_elem(&f->gm, f->qsize, (uint16_t)(7 - i), &id, &len);
		assert_int_equal(id, i);
		assert_int_equal(len, 1);
		assert_int_equal(*(uint8_t *)tg_ptr(&f->gm, RQ_STATUS(i)), VIRTIO_BLK_S_OK);
		read_file(f, (8 + (uint64_t)i) * 512, file, sizeof(file));
		assert_memory_equal(file, tg_ptr(&f->gm, RQ_DATA(i)), 512);
	}
	assert_int_equal(f->b->nr_inflight, 0);
	assert_int_equal(f->b->t.inflight, 0);
	/* Completions raise nothing; the batch's end raises one interrupt. */
	assert_int_equal(f->b->t.interrupts, 0);
	virtio_mmio_notify(&f->b->t, 0);
	assert_int_equal(f->b->t.interrupts, 1);
}

static void test_blk_takes_no_more_than_its_slots(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_req *r;
	unsigned int n = 0;

	/* A hostile driver lists one head again and again, more than the slots. */
	f->qsize = 256;
	open_disk(f, false, "");
	request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	for (unsigned int k = 1; k < VIRTIO_BLK_INFLIGHT + 8; k++) {
		tg_avail(&f->gm, f->qsize, f->next_avail, 0);
		f->next_avail++;
		while (virtio_blk_take(f->b, &r) > 0)
			n++;
	}
	assert_int_equal(n, VIRTIO_BLK_INFLIGHT);
	assert_int_equal(f->b->nr_inflight, VIRTIO_BLK_INFLIGHT);
	/* One slot freed: one more taken. */
	virtio_blk_complete(f->b, &f->b->reqs[0]);
	assert_int_equal(virtio_blk_take(f->b, &r), 1);
	assert_int_equal(virtio_blk_take(f->b, &r), 0);
	/* Whatever is in flight completes before the device is closed. */
	for (unsigned int i = 0; i < VIRTIO_BLK_INFLIGHT; i++)
		virtio_blk_complete(f->b, &f->b->reqs[i]);
	assert_int_equal(f->b->nr_inflight, 0);
	assert_int_equal(f->b->t.inflight, 0);
}

static void test_blk_workers_serve_many_requests_in_flight(void **state)
{
	struct fixture *f = *state;
	uint8_t file[512];
	uint16_t avail_event;

	f->qsize = 256;
	f->ring_features = F_RING;
	open_disk(f, false, "");
	assert_int_equal(virtio_blk_start(f->b, f->err, sizeof(f->err)), 0);
	for (uint16_t i = 0; i < RQ_MAX; i++) {
		memset(tg_ptr(&f->gm, RQ_DATA(i)), (int)(i * 3 + 1), 512);
		request_indirect(f, i, VIRTIO_BLK_T_OUT, i);
	}
	tg_wr(&f->b->t, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	wait_used(f, RQ_MAX);
	assert_used_once_each(f, RQ_MAX, 1);
	for (uint16_t i = 0; i < RQ_MAX; i += 17) {
		read_file(f, (uint64_t)i * 512, file, sizeof(file));
		assert_memory_equal(file, tg_ptr(&f->gm, RQ_DATA(i)), 512);
	}
	/* The ring ran dry: the device asked to be notified at the next entry. */
	virtio_blk_quiesce(f->b);	/* the I/O thread has looked at the ring since */
	memcpy(&avail_event, (uint8_t *)tg_ptr(&f->gm, TG_USED) + 4 + 8 * 256, 2);
	assert_int_equal(avail_event, RQ_MAX);
	assert_true(f->b->t.interrupts >= 1);
	assert_true(f->b->t.interrupts <= RQ_MAX);

	/* Read them back, into wiped buffers, in one more batch on the same ring. */
	for (uint16_t i = 0; i < RQ_MAX; i++)
		memset(tg_ptr(&f->gm, RQ_DATA(i)), 0, 512);
	for (uint16_t i = 0; i < RQ_MAX; i++)
		request_indirect(f, i, VIRTIO_BLK_T_IN, i);
	tg_wr(&f->b->t, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	wait_used(f, 2 * RQ_MAX);
	for (uint16_t i = 0; i < RQ_MAX; i++) {
		uint8_t want[512];

		memset(want, (int)(i * 3 + 1), 512);
		assert_memory_equal(tg_ptr(&f->gm, RQ_DATA(i)), want, 512);
	}
	virtio_blk_quiesce(f->b);
	assert_int_equal(f->b->nr_inflight, 0);
	assert_int_equal(f->b->requests, 2 * RQ_MAX);
}

struct held {
	struct virtio_blk *b;
	struct virtio_blk_req *r[2];
	bool done;
};

/* A slow I/O: two requests held in flight for 200 ms, then completed. */
static void *complete_later(void *arg)
{
	struct held *h = arg;

	nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000000 }, NULL);
	__atomic_store_n(&h->done, true, __ATOMIC_SEQ_CST);
	virtio_blk_complete(h->b, h->r[0]);
	virtio_blk_complete(h->b, h->r[1]);
	return NULL;
}

static void test_blk_quiesce_waits_for_requests_in_flight(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_state st;
	struct held h = { 0 };
	pthread_t slow;

	f->qsize = 256;
	f->ring_features = F_RING;
	open_disk(f, false, "");
	for (uint16_t i = 0; i < 64; i++)
		request_indirect(f, i, VIRTIO_BLK_T_OUT, i);
	/* Two taken before the threads start, as a slow I/O would hold them. */
	h.b = f->b;
	assert_int_equal(virtio_blk_take(f->b, &h.r[0]), 1);
	assert_int_equal(virtio_blk_take(f->b, &h.r[1]), 1);
	assert_int_equal(virtio_blk_start(f->b, f->err, sizeof(f->err)), 0);
	tg_wr(&f->b->t, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	assert_int_equal(pthread_create(&slow, NULL, complete_later, &h), 0);
	virtio_blk_quiesce(f->b);
	/* Not before the held two completed; then everything is in the used ring. */
	assert_true(__atomic_load_n(&h.done, __ATOMIC_SEQ_CST));
	assert_int_equal(tg_used_idx(&f->gm), 64);
	assert_int_equal(f->b->nr_inflight, 0);
	assert_int_equal(f->b->t.inflight, 0);
	assert_used_once_each(f, 64, 1);
	assert_int_equal(virtio_blk_get_state(f->b, &st), 0);
	assert_int_equal(st.t.q[0].last_avail, 64);
	assert_int_equal(st.t.q[0].used_idx, 64);
	pthread_join(slow, NULL);
	/* Nothing happened after the quiesce: nothing delivered twice. */
	assert_int_equal(tg_used_idx(&f->gm), 64);
	assert_int_equal(f->b->requests, 64);
}

/* A state captured before BLK_SIZE and the ring features were offered. */
static void test_blk_state_from_before_blk_size_restores(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_spec spec = { .path = f->path };
	struct virtio_blk_state st, bad;
	struct virtio_blk *nb = &f->dev[1];
	uint64_t new_bits = (1ULL << VIRTIO_BLK_F_BLK_SIZE) | F_RING;
	uint32_t len;

	open_disk(f, false, "");
	request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(virtio_blk_get_state(f->b, &st), 0);
	assert_int_equal(st.t.config_len, 24);
	st.t.config_len = 16;	/* capacity, size_max, seg_max */
	memset(st.t.config + 16, 0, 8);
	st.t.device_features &= ~new_bits;
	assert_int_equal(st.t.driver_features & new_bits, 0);
	assert_int_equal(virtio_blk_state_validate(&st, f->err, sizeof(f->err)), 0);
	assert_int_equal(virtio_blk_adopt(nb, dup(f->b->fd), &spec, &st.ident, 0, &f->gm, f->err,
					  sizeof(f->err)), 0);
	/* Not if its 16 bytes differ from today's (another capacity)... */
	bad = st;
	bad.t.config[0] ^= 1;
	assert_int_equal(virtio_blk_set_state(nb, &bad, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "device config differs"));
	/* ...nor if the guest had taken BLK_SIZE with a config that lacks it. */
	bad = st;
	bad.t.device_features |= 1ULL << VIRTIO_BLK_F_BLK_SIZE;
	bad.t.driver_features |= 1ULL << VIRTIO_BLK_F_BLK_SIZE;
	assert_int_equal(virtio_blk_set_state(nb, &bad, f->err, sizeof(f->err)), -EINVAL);
	assert_int_equal(tg_rd(&nb->t, VIRTIO_MMIO_STATUS), 0);
	assert_int_equal(virtio_blk_set_state(nb, &st, f->err, sizeof(f->err)), 0);
	assert_int_equal(tg_rd(&nb->t, VIRTIO_MMIO_STATUS), 15);
	assert_false(nb->t.queues[0].event_idx);
	virtio_blk_close(f->b);
	f->b = nb;
	request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	assert_int_equal(complete(f, &len), VIRTIO_BLK_S_OK);
	assert_int_equal(tg_used_idx(&f->gm), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_blk_open_refuses_a_missing_file),
		T(test_blk_open_refuses_a_second_writer),
		T(test_blk_reports_capacity_in_config),
		T(test_blk_write_then_read_back),
		T(test_blk_flush_succeeds),
		T(test_blk_sync_makes_writes_durable_or_says_why),
		T(test_blk_readonly_refuses_writes),
		T(test_blk_out_of_range_sectors_are_ioerr),
		T(test_blk_get_id_returns_the_id),
		T(test_blk_unknown_request_is_unsupp),
		T(test_blk_header_split_across_descriptors),
		T(test_blk_request_without_status_byte_is_a_device_error),
		T(test_blk_io_thread_completes_notified_requests_by_quiesce),
		T(test_blk_interrupts_at_least_every_16_completions),
		T(test_blk_state_moves_a_live_device_to_a_new_one),
		T(test_blk_state_refuses_another_disk),
		T(test_blk_state_refuses_rings_outside_ram),
		T(test_blk_offers_blk_size_and_the_ring_features),
		T(test_blk_completes_requests_out_of_order),
		T(test_blk_takes_no_more_than_its_slots),
		T(test_blk_workers_serve_many_requests_in_flight),
		T(test_blk_quiesce_waits_for_requests_in_flight),
		T(test_blk_state_from_before_blk_size_restores),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
