// SPDX-License-Identifier: GPL-2.0
/*
 * What adding a device type touches: this file is a new type, "fake",
 * and its one registration line. The test's own vm_device_types (below)
 * takes the place of vmm/devices/device_types.c, which defines nothing
 * else, so the linker never takes that one from libvmm.a: the fake type
 * is listed, between the disks and the NICs, in this binary only, with
 * no hook in the VMM. Then everything that makes devices walks it,
 * unchanged:
 *  - the one list of device configs keeps slot order whatever order the
 *    entries come in (vm_device_config_add);
 *  - an upgrade's prepare message: the old process writes each type's
 *    array (upgrade_devices_write), the new one reads every array with
 *    each type's handover_read, the disks' and NICs' in the format the
 *    wire always had, the fds mapped (upgrade_devices_read);
 *  - after a kexec, each device's config is its type's reopen of its
 *    state (resume_plan_from_state);
 *  - vm_create() makes each device with its type's create, at its slot,
 *    from its entry (and adopting its fd), and vm_destroy() frees it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "vmm/device.h"
#include "vmm/devices/virtio_blk_device.h"
#include "vmm/devices/virtio_net_device.h"
#include "vmm/io_bus.h"
#include "vmm/resume/resume.h"
#include "vmm/upgrade/upgrade_devices.h"
#include "vmm/vm.h"
#include "vmm/vm_virtio.h"
#include "tests/unit/need_cap.h"

/* The fake type's spec, state and device. */
struct fake_spec {
	char name[16];
};

struct fake_state {
	uint32_t slot;
	uint64_t base;
	uint32_t gsi;
	char name[16];
};

struct fake {
	struct vm_device dev;
	char name[16];
	unsigned int i, slot;
	int fd;		/* a dup of the config's, or /dev/null opened */
	int irq_fd;
};

static unsigned int fakes_made, fakes_freed;

static struct fake *fake_of(struct vm_device *d)
{
	return (struct fake *)((char *)d - offsetof(struct fake, dev));
}

static void fake_read(void *dev, uint64_t offset, uint8_t *data, unsigned int len)
{
	(void)dev;
	(void)offset;
	memset(data, 0, len);
}

static void fake_write(void *dev, uint64_t offset, const uint8_t *data, unsigned int len)
{
	(void)dev;
	(void)offset;
	(void)data;
	(void)len;
}

static const struct io_dev_ops fake_mmio = { .read = fake_read, .write = fake_write };

static int fake_create(const struct vm_device_args *a, struct vm_device **out, char *err,
		       size_t errlen)
{
	const struct fake_spec *sp = vm_device_config_spec_c(a->c);
	struct fake *f = calloc(1, sizeof(*f));

	(void)err;
	(void)errlen;
	if (!f)
		return -ENOMEM;
	memcpy(f->name, sp->name, sizeof(f->name));
	f->name[sizeof(f->name) - 1] = '\0';
	f->i = a->i;
	f->slot = a->slot;
	f->fd = a->c->fd >= 0 ? fcntl(a->c->fd, F_DUPFD_CLOEXEC, 3)
			      : open("/dev/null", O_RDWR | O_CLOEXEC);
	f->irq_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->fd < 0 || f->irq_fd < 0) {
		if (f->fd >= 0)
			close(f->fd);
		if (f->irq_fd >= 0)
			close(f->irq_fd);
		free(f);
		return -EIO;
	}
	f->dev = (struct vm_device){ .name = f->name, .mmio_ops = &fake_mmio, .mmio_ctx = f,
				     .irq_fd = f->irq_fd };
	fakes_made++;
	*out = &f->dev;
	return 0;
}

static int fake_start(struct vm_device *d, char *err, size_t errlen)
{
	(void)d;
	(void)err;
	(void)errlen;
	return 0;
}

static void fake_nothing(struct vm_device *d)
{
	(void)d;
}

static int fake_capture(struct vm_device *d, void *state, char *err, size_t errlen)
{
	struct fake_state *s = state;

	(void)err;
	(void)errlen;
	snprintf(s->name, sizeof(s->name), "%s", fake_of(d)->name);
	return 0;
}

static int fake_restore(struct vm_device *d, const void *state, char *err, size_t errlen)
{
	(void)d;
	(void)state;
	(void)err;
	(void)errlen;
	return 0;
}

static void fake_destroy(struct vm_device *d)
{
	struct fake *f = fake_of(d);

	close(f->fd);
	close(f->irq_fd);
	free(f);
	fakes_freed++;
}

static int fake_encode(void *fdt, const void *state)
{
	(void)fdt;
	(void)state;
	return 0;
}

static int fake_decode(const struct state_node *n, void *state)
{
	(void)n;
	(void)state;
	return 0;
}

static int fake_validate(const void *state, const void *const *before, uint32_t nr_before,
			 char *err, size_t errlen)
{
	(void)state;
	(void)before;
	(void)nr_before;
	(void)err;
	(void)errlen;
	return 0;
}

static void fake_status(struct vm_device *d, struct vm_device_health *h, json_object *j)
{
	(void)h;
	json_object_object_add(j, "name", json_object_new_string(fake_of(d)->name));
}

static int fake_handover(struct vm_device *d, json_object *o, int *fds, unsigned int *nr_fds,
			 unsigned int max_fds)
{
	if (*nr_fds >= max_fds)
		return -E2BIG;
	json_object_object_add(o, "fd", json_object_new_int64((int)*nr_fds));
	fds[(*nr_fds)++] = fake_of(d)->fd;
	json_object_object_add(o, "name", json_object_new_string(fake_of(d)->name));
	return 0;
}

static int fake_handover_read(json_object *o, const int *fds, unsigned int nr_fds,
			      unsigned int i, struct vm_device_config *c, char *err,
			      size_t errlen)
{
	struct fake_spec *sp = vm_device_config_spec(c);
	json_object *v;

	c->fd = vm_device_handover_fd(o, "fd", fds, nr_fds);
	if (c->fd < 0 || !json_object_object_get_ex(o, "name", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) >= sizeof(sp->name)) {
		snprintf(err, errlen, "prepare: fake %u: bad", i);
		return -EPROTO;
	}
	snprintf(sp->name, sizeof(sp->name), "%s", json_object_get_string(v));
	return 0;
}

static void fake_reopen(const void *state, struct vm_device_config *c)
{
	const struct fake_state *s = state;
	struct fake_spec *sp = vm_device_config_spec(c);

	snprintf(sp->name, sizeof(sp->name), "%s", s->name);
}

static const struct vm_device_type fake_type = {
	.kind = "fake", .what = "fake", .whats = "fakes", .compat = "kvmlu,fake-v1",
	.format_minor = 1, .max = 4, .spec_size = sizeof(struct fake_spec),
	.create = fake_create, .start = fake_start, .quiesce = fake_nothing,
	.resume = fake_nothing, .capture = fake_capture, .restore = fake_restore,
	.destroy = fake_destroy, .status_key = "fakes", .status = fake_status,
	.handover_key = "fakes", .handover = fake_handover,
	.handover_read = fake_handover_read, .reopen = fake_reopen,
	.state_size = sizeof(struct fake_state), .encode = fake_encode, .decode = fake_decode,
	.validate = fake_validate,
	.off_slot = offsetof(struct fake_state, slot),
	.off_base = offsetof(struct fake_state, base),
	.off_gsi = offsetof(struct fake_state, gsi),
};

/* Its registration: the one line a new type adds to vmm/devices/device_types.c. */
const struct vm_device_type *const vm_device_types[] = {
	&virtio_blk_type,
	&fake_type,
	&virtio_net_type,
	NULL,
};

static char err[512];

static struct vm_device_config fake_config(const char *name, int fd)
{
	struct vm_device_config c = { .type = &fake_type, .fd = fd };
	struct fake_spec *sp = vm_device_config_spec(&c);

	memset(sp->name, 0, sizeof(sp->name));
	strncpy(sp->name, name, sizeof(sp->name) - 1);
	return c;
}

static const char *fake_name(const struct vm_device_config *c)
{
	assert_ptr_equal(c->type, &fake_type);
	return ((const struct fake_spec *)vm_device_config_spec_c(c))->name;
}

static void test_device_walk_finds_the_fake_type_by_kind(void **state)
{
	(void)state;
	assert_ptr_equal(vm_device_type_find("fake"), &fake_type);
	assert_ptr_equal(vm_device_type_find("virtio-blk"), &virtio_blk_type);
	assert_null(vm_device_type_find("virtio-fs"));
}

static void test_device_walk_config_list_keeps_slot_order(void **state)
{
	struct vm_device_config list[4], d = { .type = &virtio_blk_type, .fd = -1 };
	struct vm_device_config n = { .type = &virtio_net_type, .fd = -1 };
	struct vm_device_config c;
	const struct vm_device_type unlisted = fake_type;
	unsigned int nr = 0;

	(void)state;
	/* A NIC, a fake, a disk, a fake: disk, the fakes in their order, the NIC. */
	assert_int_equal(vm_device_config_add(list, &nr, 4, &n), 0);
	c = fake_config("f0", -1);
	assert_int_equal(vm_device_config_add(list, &nr, 4, &c), 0);
	assert_int_equal(vm_device_config_add(list, &nr, 4, &d), 0);
	c = fake_config("f1", -1);
	assert_int_equal(vm_device_config_add(list, &nr, 4, &c), 0);
	assert_int_equal(nr, 4);
	assert_ptr_equal(list[0].type, &virtio_blk_type);
	assert_string_equal(fake_name(&list[1]), "f0");
	assert_string_equal(fake_name(&list[2]), "f1");
	assert_ptr_equal(list[3].type, &virtio_net_type);
	assert_int_equal(vm_device_config_count(list, nr, &fake_type), 2);
	assert_string_equal(fake_name(vm_device_config_nth(list, nr, &fake_type, 1)), "f1");
	assert_null(vm_device_config_nth(list, nr, &fake_type, 2));
	/* Full, or a type that is not listed: refused, the list as it was. */
	assert_int_equal(vm_device_config_add(list, &nr, 4, &c), -ENOSPC);
	c.type = &unlisted;
	nr = 3;
	assert_int_equal(vm_device_config_add(list, &nr, 4, &c), -EINVAL);
	assert_int_equal(nr, 3);
}

/*
 * An upgrade: the old process's fake devices written by walking the
 * types; the new process reads them and an old VMM's disk and NIC
 * arrays, each by its type, into one list in slot order.
 */
static void test_device_walk_upgrade_writes_and_reads_every_type(void **state)
{
	struct vm_virtio vv = { .nr_devs = 0 };
	struct vm_device_config list[RESUME_MAX_DEVICES];
	int fds[8], in_fds[8];
	unsigned int nfds = 0, nr = 0;
	json_object *o, *arr;
	const char *wire;
	char *text;

	(void)state;
	for (unsigned int i = 0; i < 2; i++) {
		struct vm_device_config c = fake_config(i ? "f1" : "f0", -1);
		struct vm_device_args a = { .c = &c, .i = i, .slot = i };
		struct vm_device *d = NULL;

		assert_int_equal(fake_type.create(&a, &d, err, sizeof(err)), 0);
		d->type = &fake_type;
		d->index = i;
		vv.devs[vv.nr_devs++] = d;
	}
	o = json_object_new_object();
	fds[nfds++] = 100;	/* the message's own fds before the devices' */
	assert_int_equal(upgrade_devices_write(&vv, o, fds, &nfds, 8), 0);
	assert_int_equal(nfds, 3);
	assert_int_equal(fds[1], fake_of(vv.devs[0])->fd);
	assert_int_equal(fds[2], fake_of(vv.devs[1])->fd);
	wire = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	assert_string_equal(wire, "{\"fakes\":[{\"fd\":1,\"name\":\"f0\"},{\"fd\":2,\"name\":\"f1\"}]}");
	/* As received: what the wire carried, with an old VMM's disks and NICs. */
	text = strdup(wire);
	json_object_put(o);
	o = json_tokener_parse(text);
	assert_non_null(o);
	arr = json_tokener_parse("[{\"fd\":4,\"tap\":\"tap0\",\"bridge\":\"\",\"mac\":\"52:54:00:12:34:56\"}]");
	json_object_object_add(o, "nets", arr);
	arr = json_tokener_parse("[{\"fd\":3,\"path\":\"/img/a.raw\",\"readonly\":false,\"id\":\"a\","
				 "\"dev\":1,\"ino\":2,\"size\":512}]");
	json_object_object_add(o, "disks", arr);
	for (int i = 0; i < 8; i++)
		in_fds[i] = 40 + i;
	assert_int_equal(upgrade_devices_read(o, in_fds, 5, list, &nr, RESUME_MAX_DEVICES, err,
					      sizeof(err)), 0);
	assert_int_equal(nr, 4);
	assert_ptr_equal(list[0].type, &virtio_blk_type);
	assert_int_equal(list[0].fd, 43);
	{
		const struct virtio_blk_disk_spec *ds = vm_device_config_spec_c(&list[0]);

		assert_string_equal(ds->ident.path, "/img/a.raw");
		assert_string_equal(ds->id, "a");
		assert_true(ds->ident.dev == 1 && ds->ident.ino == 2 && ds->ident.size == 512);
	}
	assert_string_equal(fake_name(&list[1]), "f0");
	assert_int_equal(list[1].fd, 41);
	assert_string_equal(fake_name(&list[2]), "f1");
	assert_int_equal(list[2].fd, 42);
	assert_ptr_equal(list[3].type, &virtio_net_type);
	assert_int_equal(list[3].fd, 44);
	assert_string_equal(((const struct virtio_net_spec *)vm_device_config_spec_c(&list[3]))->tap,
			    "tap0");
	/* A fake naming an fd that was not received: refused by its type. */
	nr = 0;
	assert_int_equal(upgrade_devices_read(o, in_fds, 2, list, &nr, RESUME_MAX_DEVICES, err,
					      sizeof(err)), -EPROTO);
	assert_string_equal(err, "prepare: disk 0: bad fd");
	json_object_object_del(o, "disks");
	json_object_object_del(o, "nets");
	nr = 0;
	assert_int_equal(upgrade_devices_read(o, in_fds, 2, list, &nr, RESUME_MAX_DEVICES, err,
					      sizeof(err)), -EPROTO);
	assert_string_equal(err, "prepare: fake 1: bad");
	/* More devices than a VM has slots: refused by the walk. */
	nr = RESUME_MAX_DEVICES - 1;
	assert_int_equal(upgrade_devices_read(o, in_fds, 5, list, &nr, RESUME_MAX_DEVICES, err,
					      sizeof(err)), -EPROTO);
	assert_string_equal(err, "prepare: bad fakes");
	json_object_put(o);
	free(text);
	for (unsigned int k = 0; k < vv.nr_devs; k++)
		fake_type.destroy(vv.devs[k]);
}

/* After a kexec: each device of the state made a config by its type's reopen, no fd. */
static void test_device_walk_reopen_after_a_kexec(void **state)
{
	struct resume_plan p;
	struct fake_state *fs;
	struct virtio_blk_state *bs;

	(void)state;
	resume_plan_init(&p);
	assert_int_equal(state_vm_init(&p.state, 1), 0);
	p.have_state = true;
	fs = state_vm_add_device(&p.state, &fake_type);
	assert_non_null(fs);
	snprintf(fs->name, sizeof(fs->name), "kept");
	bs = state_vm_add_device(&p.state, &virtio_blk_type);
	assert_non_null(bs);
	snprintf(bs->ident.path, sizeof(bs->ident.path), "/img/b.raw");
	resume_plan_from_state(&p);
	assert_int_equal(p.nr_devs, 2);
	assert_ptr_equal(p.devs[0].type, &virtio_blk_type);
	assert_int_equal(p.devs[0].fd, -1);
	assert_string_equal(((const struct virtio_blk_disk_spec *)vm_device_config_spec_c(&p.devs[0]))
			    ->ident.path, "/img/b.raw");
	assert_string_equal(fake_name(&p.devs[1]), "kept");
	assert_int_equal(p.devs[1].fd, -1);
	resume_plan_free(&p);
}

/* vm_create(): each entry made by its type at its slot; an fd adopted; all freed. */
static void test_device_walk_vm_create_makes_each_entry(void **state)
{
	char path[] = "/tmp/kvmlu-test-walk-XXXXXX";
	struct vm_device_config list[3], c;
	struct vm_virtio_slot slots[8];
	struct vm_config cfg = {
		.name = "walk", .ram_size = 4u << 20, .nr_vcpus = 1, .backend = GUESTMEM_MEMFD,
		.serial_fd = STDERR_FILENO, .devs = list,
	};
	struct vm_device_config d = { .type = &virtio_blk_type, .fd = -1 };
	struct stat st;
	struct fake *f;
	struct vm vm;
	int fd, pipefd[2];

	(void)state;
	NEED_CAP("kvm");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	close(fd);
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	snprintf(((struct virtio_blk_disk_spec *)vm_device_config_spec(&d))->ident.path,
		 PATH_MAX, "%s", path);
	c = fake_config("f0", pipefd[0]);
	assert_int_equal(vm_device_config_add(list, &cfg.nr_devs, 3, &c), 0);
	assert_int_equal(vm_device_config_add(list, &cfg.nr_devs, 3, &d), 0);
	c = fake_config("f1", -1);
	assert_int_equal(vm_device_config_add(list, &cfg.nr_devs, 3, &c), 0);
	fakes_made = fakes_freed = 0;
	if (vm_create(&vm, &cfg, err, sizeof(err)))
		fail_msg("vm_create: %s", err);
	assert_int_equal(vm_virtio_mmio_devices(&vm.virtio, slots, 8), 3);
	assert_int_equal(fakes_made, 2);
	assert_ptr_equal(vm.virtio.devs[0]->type, &virtio_blk_type);
	f = fake_of(vm_virtio_find(&vm.virtio, &fake_type, 0));
	assert_string_equal(f->name, "f0");
	assert_int_equal(f->i, 0);
	assert_int_equal(f->slot, 1);
	assert_int_equal(f->dev.slot, 1);
	/* A dup of the entry's fd: the same pipe, another fd. */
	assert_true(f->fd != pipefd[0]);
	assert_int_equal(fstat(f->fd, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	f = fake_of(vm_virtio_find(&vm.virtio, &fake_type, 1));
	assert_string_equal(f->name, "f1");
	assert_int_equal(f->i, 1);
	assert_int_equal(f->dev.slot, 2);
	vm_destroy(&vm);
	assert_int_equal(fakes_freed, 2);
	close(pipefd[0]);
	close(pipefd[1]);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_walk_finds_the_fake_type_by_kind),
		cmocka_unit_test(test_device_walk_config_list_keeps_slot_order),
		cmocka_unit_test(test_device_walk_upgrade_writes_and_reads_every_type),
		cmocka_unit_test(test_device_walk_reopen_after_a_kexec),
		cmocka_unit_test(test_device_walk_vm_create_makes_each_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
