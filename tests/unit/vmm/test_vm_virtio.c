// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-blk in a real VM (needs /dev/kvm; skipped without it, run by
 * harness/unit_on_nested_kvm): vm_create() with --disk opens the disk,
 * puts its window on the bus, and KVM takes the QueueNotify ioeventfd
 * and the irqfd. A driver's register accesses go through the I/O bus as
 * a vCPU's MMIO exits would; a write request is notified, completed by
 * the I/O thread and quiesced. Then what a live upgrade does: the state
 * is captured, a second VM adopts the disk's fd and the state, and the
 * guest's next request goes to it. A VM built on another file with the
 * recorded identity (a kexec restore on a replaced disk) is refused.
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "vmm/devices/virtio_blk_device.h"
#include "vmm/devices/virtio_blk_state.h"
#include "vmm/vm.h"
#include "vmm/vm_virtio.h"
#include "tests/unit/vmm/vm_test_support.h"

#define RAM	(4u << 20)
#define DESC	0x100000ULL
#define AVAIL	0x101000ULL
#define USED	0x102000ULL
#define HDR	0x110000ULL
#define DATA	0x111000ULL
#define STATUS	0x112000ULL
#define BASE	0xd0000000ULL

static char err[512];
static char path[64];

static int setup(void **state)
{
	(void)state;
	vt_disk_make(path, sizeof(path), "vmblk");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static uint32_t rd(struct vm *vm, uint64_t off)
{
	return vt_mmio_rd(vm, BASE + off);
}

static void wr(struct vm *vm, uint64_t off, uint32_t v)
{
	vt_mmio_wr(vm, BASE + off, v);
}

static void make_vm(struct vm *vm, const struct virtio_blk_spec *spec, const int *adopt_fd,
		    const struct virtio_blk_identity *ident, int expect)
{
	/* The disk's entry of the VM's one list of device configs. */
	static struct vm_device_config c;
	struct virtio_blk_disk_spec *d = vm_device_config_spec(&c);
	struct vm_config cfg = {
		.name = "vblk", .ram_size = RAM, .nr_vcpus = 1, .backend = GUESTMEM_MEMFD,
		.serial_fd = STDERR_FILENO, .devs = &c, .nr_devs = 1,
	};
	int rc;

	memset(&c, 0, sizeof(c));
	c.type = &virtio_blk_type;
	c.fd = adopt_fd ? *adopt_fd : -1;
	if (ident)
		d->ident = *ident;	/* an upgrade's: the path recorded, as opened */
	else
		snprintf(d->ident.path, sizeof(d->ident.path), "%s", spec->path);
	d->readonly = spec->readonly;
	snprintf(d->id, sizeof(d->id), "%s", spec->id);
	rc = vm_create(vm, &cfg, err, sizeof(err));

	if (rc != expect)
		fail_msg("vm_create: %d (%s), expected %d", rc, err, expect);
}

/* Linux's probe, through the bus: features, queue 0 of 8, DRIVER_OK. */
static void drive(struct vm *vm)
{
	wr(vm, VIRTIO_MMIO_STATUS, 0);
	wr(vm, VIRTIO_MMIO_STATUS, 1);
	wr(vm, VIRTIO_MMIO_STATUS, 3);
	wr(vm, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(vm, VIRTIO_MMIO_DRIVER_FEATURES, 1);
	wr(vm, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(vm, VIRTIO_MMIO_DRIVER_FEATURES, 1u << VIRTIO_BLK_F_FLUSH);
	wr(vm, VIRTIO_MMIO_STATUS, 11);
	assert_int_equal(rd(vm, VIRTIO_MMIO_STATUS), 11);
	wr(vm, VIRTIO_MMIO_QUEUE_SEL, 0);
	assert_int_equal(rd(vm, VIRTIO_MMIO_QUEUE_NUM_MAX), 256);
	wr(vm, VIRTIO_MMIO_QUEUE_NUM, 8);
	wr(vm, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)DESC);
	wr(vm, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)AVAIL);
	wr(vm, VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)USED);
	wr(vm, VIRTIO_MMIO_QUEUE_READY, 1);
	wr(vm, VIRTIO_MMIO_STATUS, 15);
	assert_int_equal(rd(vm, VIRTIO_MMIO_STATUS), 15);
}

/* A write of 512 bytes of `fill` at sector; the avail ring's next entry is n. */
static void submit_write(struct vm *vm, uint16_t n, uint64_t sector, uint8_t fill)
{
	struct virtio_blk_outhdr h = { .type = VIRTIO_BLK_T_OUT, .sector = sector };
	uint8_t *d = vt_gpa(vm, DESC);
	uint16_t idx = (uint16_t)(n + 1);
	struct { uint64_t a; uint32_t l; uint16_t f, nx; } desc[3] = {
		{ HDR, sizeof(h), 1, 1 }, { DATA, 512, 1, 2 }, { STATUS, 1, 2, 0 },
	};

	memcpy(vt_gpa(vm, HDR), &h, sizeof(h));
	memset(vt_gpa(vm, DATA), fill, 512);
	*(uint8_t *)vt_gpa(vm, STATUS) = 0xee;
	memcpy(d, desc, sizeof(desc));
	memset((uint8_t *)vt_gpa(vm, AVAIL) + 4 + 2 * (n % 8), 0, 2);
	__atomic_store_n((uint16_t *)((uint8_t *)vt_gpa(vm, AVAIL) + 2), idx, __ATOMIC_RELEASE);
	/* The guest's notify; a vCPU would exit to us only if KVM did not take it. */
	wr(vm, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
}

static uint16_t used_idx(struct vm *vm)
{
	return __atomic_load_n((uint16_t *)((uint8_t *)vt_gpa(vm, USED) + 2), __ATOMIC_ACQUIRE);
}

/* The VM's one disk, through the device interface. */
static struct vm_device *disk0(struct vm *vm)
{
	assert_int_equal(vm_virtio_count(&vm->virtio, &virtio_blk_type), 1);
	return vm_virtio_find(&vm->virtio, &virtio_blk_type, 0);
}

static void test_vm_virtio_blk_serves_requests_and_moves_to_a_new_vm(void **state)
{
	struct virtio_blk_spec spec = { .path = path };
	struct virtio_blk_state st;
	struct vm_virtio_slot slots[8];
	struct vm a, b;
	uint8_t sector[512];
	int fd;

	(void)state;
	if (!vt_have_kvm())
		skip();
	snprintf(spec.id, sizeof(spec.id), "root");
	make_vm(&a, &spec, NULL, NULL, 0);
	assert_int_equal(vm_virtio_mmio_devices(&a.virtio, slots, 8), 1);
	assert_int_equal(slots[0].base, BASE);
	assert_int_equal(slots[0].size, 0x1000);
	assert_int_equal(slots[0].gsi, 16);
	assert_int_equal(rd(&a, VIRTIO_MMIO_MAGIC_VALUE), 0x74726976);
	assert_int_equal(rd(&a, VIRTIO_MMIO_DEVICE_ID), 2);
	drive(&a);
	assert_int_equal(vm_virtio_start(&a.virtio, err, sizeof(err)), 0);
	submit_write(&a, 0, 4, 0x11);
	vm_virtio_quiesce(&a.virtio);
	assert_int_equal(used_idx(&a), 1);
	assert_int_equal(*(uint8_t *)vt_gpa(&a, STATUS), VIRTIO_BLK_S_OK);
	assert_true(rd(&a, VIRTIO_MMIO_INTERRUPT_STATUS) & 1);
	{
		struct virtio_blk_info info;

		virtio_blk_info(virtio_blk_of(disk0(&a)), &info);
		assert_int_equal(info.requests, 1);
		assert_int_equal(info.io_errors, 0);
		assert_int_equal(info.status, 15);
		assert_false(info.device_error);
		assert_string_equal(info.id, "root");
		assert_int_equal(info.path[0], '/');
	}

	/* Upgrade: state out, a new VM on the same open file, state in. */
	assert_int_equal(virtio_blk_type.capture(disk0(&a), &st, err, sizeof(err)), 0);
	assert_int_equal(st.t.q[0].last_avail, 1);
	fd = virtio_blk_of(disk0(&a))->fd;
	make_vm(&b, &spec, &fd, &st.ident, 0);
	/* The new VM's RAM is its own here; give it the rings the guest had. */
	memcpy(vt_gpa(&b, 0x100000), vt_gpa(&a, 0x100000), 0x20000);
	assert_int_equal(virtio_blk_type.restore(disk0(&b), &st, err, sizeof(err)), 0);
	assert_int_equal(rd(&b, VIRTIO_MMIO_STATUS), 15);
	vm_destroy(&a);
	assert_int_equal(vm_virtio_start(&b.virtio, err, sizeof(err)), 0);
	submit_write(&b, 1, 5, 0x22);
	vm_virtio_quiesce(&b.virtio);
	assert_int_equal(used_idx(&b), 2);
	assert_int_equal(*(uint8_t *)vt_gpa(&b, STATUS), VIRTIO_BLK_S_OK);
	vm_destroy(&b);

	fd = open(path, O_RDONLY);
	assert_int_equal(pread(fd, sector, 512, 4 * 512), 512);
	assert_int_equal(sector[0], 0x11);
	assert_int_equal(pread(fd, sector, 512, 5 * 512), 512);
	assert_int_equal(sector[511], 0x22);
	close(fd);
}

static void test_vm_virtio_refuses_a_replaced_disk(void **state)
{
	struct virtio_blk_spec spec = { .path = path };
	struct virtio_blk_state st;
	struct vm a, b;
	char other[64] = "/tmp/kvmlu-test-vmblk2-XXXXXX";
	int fd;

	(void)state;
	if (!vt_have_kvm())
		skip();
	make_vm(&a, &spec, NULL, NULL, 0);
	assert_int_equal(virtio_blk_type.capture(disk0(&a), &st, err, sizeof(err)), 0);
	vm_destroy(&a);
	/* After a kexec the path is reopened; here it is another file. */
	fd = mkstemp(other);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	close(fd);
	assert_int_equal(rename(other, path), 0);
	make_vm(&b, &spec, NULL, NULL, 0);
	assert_int_equal(virtio_blk_type.restore(disk0(&b), &st, err, sizeof(err)), -ESTALE);
	assert_non_null(strstr(err, "is not the same file"));
	vm_destroy(&b);
	/* A missing disk: the VM is not built at all. */
	unlink(path);
	make_vm(&b, &spec, NULL, NULL, -ENOENT);
	assert_non_null(strstr(err, "No such file or directory"));
}

/*
 * What crosses the upgrade wire for a disk, written by its type: the fd
 * (its index in the message's fds) and the keys an old or new VMM's
 * incoming.c parses, in the order the wire always had them.
 */
static void test_vm_virtio_blk_handover_writes_the_upgrade_wires_disk(void **state)
{
	struct virtio_blk_spec spec = { .path = path, .readonly = true };
	const struct virtio_blk *b;
	int fds[2] = { -1, -1 };
	unsigned int n = 1;
	char want[4096 + 256];
	json_object *o;
	struct vm a;

	(void)state;
	if (!vt_have_kvm())
		skip();
	snprintf(spec.id, sizeof(spec.id), "data-1");
	make_vm(&a, &spec, NULL, NULL, 0);
	b = virtio_blk_of(disk0(&a));
	assert_string_equal(virtio_blk_type.handover_key, "disks");
	o = json_object_new_object();
	assert_int_equal(virtio_blk_type.handover(disk0(&a), o, fds, &n, 2), 0);
	assert_int_equal(n, 2);
	assert_int_equal(fds[1], b->fd);
	snprintf(want, sizeof(want),
		 "{\"fd\":1,\"path\":\"%s\",\"readonly\":true,\"id\":\"data-1\",\"dev\":%llu,"
		 "\"ino\":%llu,\"size\":%llu}", b->ident.path, (unsigned long long)b->ident.dev,
		 (unsigned long long)b->ident.ino, (unsigned long long)b->ident.size);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), want);
	json_object_put(o);
	{
		/* The new process's read of it: the same disk, identity and the fd passed. */
		json_object *in = json_tokener_parse(want);
		struct vm_device_config c = { .type = &virtio_blk_type, .fd = -1 };
		const struct virtio_blk_disk_spec *d = vm_device_config_spec_c(&c);

		assert_non_null(in);
		assert_int_equal(virtio_blk_type.handover_read(in, fds, 2, 0, &c, err, sizeof(err)), 0);
		assert_int_equal(c.fd, b->fd);
		assert_string_equal(d->ident.path, b->ident.path);
		assert_true(d->readonly);
		assert_string_equal(d->id, "data-1");
		assert_true(d->ident.dev == b->ident.dev && d->ident.ino == b->ident.ino &&
			    d->ident.size == b->ident.size);
		/* An fd index past those received: refused. */
		json_object_object_add(in, "fd", json_object_new_int(2));
		assert_int_equal(virtio_blk_type.handover_read(in, fds, 2, 3, &c, err, sizeof(err)),
				 -EPROTO);
		assert_string_equal(err, "prepare: disk 3: bad fd");
		json_object_put(in);
	}
	/* No room for its fd: refused, nothing written. */
	o = json_object_new_object();
	assert_int_equal(virtio_blk_type.handover(disk0(&a), o, fds, &n, 2), -E2BIG);
	assert_int_equal(n, 2);
	assert_int_equal(json_object_object_length(o), 0);
	json_object_put(o);
	vm_destroy(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_vm_virtio_blk_serves_requests_and_moves_to_a_new_vm,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_vm_virtio_blk_handover_writes_the_upgrade_wires_disk,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_vm_virtio_refuses_a_replaced_disk, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
