// SPDX-License-Identifier: GPL-2.0
/* The VM's virtio-pci transport (see virtio_pci_vm.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/err.h"
#include "kvmlu/kvm_uapi.h"
#include "vmm/virtio/virtio_pci_vm.h"

/* An MSI from a device thread: into the in-kernel LAPICs, no exit. */
static int pci_signal_msi(void *ctx, uint64_t addr, uint32_t data)
{
	struct vm_virtio_pci *vp = ctx;
	struct kvm_msi msi = {
		.address_lo = (__u32)addr, .address_hi = (__u32)(addr >> 32), .data = data,
	};

	/* > 0 delivered, 0 blocked by the guest's APIC state: both are the guest's business. */
	return ioctl(vp->vm_fd, KVM_SIGNAL_MSI, &msi) < 0 ? -errno : 0;
}

static void fn_cfg_read(void *ctx, uint32_t off, uint8_t *data, unsigned int len)
{
	virtio_pci_cfg_read(ctx, off, data, len);
}

static void fn_cfg_write(void *ctx, uint32_t off, const uint8_t *data, unsigned int len)
{
	virtio_pci_cfg_write(ctx, off, data, len);
}

static const struct pci_function_ops fn_ops = {
	.cfg_read = fn_cfg_read,
	.cfg_write = fn_cfg_write,
};

/* PCI class of a virtio device id: network, other mass storage, or "unclassified". */
static uint32_t pci_class(uint32_t device_id)
{
	return device_id == 1 ? 0x020000 : device_id == 2 ? 0x018000 : 0xff0000;
}

struct virtio_pci *vm_virtio_pci_fn(const struct vm_virtio *vv, unsigned int slot)
{
	return vv->pci && slot < VM_MAX_DEVICES ? vv->pci->fns[slot] : NULL;
}

/* KVM_SIGNAL_MSI is the only way its interrupts go; say so before anything runs. */
static int pci_create(struct vm_virtio *vv, int vm_fd, char *err, size_t errlen)
{
	int r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SIGNAL_MSI);

	if (r <= 0)
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "--virtio-transport pci needs KVM_SIGNAL_MSI (KVM_CAP_SIGNAL_MSI), which this KVM does not have%s%s: use --virtio-transport mmio",
				 r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
	vv->pci = calloc(1, sizeof(*vv->pci));
	if (!vv->pci)
		return kvmlu_err(err, errlen, -ENOMEM, "allocate the PCI bus");
	vv->pci->vm_fd = vm_fd;
	pci_host_init(&vv->pci->host);
	return 0;
}

static int pci_wire(struct vm_virtio *vv, struct io_bus *bus, struct vm_device *d, char *err,
		    size_t errlen)
{
	struct vm_virtio_pci *vp = vv->pci;
	uint64_t bar = vm_virtio_pci_bar(d->slot);
	struct virtio_pci *p;
	int rc;

	if (!d->vio)
		return kvmlu_err(err, errlen, -EINVAL, "%s: no virtio-pci for this device", d->name);
	p = calloc(1, sizeof(*p));
	if (!p)
		return kvmlu_err(err, errlen, -ENOMEM, "%s: allocate its PCI function", d->name);
	rc = virtio_pci_init(p, d->vio, pci_class(d->vio->device_id), bar, pci_signal_msi, vp);
	if (rc) {
		free(p);
		return kvmlu_err(err, errlen, rc, "%s: PCI function: %s", d->name, strerror(-rc));
	}
	vp->fns[d->slot] = p;
	rc = io_bus_register(bus, IO_SPACE_MMIO, bar, VIRTIO_PCI_BAR_SIZE, &virtio_pci_bar_ops, p,
			     d->name);
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s: BAR0 at 0x%llx: %s", d->name,
				 (unsigned long long)bar, strerror(-rc));
	for (unsigned int q = 0; q < d->nr_notify; q++) {
		rc = vm_virtio_ioeventfd(vp->vm_fd,
					 bar + VIRTIO_PCI_NOTIFY_OFF + VIRTIO_PCI_NOTIFY_MULT * q, 2,
					 q, d->notify_fd[q], err, errlen);
		if (rc)
			return rc;
	}
	rc = pci_host_add(&vp->host, d->slot + 1, &fn_ops, p);
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s: PCI device %u: %s", d->name, d->slot + 1,
				 strerror(-rc));
	return 0;
}

static int pci_attach(struct vm_virtio *vv, struct io_bus *bus, char *err, size_t errlen)
{
	int rc = pci_host_attach(&vv->pci->host, bus);

	if (rc)
		return kvmlu_err(err, errlen, rc, "PCI host bridge at ports 0xcf8-0xcff: %s",
				 strerror(-rc));
	return 0;
}

static void pci_destroy(struct vm_virtio *vv)
{
	struct vm_virtio_pci *vp = vv->pci;

	for (unsigned int k = 0; k < VM_MAX_DEVICES; k++) {
		if (!vp->fns[k])
			continue;
		virtio_pci_destroy(vp->fns[k]);
		free(vp->fns[k]);
	}
	pci_host_destroy(&vp->host);
	free(vp);
	vv->pci = NULL;
}

const struct vm_virtio_pci_ops vm_virtio_pci_ops = {
	.create = pci_create,
	.wire = pci_wire,
	.attach = pci_attach,
	.destroy = pci_destroy,
};
