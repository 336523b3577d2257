// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-blk's device type (see virtio_blk_device.h): the ops the VM
 * calls on each disk, made from its entry of the VM's device configs
 * (struct virtio_blk_disk_spec: opened by path, or the old process's fd
 * on a live upgrade), that entry read from the upgrade wire or made from
 * the disk's state after a kexec, and the disk's state node. Each op is the disk's own function (virtio_blk.c,
 * virtio_blk_io.c, virtio_blk_state.c) on the struct the vm_device is
 * embedded in.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/json_line.h"
#include "kvmlu/control_wire.h"
#include "vmm/devices/virtio_blk_device.h"
#include "vmm/devices/virtio_blk_state.h"
#include "vmm/vm_config.h"

struct virtio_blk *virtio_blk_of(struct vm_device *d)
{
	return (struct virtio_blk *)((char *)d - offsetof(struct virtio_blk, dev));
}

static const struct virtio_blk_disk_spec *disk_spec(const struct vm_device_config *c)
{
	return vm_device_config_spec_c(c);
}

/*
 * Disk i is the file (or device) of an earlier disk, under whatever
 * name: say so, rather than let its lock look like another VM's.
 */
static int blk_given_twice(const struct vm_device_args *a, char *err, size_t errlen)
{
	const char *path = disk_spec(a->c)->ident.path;
	uint64_t dev, ino;
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;	/* virtio_blk_open() says why */
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	ino = S_ISBLK(st.st_mode) ? 0 : st.st_ino;
	for (unsigned int k = 0; k < a->nr_devs; k++) {
		const struct vm_device_config *oc;
		struct virtio_blk *o;

		if (a->devs[k]->type != &virtio_blk_type)
			continue;
		o = virtio_blk_of(a->devs[k]);
		oc = vm_device_config_nth(a->cfg->devs, a->cfg->nr_devs, &virtio_blk_type,
					  a->devs[k]->index);
		if (o->ident.dev == dev && o->ident.ino == ino)
			return kvmlu_err(err, errlen, -EINVAL,
					 "disk %s: the same %s as disk %u (%s): give each disk once",
					 path, S_ISBLK(st.st_mode) ? "device" : "file",
					 a->devs[k]->index, oc ? disk_spec(oc)->ident.path : o->ident.path);
	}
	return 0;
}

/* The disk of its config: the old process's file on an upgrade, else opened by path. */
static int blk_open(struct virtio_blk *b, const struct vm_device_args *a, char *err,
		    size_t errlen)
{
	const struct virtio_blk_disk_spec *d = disk_spec(a->c);
	struct virtio_blk_spec spec = { .path = d->ident.path, .readonly = d->readonly };
	int fd, rc;

	memcpy(spec.id, d->id, sizeof(spec.id));
	spec.id[VIRTIO_BLK_ID_MAX] = '\0';
	if (a->c->fd < 0) {
		rc = blk_given_twice(a, err, errlen);
		return rc ? rc : virtio_blk_open(b, &spec, a->i, a->mem, err, errlen);
	}
	/* A dup: whatever happens here, the caller's fd stays the caller's to close. */
	fd = fcntl(a->c->fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "disk %u: dup: %s", a->i, strerror(errno));
	rc = virtio_blk_adopt(b, fd, &spec, &d->ident, a->i, a->mem, err, errlen);
	if (rc)
		close(fd);
	return rc;
}

static int blk_create(const struct vm_device_args *a, struct vm_device **out, char *err,
		      size_t errlen)
{
	struct virtio_blk *b = calloc(1, sizeof(*b));
	int rc;

	if (!b)
		return kvmlu_err(err, errlen, -ENOMEM, "allocate disk %u", a->i);
	rc = blk_open(b, a, err, errlen);
	if (rc) {
		free(b);
		return rc;
	}
	b->dev = (struct vm_device){
		.name = b->name, .mmio_ops = &virtio_mmio_ops, .mmio_ctx = &b->t,
		.vio = &b->t, .notify_offset = VIRTIO_MMIO_QUEUE_NOTIFY, .nr_notify = b->t.nr_queues,
		.notify_fd = b->t.kick_fd, .irq_fd = b->t.irq_fd,
	};
	*out = &b->dev;
	return 0;
}

static int blk_start(struct vm_device *d, char *err, size_t errlen)
{
	return virtio_blk_start(virtio_blk_of(d), err, errlen);
}

static void blk_quiesce(struct vm_device *d)
{
	virtio_blk_quiesce(virtio_blk_of(d));
}

static void blk_resume(struct vm_device *d)
{
	device_thread_resume(&virtio_blk_of(d)->io);
}

static int blk_sync(struct vm_device *d, char *err, size_t errlen)
{
	return virtio_blk_sync(virtio_blk_of(d), err, errlen);
}

static int blk_capture(struct vm_device *d, void *state, char *err, size_t errlen)
{
	struct virtio_blk *b = virtio_blk_of(d);
	int rc = virtio_blk_get_state(b, state);

	if (rc)
		return kvmlu_err(err, errlen, rc, "capture %s: %s", b->name,
				 rc == -EBUSY ? "a request is in flight (not quiesced)"
					      : strerror(-rc));
	return 0;
}

static int blk_restore(struct vm_device *d, const void *state, char *err, size_t errlen)
{
	return virtio_blk_set_state(virtio_blk_of(d), state, err, errlen);
}

static void blk_destroy(struct vm_device *d)
{
	struct virtio_blk *b = virtio_blk_of(d);

	virtio_blk_close(b);
	free(b);
}

static int blk_validate(const void *state, const void *const *before, uint32_t nr_before,
			char *err, size_t errlen)
{
	(void)before;
	(void)nr_before;
	return virtio_blk_state_validate(state, err, errlen);
}

static void blk_status(struct vm_device *dev, struct vm_device_health *h, json_object *j)
{
	struct virtio_blk_info d;

	virtio_blk_info(virtio_blk_of(dev), &d);
	h->driver_status = d.status;
	h->device_error = d.device_error;
	snprintf(h->error, sizeof(h->error), "%s", d.error);
	json_object_object_add(j, KVMLU_KEY_ID, json_object_new_string(d.id));
	json_object_object_add(j, KVMLU_KEY_PATH, json_object_new_string(d.path));
	/* The agent's preflight checks the path still names this file. */
	json_object_object_add(j, KVMLU_KEY_DEV, json_line_new_u64(d.dev));
	json_object_object_add(j, KVMLU_KEY_INO, json_line_new_u64(d.ino));
	json_object_object_add(j, KVMLU_KEY_SIZE, json_line_new_u64(d.size));
	/* Read from the open file now: truncated, grown or deleted under the VM. */
	json_object_object_add(j, KVMLU_KEY_SIZE_NOW, d.now.known ? json_line_new_u64(d.now.size) : NULL);
	json_object_object_add(j, KVMLU_KEY_DELETED, json_object_new_boolean(d.now.deleted));
	json_object_object_add(j, KVMLU_KEY_PROBLEM, d.now.problem[0] ?
			       json_object_new_string(d.now.problem) : NULL);
	json_object_object_add(j, KVMLU_KEY_READONLY, json_object_new_boolean(d.readonly));
	json_object_object_add(j, KVMLU_KEY_REQUESTS, json_line_new_u64(d.requests));
	json_object_object_add(j, KVMLU_KEY_IO_ERRORS, json_line_new_u64(d.io_errors));
}

/* The upgrade wire's disk: its fd, what it was opened as, and its identity. */
static int blk_handover(struct vm_device *dev, json_object *d, int *fds, unsigned int *nr_fds,
			unsigned int max_fds)
{
	const struct virtio_blk *b = virtio_blk_of(dev);

	if (*nr_fds >= max_fds)
		return -E2BIG;
	json_object_object_add(d, "fd", json_object_new_int64((int)*nr_fds));
	fds[(*nr_fds)++] = b->fd;
	json_object_object_add(d, "path", json_object_new_string(b->ident.path));
	json_object_object_add(d, "readonly", json_object_new_boolean(b->readonly));
	json_object_object_add(d, "id", json_object_new_string(b->id));
	json_object_object_add(d, "dev", json_line_new_u64(b->ident.dev));
	json_object_object_add(d, "ino", json_line_new_u64(b->ident.ino));
	json_object_object_add(d, "size", json_line_new_u64(b->ident.size));
	return 0;
}

static bool get_u64_field(json_object *o, const char *key, uint64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return false;
	*out = (uint64_t)json_object_get_int64(v);
	return true;
}

/* The new process's read of blk_handover's object (the wire's format, old and new). */
static int blk_handover_read(json_object *o, const int *fds, unsigned int nr_fds, unsigned int i,
			     struct vm_device_config *c, char *err, size_t errlen)
{
	struct virtio_blk_disk_spec *d = vm_device_config_spec(c);
	json_object *v;
	const char *str;

	c->fd = vm_device_handover_fd(o, "fd", fds, nr_fds);
	if (c->fd < 0)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %u: bad fd", i);
	if (!json_object_object_get_ex(o, "path", &v) || !json_object_is_type(v, json_type_string) ||
	    (str = json_object_get_string(v))[0] != '/' || strlen(str) >= sizeof(d->ident.path))
		return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %u: bad path", i);
	snprintf(d->ident.path, sizeof(d->ident.path), "%s", str);
	if (!json_object_object_get_ex(o, "readonly", &v) ||
	    !json_object_is_type(v, json_type_boolean))
		return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %u: bad readonly", i);
	d->readonly = json_object_get_boolean(v);
	if (!json_object_object_get_ex(o, "id", &v) || !json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) > VIRTIO_BLK_ID_MAX)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %u: bad id", i);
	snprintf(d->id, sizeof(d->id), "%s", json_object_get_string(v));
	if (!get_u64_field(o, "dev", &d->ident.dev) || !get_u64_field(o, "ino", &d->ident.ino) ||
	    !get_u64_field(o, "size", &d->ident.size))
		return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %u: bad identity", i);
	return 0;
}

/*
 * After a kexec: opened again by the path recorded at pause (absolute);
 * blk_restore then refuses a disk that is not the one recorded (device,
 * inode, size), and the VM is held, not run on it.
 */
static void blk_reopen(const void *state, struct vm_device_config *c)
{
	const struct virtio_blk_state *s = state;
	struct virtio_blk_disk_spec *d = vm_device_config_spec(c);

	d->ident = s->ident;
	d->readonly = s->readonly;
	snprintf(d->id, sizeof(d->id), "%s", s->id);
}

_Static_assert(sizeof(struct virtio_blk_disk_spec) <= VM_DEVICE_SPEC_MAX,
	       "a disk's spec must fit a device config");
_Static_assert(sizeof(struct virtio_blk_state) <= VM_DEVICE_STATE_MAX,
	       "a disk's state must fit a state's device slot");

const struct vm_device_type virtio_blk_type = {
	.kind = "virtio-blk", .what = "disk", .whats = "disks",
	.compat = "kvmlu,virtio-blk-v1", .format_minor = 0, .max = VM_MAX_DEVICES,
	.spec_size = sizeof(struct virtio_blk_disk_spec), .create = blk_create, .start = blk_start,
	.quiesce = blk_quiesce, .resume = blk_resume, .sync = blk_sync,
	.capture = blk_capture, .restore = blk_restore, .destroy = blk_destroy,
	.state_size = sizeof(struct virtio_blk_state),
	.encode = virtio_blk_state_encode, .decode = virtio_blk_state_decode,
	.validate = blk_validate,
	.status_key = KVMLU_KEY_DISKS, .status = blk_status,
	.handover_key = "disks", .handover = blk_handover,
	.handover_read = blk_handover_read, .reopen = blk_reopen,
	.off_slot = offsetof(struct virtio_blk_state, slot),
	.off_base = offsetof(struct virtio_blk_state, base),
	.off_gsi = offsetof(struct virtio_blk_state, gsi),
};

void virtio_blk_info(struct virtio_blk *b, struct virtio_blk_info *out)
{
	memset(out, 0, sizeof(*out));
	out->id = b->id;
	out->path = b->ident.path;
	out->dev = b->ident.dev;
	out->ino = b->ident.ino;
	out->size = b->ident.size;
	virtio_blk_now(b, &out->now);
	out->readonly = b->readonly;
	out->requests = __atomic_load_n(&b->requests, __ATOMIC_RELAXED);
	out->io_errors = __atomic_load_n(&b->io_errors, __ATOMIC_RELAXED);
	pthread_mutex_lock(&b->t.lock);
	out->status = b->t.status;
	out->device_error = b->t.broken;
	snprintf(out->error, sizeof(out->error), "%s", b->t.broken_why);
	pthread_mutex_unlock(&b->t.lock);
}
