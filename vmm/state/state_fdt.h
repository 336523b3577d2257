/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VM state as a flattened device tree (libfdt), schema in
 * docs/state-format.md. state_fdt_write() turns a captured struct
 * state_vm into a blob (save-state, upgrade, prepare-update);
 * state_fdt_read() parses an untrusted blob back, refusing anything
 * malformed with an error naming the node and property, and leaves the
 * range and consistency checks to state_validate(). Only
 * state_fdt_load() (read + validate) may feed a restore.
 */
#ifndef KVMLU_STATE_FDT_H
#define KVMLU_STATE_FDT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/state/state_vm.h"

#define STATE_FDT_COMPAT_ROOT		"kvmlu,vm-state-v1"
#define STATE_FDT_COMPAT_ROOT_V2	"kvmlu,vm-state-v2"
#define STATE_FDT_COMPAT_MEMORY		"kvmlu,memory-v1"
#define STATE_FDT_COMPAT_REGION		"kvmlu,memory-region-v1"
#define STATE_FDT_COMPAT_CPUS		"kvmlu,cpus-v1"
#define STATE_FDT_COMPAT_CPU		"kvmlu,x86-vcpu-v1"
#define STATE_FDT_COMPAT_DEVICES	"kvmlu,devices-v1"
#define STATE_FDT_COMPAT_IRQCHIP	"kvmlu,kvm-irqchip-v1"
#define STATE_FDT_COMPAT_PIT		"kvmlu,kvm-pit2-v1"
#define STATE_FDT_COMPAT_KVMCLOCK	"kvmlu,kvmclock-v1"
#define STATE_FDT_COMPAT_UART		"kvmlu,uart8250-v1"
/*
 * Each device type's node has the compatible of its type (struct
 * vm_device_type, vmm/device.h): "kvmlu,virtio-blk-v1" and
 * "kvmlu,virtio-net-v1", with "kvmlu,virtqueue-split-v1" queue subnodes
 * (vmm/virtio/virtio_mmio_node.h).
 */

/* Largest blob a reader accepts: bounds what a hostile sender can make us map. */
#define STATE_FDT_MAX_SIZE	(64u << 20)

/* Serialize s; *blob is malloc'ed (free() it), *size its length. */
int state_fdt_write(const struct state_vm *s, void **blob, size_t *size,
		    char *err, size_t errlen);

/* Parse an untrusted blob into s (initialized here; state_vm_free() it). */
int state_fdt_read(const void *blob, size_t size, struct state_vm *s,
		   char *err, size_t errlen);

/*
 * state_fdt_read() then state_validate(); expect_vcpus 0 accepts any
 * count. On error s is freed and zeroed.
 */
int state_fdt_load(const void *blob, size_t size, uint32_t expect_vcpus,
		   struct state_vm *s, char *err, size_t errlen);

#endif /* KVMLU_STATE_FDT_H */
