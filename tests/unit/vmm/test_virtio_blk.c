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
#include <stdio.h>
#include <string.h>
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
	f->dev[0].fd = f->dev[0].ctl_fd = f->dev[1].fd = f->dev[1].ctl_fd = -1;
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
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
