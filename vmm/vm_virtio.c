// SPDX-License-Identifier: GPL-2.0
/*
 * The VM's virtio-mmio devices (see vm_virtio.h). Everything a failed
 * vm_virtio_create() did is undone by vm_virtio_destroy(), which
 * vm_destroy() runs; the ioeventfds and irqfds go with the VM fd.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/err.h"
#include "kvmlu/kvm_uapi.h"
#include "guestmem/guestmem.h"
#include "vmm/io_bus.h"
#include "vmm/vm_virtio.h"

struct vm_virtio_slot vm_virtio_slot(unsigned int i)
{
	return (struct vm_virtio_slot){
		.base = VM_VIRTIO_MMIO_BASE + (uint64_t)i * VM_VIRTIO_MMIO_SIZE,
		.size = VM_VIRTIO_MMIO_SIZE,
		.gsi = VM_VIRTIO_GSI_BASE + i,
	};
}

uint64_t vm_virtio_pci_bar(unsigned int i)
{
	return VM_VIRTIO_PCI_BAR_BASE + (uint64_t)i * VM_VIRTIO_PCI_BAR_SIZE;
}

_Static_assert(VM_VIRTIO_MAX_DEVICES * VM_VIRTIO_PCI_BAR_SIZE <= VM_VIRTIO_PCI_WINDOW_SIZE,
	       "virtio-pci BARs outside the host bridge window");
_Static_assert(VM_VIRTIO_PCI_WINDOW_BASE + VM_VIRTIO_PCI_WINDOW_SIZE <= 0xfec00000ULL,
	       "the PCI window reaches the IOAPIC page");

unsigned int vm_virtio_mmio_devices(const struct vm_virtio *vv, struct vm_virtio_slot *out,
				    unsigned int max)
{
	if (vv->transport != VM_VIRTIO_TRANSPORT_MMIO)
		return 0;
	for (unsigned int i = 0; i < vv->nr_devs && i < max; i++)
		out[i] = vm_virtio_slot(i);
	return vv->nr_devs;
}

struct vm_device *vm_virtio_find(const struct vm_virtio *vv, const struct vm_device_type *t,
				 unsigned int i)
{
	for (unsigned int k = 0; k < vv->nr_devs; k++)
		if (vv->devs[k]->type == t && vv->devs[k]->index == i)
			return vv->devs[k];
	return NULL;
}

unsigned int vm_virtio_count(const struct vm_virtio *vv, const struct vm_device_type *t)
{
	unsigned int n = 0;

	for (unsigned int k = 0; k < vv->nr_devs; k++)
		n += vv->devs[k]->type == t;
	return n;
}

int vm_virtio_ioeventfd(int vm_fd, uint64_t addr, uint32_t len, uint64_t datamatch, int fd,
			char *err, size_t errlen)
{
	struct kvm_ioeventfd io = {
		.datamatch = datamatch, .addr = addr, .len = len, .fd = fd,
		.flags = KVM_IOEVENTFD_FLAG_DATAMATCH,
	};

	if (ioctl(vm_fd, KVM_IOEVENTFD, &io) < 0)
		return kvmlu_err(err, errlen, -errno, "KVM_IOEVENTFD at 0x%llx (value %llu): %s",
				 (unsigned long long)addr, (unsigned long long)datamatch,
				 strerror(errno));
	return 0;
}

/* KVM_IRQFD: a write to fd is an edge on gsi of the in-kernel irqchip. */
static int vm_irqfd(int vm_fd, int fd, uint32_t gsi, char *err, size_t errlen)
{
	struct kvm_irqfd irq = { .fd = (__u32)fd, .gsi = gsi };

	if (ioctl(vm_fd, KVM_IRQFD, &irq) < 0)
		return kvmlu_err(err, errlen, -errno, "KVM_IRQFD on GSI %u: %s", gsi,
				 strerror(errno));
	return 0;
}

/* The device's window on the bus, its eventfds into KVM: notify without an exit, interrupt without an ioctl. */
static int vm_virtio_wire(int vm_fd, struct io_bus *bus, struct vm_device *d, char *err, size_t errlen)
{
	struct vm_virtio_slot s = vm_virtio_slot(d->slot);
	int rc;

	rc = io_bus_register(bus, IO_SPACE_MMIO, s.base, s.size, d->mmio_ops, d->mmio_ctx,
			     d->name);
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s: MMIO window at 0x%llx: %s", d->name,
				 (unsigned long long)s.base, strerror(-rc));
	for (unsigned int q = 0; q < d->nr_notify; q++) {
		rc = vm_virtio_ioeventfd(vm_fd, s.base + d->notify_offset, 4, q, d->notify_fd[q], err,
				  errlen);
		if (rc)
			return rc;
	}
	return vm_irqfd(vm_fd, d->irq_fd, s.gsi, err, errlen);
}

int vm_virtio_create(struct vm_virtio *vv, const struct vm_config *cfg, int vm_fd,
		     struct io_bus *bus, const struct guestmem *mem, char *err, size_t errlen)
{
	bool pci = cfg->transport == VM_VIRTIO_TRANSPORT_PCI;
	unsigned int nr = 0;
	int rc;

	vv->transport = cfg->transport;
	if (cfg->transport != VM_VIRTIO_TRANSPORT_MMIO && !pci)
		return kvmlu_err(err, errlen, -EINVAL, "virtio transport %d: unknown",
				 (int)cfg->transport);
	if (pci) {
		rc = vm_virtio_pci_ops.create(vv, vm_fd, err, errlen);
		if (rc)
			return rc;
	}
	if (cfg->nr_devs > VM_MAX_DEVICES)
		return kvmlu_err(err, errlen, -EINVAL, "%u virtio devices: at most %u", cfg->nr_devs,
				 VM_MAX_DEVICES);
	for (unsigned int k = 0; vm_device_types[k]; k++)
		nr += vm_device_config_count(cfg->devs, cfg->nr_devs, vm_device_types[k]);
	if (nr != cfg->nr_devs)
		return kvmlu_err(err, errlen, -EINVAL, "%u of %u virtio devices of no known type",
				 cfg->nr_devs - nr, cfg->nr_devs);
	/* By type, then in the list's order: the slot order, whatever order the list is in. */
	for (unsigned int k = 0; vm_device_types[k]; k++) {
		const struct vm_device_type *t = vm_device_types[k];
		unsigned int n = vm_device_config_count(cfg->devs, cfg->nr_devs, t);

		if (n > t->max)
			return kvmlu_err(err, errlen, -EINVAL, "%u %s: at most %u", n, t->whats,
					 t->max);
		for (unsigned int i = 0; i < n; i++) {
			struct vm_device_args a = {
				.cfg = cfg, .c = vm_device_config_nth(cfg->devs, cfg->nr_devs, t, i),
				.i = i, .slot = vv->nr_devs, .mem = mem,
				.devs = vv->devs, .nr_devs = vv->nr_devs,
			};
			struct vm_device *d = NULL;

			rc = t->create(&a, &d, err, errlen);
			if (rc)
				return rc;
			d->type = t;
			d->slot = vv->nr_devs;
			d->index = i;
			vv->devs[vv->nr_devs++] = d;
			rc = pci ? vm_virtio_pci_ops.wire(vv, bus, d, err, errlen)
				 : vm_virtio_wire(vm_fd, bus, d, err, errlen);
			if (rc)
				return rc;
		}
	}
	if (pci)
		return vm_virtio_pci_ops.attach(vv, bus, err, errlen);
	return 0;
}

int vm_virtio_start(struct vm_virtio *vv, char *err, size_t errlen)
{
	for (unsigned int k = 0; k < vv->nr_devs; k++) {
		int rc = vv->devs[k]->type->start(vv->devs[k], err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

void vm_virtio_quiesce(struct vm_virtio *vv)
{
	for (unsigned int k = 0; k < vv->nr_devs; k++)
		vv->devs[k]->type->quiesce(vv->devs[k]);
}

void vm_virtio_resume(struct vm_virtio *vv)
{
	for (unsigned int k = 0; k < vv->nr_devs; k++)
		vv->devs[k]->type->resume(vv->devs[k]);
}

int vm_virtio_sync(struct vm_virtio *vv, char *err, size_t errlen)
{
	for (unsigned int k = 0; k < vv->nr_devs; k++) {
		struct vm_device *d = vv->devs[k];
		int rc = d->type->sync ? d->type->sync(d, err, errlen) : 0;

		if (rc)
			return rc;
	}
	return 0;
}

void vm_virtio_destroy(struct vm_virtio *vv)
{
	/* The PCI functions let go of the devices' interrupts before the devices go. */
	if (vv->pci)
		vm_virtio_pci_ops.destroy(vv);
	for (unsigned int k = 0; k < vv->nr_devs; k++) {
		vv->devs[k]->type->destroy(vv->devs[k]);
		vv->devs[k] = NULL;
	}
	vv->nr_devs = 0;
}
