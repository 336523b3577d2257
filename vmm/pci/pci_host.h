/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A PCI host bridge on configuration mechanism #1 (PCI 3.0 3.2.2.3.2):
 * CONFIG_ADDRESS at port 0xcf8 (32-bit), CONFIG_DATA at 0xcfc-0xcff.
 * Bus 0 only, function 0 only: device 0 is the host bridge itself (class
 * 0x0600, what Linux's conf1 sanity check looks for), devices 1..31 the
 * functions added with pci_host_add(). Anything else reads all-ones
 * (no device) and takes no writes.
 *
 * Port 0xcf9 is the reset control register of PC chipsets (a byte),
 * inside the 0xcf8 dword: pci_host_attach() takes the range a device
 * already has there (the reset port) off the bus and hands it every
 * access that is not a dword at 0xcf8 and lies inside it, as a chipset
 * does.
 *
 * Lifecycle: pci_host_init(), pci_host_add() per function, then
 * pci_host_attach() while the VM is built (the bus is read-only once
 * vCPUs run); pci_host_destroy() after the vCPUs are joined.
 */
#ifndef KVMLU_VMM_PCI_PCI_HOST_H
#define KVMLU_VMM_PCI_PCI_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/io_bus.h"

#define PCI_HOST_CONFIG_ADDRESS	0xcf8u
#define PCI_HOST_PORTS		8u	/* 0xcf8-0xcff */
#define PCI_HOST_MAX_DEVICES	32u
#define PCI_HOST_BRIDGE_VENDOR	0x1b36u	/* Red Hat, Inc. */
#define PCI_HOST_BRIDGE_DEVICE	0x0008u	/* its host bridge id */

/* One function's config space: off < 256, len 1, 2 or 4 and inside the dword. */
struct pci_function_ops {
	void (*cfg_read)(void *ctx, uint32_t off, uint8_t *data, unsigned int len);
	void (*cfg_write)(void *ctx, uint32_t off, const uint8_t *data, unsigned int len);
};

struct pci_host {
	pthread_mutex_t lock;		/* the address register and each config access */
	uint32_t address;		/* CONFIG_ADDRESS as last written */
	const struct pci_function_ops *ops[PCI_HOST_MAX_DEVICES];
	void *ctx[PCI_HOST_MAX_DEVICES];
	struct io_range inner;		/* what sat inside 0xcf8-0xcff (the reset port) */
	bool has_inner;
	bool inited;
};

void pci_host_init(struct pci_host *h);
/* Device dev (1..31) of bus 0; -EINVAL out of range, -EEXIST if taken. */
int pci_host_add(struct pci_host *h, unsigned int dev, const struct pci_function_ops *ops,
		 void *ctx);
/* Ports 0xcf8-0xcff on bus, keeping a device already inside them (above). */
int pci_host_attach(struct pci_host *h, struct io_bus *bus);
void pci_host_destroy(struct pci_host *h);

/* The port handler, for tests: off 0..7 from 0xcf8. */
void pci_host_pio_read(struct pci_host *h, uint64_t off, uint8_t *data, unsigned int len);
void pci_host_pio_write(struct pci_host *h, uint64_t off, const uint8_t *data,
			unsigned int len);

#endif /* KVMLU_VMM_PCI_PCI_HOST_H */
