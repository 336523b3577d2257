// SPDX-License-Identifier: GPL-2.0
/*
 * The VM's virtio-mmio devices (see vm_virtio.h). Everything a failed
 * vm_virtio_create() did is undone by vm_virtio_destroy(), which
 * vm_destroy() runs; the ioeventfds and irqfds go with the VM fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/devices/virtio_blk_state.h"
#include "vmm/devices/virtio_net_state.h"
#include "vmm/vm.h"
#include "vmm/vm_virtio.h"

struct vm_virtio_slot vm_virtio_slot(unsigned int i)
{
	return (struct vm_virtio_slot){
		.base = VM_VIRTIO_MMIO_BASE + (uint64_t)i * VM_VIRTIO_MMIO_SIZE,
		.size = VM_VIRTIO_MMIO_SIZE,
		.gsi = VM_VIRTIO_GSI_BASE + i,
	};
}

unsigned int vm_virtio_mmio_devices(const struct vm *vm, struct vm_virtio_slot *out,
				    unsigned int max)
{
	for (unsigned int i = 0; i < vm->nr_disks + vm->nr_nets && i < max; i++)
		out[i] = vm_virtio_slot(i);
	return vm->nr_disks + vm->nr_nets;
}

/* The transport's eventfds into KVM: notify without an exit, interrupt without an ioctl. */
static int vm_virtio_wire(struct vm *vm, struct virtio_mmio *t, struct vm_virtio_slot s,
			  char *err, size_t errlen)
{
	int rc;

	for (unsigned int q = 0; q < t->nr_queues; q++) {
		rc = vm_ioeventfd(vm, s.base + VIRTIO_MMIO_QUEUE_NOTIFY, 4, q, t->kick_fd[q],
				  err, errlen);
		if (rc)
			return rc;
	}
	return vm_irqfd(vm, t->irq_fd, s.gsi, err, errlen);
}

/*
 * Disk i is the file (or device) of an earlier disk, under whatever
 * name: say so, rather than let its lock look like another VM's.
 */
static int vm_virtio_disk_twice(struct vm *vm, const struct vm_config *cfg, unsigned int i,
				char *err, size_t errlen)
{
	uint64_t dev, ino;
	struct stat st;

	if (stat(cfg->disks[i].path, &st) < 0)
		return 0;	/* virtio_blk_open() says why */
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	ino = S_ISBLK(st.st_mode) ? 0 : st.st_ino;
	for (unsigned int j = 0; j < i; j++)
		if (vm->disks[j].ident.dev == dev && vm->disks[j].ident.ino == ino)
			return kvmlu_err(err, errlen, -EINVAL,
					 "disk %s: the same %s as disk %u (%s): give each disk once",
					 cfg->disks[i].path, S_ISBLK(st.st_mode) ? "device" : "file",
					 j, cfg->disks[j].path);
	return 0;
}

/* Disk i of cfg: the old process's file on an upgrade, else opened by path. */
static int vm_virtio_open(struct vm *vm, const struct vm_config *cfg, unsigned int i,
			  char *err, size_t errlen)
{
	int fd, rc;

	if (!cfg->adopt_disk_fds) {
		rc = vm_virtio_disk_twice(vm, cfg, i, err, errlen);
		return rc ? rc : virtio_blk_open(&vm->disks[i], &cfg->disks[i], i, &vm->mem, err,
						 errlen);
	}
	/* A dup: whatever happens here, the caller's fd stays the caller's to close. */
	fd = fcntl(cfg->adopt_disk_fds[i], F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "disk %u: dup: %s", i, strerror(errno));
	rc = virtio_blk_adopt(&vm->disks[i], fd, &cfg->disks[i], &cfg->adopt_disk_idents[i], i,
			      &vm->mem, err, errlen);
	if (rc)
		close(fd);
	return rc;
}

/* NIC i of cfg: the old process's tap on an upgrade, else the tap opened (made) by name. */
static int vm_virtio_net_open(struct vm *vm, const struct vm_config *cfg, unsigned int i,
			      char *err, size_t errlen)
{
	struct virtio_net_spec spec = cfg->nets[i];
	int fd, rc;

	/* Generated once: from here the MAC travels in the state and the upgrade wire. */
	if (!spec.has_mac) {
		rc = virtio_net_mac_generate(spec.mac);
		if (rc)
			return kvmlu_err(err, errlen, rc, "tap %s: generate a MAC: %s", spec.tap,
					 strerror(-rc));
		spec.has_mac = true;
	}
	if (!cfg->adopt_net_fds)
		return virtio_net_open(&vm->nets[i], &spec, &vm->mem, err, errlen);
	fd = fcntl(cfg->adopt_net_fds[i], F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "tap %s: dup: %s", spec.tap, strerror(errno));
	rc = virtio_net_adopt(&vm->nets[i], fd, &spec, &vm->mem, err, errlen);
	if (rc)
		close(fd);
	return rc;
}

static int vm_virtio_create_nets(struct vm *vm, const struct vm_config *cfg, char *err,
				 size_t errlen)
{
	int rc;

	if (!cfg->nr_nets)
		return 0;
	vm->nets = calloc(cfg->nr_nets, sizeof(*vm->nets));
	if (!vm->nets)
		return kvmlu_err(err, errlen, -ENOMEM, "allocate %u NICs", cfg->nr_nets);
	for (unsigned int i = 0; i < cfg->nr_nets; i++) {
		struct vm_virtio_slot s = vm_virtio_slot(vm->nr_disks + i);
		struct virtio_net *n = &vm->nets[i];

		rc = vm_virtio_net_open(vm, cfg, i, err, errlen);
		if (rc)
			return rc;
		vm->nr_nets = i + 1;
		rc = io_bus_register(&vm->bus, IO_SPACE_MMIO, s.base, s.size, &virtio_mmio_ops,
				     &n->t, n->name);
		if (rc)
			return kvmlu_err(err, errlen, rc, "%s: MMIO window at 0x%llx: %s", n->name,
					 (unsigned long long)s.base, strerror(-rc));
		rc = vm_virtio_wire(vm, &n->t, s, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

int vm_virtio_create(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen)
{
	unsigned int nr = cfg->nr_disks;
	int rc;

	if (nr + cfg->nr_nets > VM_VIRTIO_MAX_DEVICES)
		return kvmlu_err(err, errlen, -EINVAL, "%u disks and %u NICs: at most %u virtio devices",
				 nr, cfg->nr_nets, VM_VIRTIO_MAX_DEVICES);
	if (!nr)
		return vm_virtio_create_nets(vm, cfg, err, errlen);
	vm->disks = calloc(nr, sizeof(*vm->disks));
	if (!vm->disks)
		return kvmlu_err(err, errlen, -ENOMEM, "allocate %u disks", nr);
	for (unsigned int i = 0; i < nr; i++) {
		struct vm_virtio_slot s = vm_virtio_slot(i);
		struct virtio_blk *b = &vm->disks[i];

		rc = vm_virtio_open(vm, cfg, i, err, errlen);
		if (rc)
			return rc;
		vm->nr_disks = i + 1;
		rc = io_bus_register(&vm->bus, IO_SPACE_MMIO, s.base, s.size, &virtio_mmio_ops,
				     &b->t, b->name);
		if (rc)
			return kvmlu_err(err, errlen, rc, "%s: MMIO window at 0x%llx: %s", b->name,
					 (unsigned long long)s.base, strerror(-rc));
		rc = vm_virtio_wire(vm, &b->t, s, err, errlen);
		if (rc)
			return rc;
	}
	return vm_virtio_create_nets(vm, cfg, err, errlen);
}

int vm_virtio_capture(struct vm *vm, struct virtio_blk_state *out, unsigned int max,
		      uint32_t *nr, char *err, size_t errlen)
{
	*nr = 0;
	if (vm->nr_disks > max)
		return kvmlu_err(err, errlen, -E2BIG, "capture: %u disks, the state holds %u",
				 vm->nr_disks, max);
	for (unsigned int i = 0; i < vm->nr_disks; i++) {
		struct vm_virtio_slot s = vm_virtio_slot(i);
		int rc = virtio_blk_get_state(&vm->disks[i], &out[i]);

		if (rc)
			return kvmlu_err(err, errlen, rc, "capture %s: %s", vm->disks[i].name,
					 rc == -EBUSY ? "a request is in flight (not quiesced)"
						      : strerror(-rc));
		out[i].slot = i;
		out[i].base = s.base;
		out[i].gsi = s.gsi;
	}
	*nr = vm->nr_disks;
	return 0;
}

int vm_virtio_restore(struct vm *vm, const struct virtio_blk_state *in, uint32_t nr,
		      char *err, size_t errlen)
{
	if (nr != vm->nr_disks)
		return kvmlu_err(err, errlen, -EINVAL, "restore: the state has %u disks, the VM %u",
				 nr, vm->nr_disks);
	for (unsigned int i = 0; i < nr; i++) {
		int rc = virtio_blk_set_state(&vm->disks[i], &in[i], err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

int vm_virtio_net_capture(struct vm *vm, struct virtio_net_state *out, unsigned int max,
			  uint32_t *nr, char *err, size_t errlen)
{
	*nr = 0;
	if (vm->nr_nets > max)
		return kvmlu_err(err, errlen, -E2BIG, "capture: %u NICs, the state holds %u",
				 vm->nr_nets, max);
	for (unsigned int i = 0; i < vm->nr_nets; i++) {
		struct vm_virtio_slot s = vm_virtio_slot(vm->nr_disks + i);
		int rc = virtio_net_get_state(&vm->nets[i], &out[i]);

		if (rc)
			return kvmlu_err(err, errlen, rc, "capture %s: %s", vm->nets[i].name,
					 rc == -EBUSY ? "a frame is in flight (not quiesced)"
						      : strerror(-rc));
		out[i].slot = vm->nr_disks + i;
		out[i].base = s.base;
		out[i].gsi = s.gsi;
	}
	*nr = vm->nr_nets;
	return 0;
}

int vm_virtio_net_restore(struct vm *vm, const struct virtio_net_state *in, uint32_t nr,
			  char *err, size_t errlen)
{
	if (nr != vm->nr_nets)
		return kvmlu_err(err, errlen, -EINVAL, "restore: the state has %u NICs, the VM %u",
				 nr, vm->nr_nets);
	for (unsigned int i = 0; i < nr; i++) {
		int rc = virtio_net_set_state(&vm->nets[i], &in[i], err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

void vm_virtio_net_info(struct vm *vm, unsigned int i, struct vm_virtio_net_info *out)
{
	struct virtio_net *n = &vm->nets[i];

	memset(out, 0, sizeof(*out));
	out->slot = vm_virtio_slot(vm->nr_disks + i);
	out->tap = n->spec.tap;
	out->bridge = n->spec.bridge;
	virtio_net_mac_format(n->spec.mac, out->mac);
	out->rx_packets = __atomic_load_n(&n->rx_packets, __ATOMIC_RELAXED);
	out->rx_bytes = __atomic_load_n(&n->rx_bytes, __ATOMIC_RELAXED);
	out->rx_dropped = __atomic_load_n(&n->rx_dropped, __ATOMIC_RELAXED);
	out->tx_packets = __atomic_load_n(&n->tx_packets, __ATOMIC_RELAXED);
	out->tx_bytes = __atomic_load_n(&n->tx_bytes, __ATOMIC_RELAXED);
	out->tx_dropped = __atomic_load_n(&n->tx_dropped, __ATOMIC_RELAXED);
	pthread_mutex_lock(&n->t.lock);
	out->status = n->t.status;
	out->device_error = n->t.broken;
	snprintf(out->error, sizeof(out->error), "%s", n->t.broken_why);
	pthread_mutex_unlock(&n->t.lock);
}

void vm_virtio_disk_info(struct vm *vm, unsigned int i, struct vm_virtio_disk_info *out)
{
	struct virtio_blk *b = &vm->disks[i];

	memset(out, 0, sizeof(*out));
	out->slot = vm_virtio_slot(i);
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

int vm_virtio_start(struct vm *vm, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < vm->nr_disks; i++) {
		int rc = virtio_blk_start(&vm->disks[i], err, errlen);

		if (rc)
			return rc;
	}
	for (unsigned int i = 0; i < vm->nr_nets; i++) {
		int rc = virtio_net_start(&vm->nets[i], err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

void vm_virtio_quiesce(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_disks; i++)
		virtio_blk_quiesce(&vm->disks[i]);
	for (unsigned int i = 0; i < vm->nr_nets; i++)
		virtio_net_quiesce(&vm->nets[i]);
}

void vm_virtio_resume(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_nets; i++)
		virtio_net_resume(&vm->nets[i]);
}

int vm_virtio_sync(struct vm *vm, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < vm->nr_disks; i++) {
		int rc = virtio_blk_sync(&vm->disks[i], err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

void vm_virtio_destroy(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_disks; i++)
		virtio_blk_close(&vm->disks[i]);
	free(vm->disks);
	vm->disks = NULL;
	vm->nr_disks = 0;
	for (unsigned int i = 0; i < vm->nr_nets; i++)
		virtio_net_close(&vm->nets[i]);
	free(vm->nets);
	vm->nets = NULL;
	vm->nr_nets = 0;
}
