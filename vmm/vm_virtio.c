// SPDX-License-Identifier: GPL-2.0
/*
 * The VM's virtio-mmio devices (see vm_virtio.h). Everything a failed
 * vm_virtio_create() did is undone by vm_virtio_destroy(), which
 * vm_destroy() runs; the ioeventfds and irqfds go with the VM fd.
 */
#include <errno.h>
#include <stdlib.h>
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
	return VM_VIRTIO_PCI_BAR_BASE + (uint64_t)i * VIRTIO_PCI_BAR_SIZE;
}

_Static_assert(VM_VIRTIO_MAX_DEVICES * VIRTIO_PCI_BAR_SIZE <= VM_VIRTIO_PCI_WINDOW_SIZE,
	       "virtio-pci BARs outside the host bridge window");
_Static_assert(VM_VIRTIO_PCI_WINDOW_BASE + VM_VIRTIO_PCI_WINDOW_SIZE <= 0xfec00000ULL,
	       "the PCI window reaches the IOAPIC page");
_Static_assert(VM_VIRTIO_MAX_DEVICES < PCI_HOST_MAX_DEVICES, "more devices than PCI slots");

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

/* KVM_IOEVENTFD: a write of datamatch (len bytes) at MMIO addr signals fd in the kernel. */
static int vm_ioeventfd(int vm_fd, uint64_t addr, uint32_t len, uint64_t datamatch, int fd,
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
		rc = vm_ioeventfd(vm_fd, s.base + d->notify_offset, 4, q, d->notify_fd[q], err,
				  errlen);
		if (rc)
			return rc;
	}
	return vm_irqfd(vm_fd, d->irq_fd, s.gsi, err, errlen);
}

/* An MSI from a device thread: into the in-kernel LAPICs, no exit. */
static int vm_signal_msi(void *ctx, uint64_t addr, uint32_t data)
{
	struct vm_virtio *vv = ctx;
	struct kvm_msi msi = {
		.address_lo = (__u32)addr, .address_hi = (__u32)(addr >> 32), .data = data,
	};

	/* > 0 delivered, 0 blocked by the guest's APIC state: both are the guest's business. */
	return ioctl(vv->vm_fd, KVM_SIGNAL_MSI, &msi) < 0 ? -errno : 0;
}

static void pci_fn_cfg_read(void *ctx, uint32_t off, uint8_t *data, unsigned int len)
{
	virtio_pci_cfg_read(ctx, off, data, len);
}

static void pci_fn_cfg_write(void *ctx, uint32_t off, const uint8_t *data, unsigned int len)
{
	virtio_pci_cfg_write(ctx, off, data, len);
}

static const struct pci_function_ops vm_virtio_pci_fn_ops = {
	.cfg_read = pci_fn_cfg_read,
	.cfg_write = pci_fn_cfg_write,
};

/* PCI class of a virtio device id: network, other mass storage, or "unclassified". */
static uint32_t virtio_pci_class(uint32_t device_id)
{
	return device_id == 1 ? 0x020000 : device_id == 2 ? 0x018000 : 0xff0000;
}

/* Device d as PCI function slot + 1: config space, BAR0 on the bus, notify as ioeventfds. */
static int vm_virtio_wire_pci(struct vm_virtio *vv, struct io_bus *bus, struct vm_device *d,
			      char *err, size_t errlen)
{
	uint64_t bar = vm_virtio_pci_bar(d->slot);
	struct virtio_pci *p;
	int rc;

	if (!d->vio)
		return kvmlu_err(err, errlen, -EINVAL, "%s: no virtio-pci for this device", d->name);
	p = calloc(1, sizeof(*p));
	if (!p)
		return kvmlu_err(err, errlen, -ENOMEM, "%s: allocate its PCI function", d->name);
	rc = virtio_pci_init(p, d->vio, virtio_pci_class(d->vio->device_id), bar, vm_signal_msi,
			     vv);
	if (rc) {
		free(p);
		return kvmlu_err(err, errlen, rc, "%s: PCI function: %s", d->name, strerror(-rc));
	}
	vv->fns[d->slot] = p;
	rc = io_bus_register(bus, IO_SPACE_MMIO, bar, VIRTIO_PCI_BAR_SIZE, &virtio_pci_bar_ops, p,
			     d->name);
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s: BAR0 at 0x%llx: %s", d->name,
				 (unsigned long long)bar, strerror(-rc));
	for (unsigned int q = 0; q < d->nr_notify; q++) {
		rc = vm_ioeventfd(vv->vm_fd, bar + VIRTIO_PCI_NOTIFY_OFF + VIRTIO_PCI_NOTIFY_MULT * q,
				  2, q, d->notify_fd[q], err, errlen);
		if (rc)
			return rc;
	}
	rc = pci_host_add(&vv->pci, d->slot + 1, &vm_virtio_pci_fn_ops, p);
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s: PCI device %u: %s", d->name, d->slot + 1,
				 strerror(-rc));
	return 0;
}

/* KVM_SIGNAL_MSI is the only way virtio-pci interrupts; say so before anything runs. */
static int vm_virtio_pci_probe(int vm_fd, char *err, size_t errlen)
{
	int r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SIGNAL_MSI);

	if (r <= 0)
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "--virtio-transport pci needs KVM_SIGNAL_MSI (KVM_CAP_SIGNAL_MSI), which this KVM does not have%s%s: use --virtio-transport mmio",
				 r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
	return 0;
}

int vm_virtio_create(struct vm_virtio *vv, const struct vm_config *cfg, int vm_fd,
		     struct io_bus *bus, const struct guestmem *mem, char *err, size_t errlen)
{
	bool pci = cfg->transport == VM_VIRTIO_TRANSPORT_PCI;
	unsigned int nr = 0;
	int rc;

	vv->transport = cfg->transport;
	vv->vm_fd = vm_fd;
	if (cfg->transport != VM_VIRTIO_TRANSPORT_MMIO && !pci)
		return kvmlu_err(err, errlen, -EINVAL, "virtio transport %d: unknown",
				 (int)cfg->transport);
	if (pci) {
		pci_host_init(&vv->pci);
		rc = vm_virtio_pci_probe(vm_fd, err, errlen);
		if (rc)
			return rc;
	}
	for (unsigned int k = 0; vm_device_types[k]; k++)
		nr += vm_device_types[k]->nr_config(cfg);
	if (nr > VM_MAX_DEVICES)
		return kvmlu_err(err, errlen, -EINVAL, "%u virtio devices: at most %u", nr,
				 VM_MAX_DEVICES);
	for (unsigned int k = 0; vm_device_types[k]; k++) {
		const struct vm_device_type *t = vm_device_types[k];
		unsigned int n = t->nr_config(cfg);

		if (n > t->max)
			return kvmlu_err(err, errlen, -EINVAL, "%u %s: at most %u", n, t->whats,
					 t->max);
		for (unsigned int i = 0; i < n; i++) {
			struct vm_device_args a = {
				.cfg = cfg, .i = i, .slot = vv->nr_devs, .mem = mem,
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
			rc = pci ? vm_virtio_wire_pci(vv, bus, d, err, errlen)
				 : vm_virtio_wire(vm_fd, bus, d, err, errlen);
			if (rc)
				return rc;
		}
	}
	if (pci) {
		rc = pci_host_attach(&vv->pci, bus);
		if (rc)
			return kvmlu_err(err, errlen, rc, "PCI host bridge at ports 0xcf8-0xcff: %s",
					 strerror(-rc));
	}
	return 0;
}

int vm_virtio_state_refusal(const struct vm_virtio *vv, char *err, size_t errlen)
{
	if (vv->transport != VM_VIRTIO_TRANSPORT_PCI || !vv->nr_devs)
		return 0;
	return kvmlu_err(err, errlen, -EOPNOTSUPP,
			 "the VM runs its virtio devices on --virtio-transport pci, whose PCI and MSI-X state the state format does not hold yet: it cannot be saved, upgraded or kept across a host update (shut it down, or run it with --virtio-transport mmio)");
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
	for (unsigned int k = 0; k < vv->nr_devs; k++) {
		/* The function lets go of the device's interrupts before the device goes. */
		if (vv->fns[k]) {
			virtio_pci_destroy(vv->fns[k]);
			free(vv->fns[k]);
			vv->fns[k] = NULL;
		}
		vv->devs[k]->type->destroy(vv->devs[k]);
		vv->devs[k] = NULL;
	}
	vv->nr_devs = 0;
	if (vv->transport == VM_VIRTIO_TRANSPORT_PCI)
		pci_host_destroy(&vv->pci);
}
