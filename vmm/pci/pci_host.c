// SPDX-License-Identifier: GPL-2.0
/* PCI host bridge on configuration mechanism #1 (see pci_host.h). */
#include <errno.h>
#include <string.h>

#include "vmm/pci/pci_host.h"

#define ADDR_ENABLE	0x80000000u

static void host_read(void *dev, uint64_t off, uint8_t *data, unsigned int len)
{
	pci_host_pio_read(dev, off, data, len);
}

static void host_write(void *dev, uint64_t off, const uint8_t *data, unsigned int len)
{
	pci_host_pio_write(dev, off, data, len);
}

static const struct io_dev_ops pci_host_ops = {
	.read = host_read,
	.write = host_write,
};

/* Device 0: the host bridge, a read-only header of class 0x060000. */
static void bridge_read(void *ctx, uint32_t off, uint8_t *data, unsigned int len)
{
	uint8_t cfg[64] = { 0 };

	(void)ctx;
	cfg[0] = (uint8_t)PCI_HOST_BRIDGE_VENDOR;
	cfg[1] = (uint8_t)(PCI_HOST_BRIDGE_VENDOR >> 8);
	cfg[2] = (uint8_t)PCI_HOST_BRIDGE_DEVICE;
	cfg[3] = (uint8_t)(PCI_HOST_BRIDGE_DEVICE >> 8);
	cfg[0x0b] = 0x06;	/* bridge */
	cfg[0x0a] = 0x00;	/* host */
	for (unsigned int i = 0; i < len; i++)
		data[i] = off + i < sizeof(cfg) ? cfg[off + i] : 0;
}

static void bridge_write(void *ctx, uint32_t off, const uint8_t *data, unsigned int len)
{
	(void)ctx;
	(void)off;
	(void)data;
	(void)len;
}

static const struct pci_function_ops bridge_ops = {
	.cfg_read = bridge_read,
	.cfg_write = bridge_write,
};

void pci_host_init(struct pci_host *h)
{
	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	h->ops[0] = &bridge_ops;
	h->inited = true;
}

void pci_host_destroy(struct pci_host *h)
{
	if (!h->inited)
		return;
	pthread_mutex_destroy(&h->lock);
	h->inited = false;
}

int pci_host_add(struct pci_host *h, unsigned int dev, const struct pci_function_ops *ops,
		 void *ctx)
{
	if (dev == 0 || dev >= PCI_HOST_MAX_DEVICES || !ops || !ops->cfg_read || !ops->cfg_write)
		return -EINVAL;
	if (h->ops[dev])
		return -EEXIST;
	h->ops[dev] = ops;
	h->ctx[dev] = ctx;
	return 0;
}

int pci_host_attach(struct pci_host *h, struct io_bus *bus)
{
	struct io_range r;
	int rc;

	for (uint64_t a = PCI_HOST_CONFIG_ADDRESS; a < PCI_HOST_CONFIG_ADDRESS + PCI_HOST_PORTS;
	     a++) {
		if (io_bus_unregister(bus, IO_SPACE_PIO, a, &r) == 0) {
			if (h->has_inner) {
				/* One inner device is all we pass on; give it back. */
				io_bus_register(bus, IO_SPACE_PIO, r.base, r.len, r.ops, r.dev,
						r.name);
				return -EEXIST;
			}
			h->inner = r;
			h->has_inner = true;
		}
	}
	rc = io_bus_register(bus, IO_SPACE_PIO, PCI_HOST_CONFIG_ADDRESS, PCI_HOST_PORTS,
			     &pci_host_ops, h, "pci-conf1");
	if (rc && h->has_inner) {
		io_bus_register(bus, IO_SPACE_PIO, h->inner.base, h->inner.len, h->inner.ops,
				h->inner.dev, h->inner.name);
		h->has_inner = false;
	}
	return rc;
}

/* The inner device's access, if it lies wholly in its range. */
static bool to_inner(struct pci_host *h, uint64_t off, uint8_t *data, unsigned int len,
		     bool is_write)
{
	uint64_t port = PCI_HOST_CONFIG_ADDRESS + off;
	const struct io_range *r = &h->inner;

	if (!h->has_inner || port < r->base || port + len > r->base + r->len)
		return false;
	if (is_write) {
		if (r->ops->write)
			r->ops->write(r->dev, port - r->base, data, len);
	} else if (r->ops->read) {
		r->ops->read(r->dev, port - r->base, data, len);
	} else {
		memset(data, 0xff, len);
	}
	return true;
}

/* The function CONFIG_ADDRESS names, or NULL (disabled, another bus or function). */
static const struct pci_function_ops *target(struct pci_host *h, void **ctx, uint32_t *reg)
{
	uint32_t a = h->address;
	unsigned int bus = (a >> 16) & 0xff, dev = (a >> 11) & 0x1f, fn = (a >> 8) & 7;

	/* Bits 30:24 are reserved (some chipsets put extended registers there). */
	if (!(a & ADDR_ENABLE) || (a & 0x7f000000u) || bus || fn || !h->ops[dev])
		return NULL;
	*ctx = h->ctx[dev];
	*reg = a & 0xfc;
	return h->ops[dev];
}

void pci_host_pio_read(struct pci_host *h, uint64_t off, uint8_t *data, unsigned int len)
{
	const struct pci_function_ops *ops;
	uint32_t reg;
	void *ctx;

	memset(data, 0xff, len);
	if (off >= PCI_HOST_PORTS || len > PCI_HOST_PORTS - off)
		return;
	pthread_mutex_lock(&h->lock);
	if (off == 0 && len == 4) {
		memcpy(data, &h->address, 4);
	} else if (off >= 4) {
		ops = target(h, &ctx, &reg);
		if (ops)
			ops->cfg_read(ctx, reg + (uint32_t)(off - 4), data, len);
	} else {
		to_inner(h, off, data, len, false);
	}
	pthread_mutex_unlock(&h->lock);
}

void pci_host_pio_write(struct pci_host *h, uint64_t off, const uint8_t *data,
			unsigned int len)
{
	const struct pci_function_ops *ops;
	uint8_t buf[8];
	uint32_t reg;
	void *ctx;

	if (off >= PCI_HOST_PORTS || len > PCI_HOST_PORTS - off)
		return;
	pthread_mutex_lock(&h->lock);
	if (off == 0 && len == 4) {
		memcpy(&h->address, data, 4);
		/* Bits 1:0 read as 0 (type 0 cycles only). */
		h->address &= ~3u;
	} else if (off >= 4) {
		ops = target(h, &ctx, &reg);
		if (ops)
			ops->cfg_write(ctx, reg + (uint32_t)(off - 4), data, len);
	} else {
		memcpy(buf, data, len);
		to_inner(h, off, buf, len, true);
	}
	pthread_mutex_unlock(&h->lock);
}
