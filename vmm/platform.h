/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PC devices every VM has besides its virtio devices: COM1 (the
 * guest's serial console), the test port, the reset control register
 * (0xcf9) and the i8042 keyboard controller (Linux's `reboot`). Their
 * code is in vmm/devices/ (platform.c holds the four together, struct
 * vm_platform is in vmm/devices/platform.h); the VM core makes, stops and
 * frees them through vm_platform_ops, as it does its virtio devices
 * through struct vm_device_type (device.h), and knows nothing else of
 * them. What reads or sets their state (status, the state capture, a
 * live upgrade's serial fd) is above vmm/devices/ and uses struct
 * vm_platform itself.
 *
 * Lifecycle, inside vm_create(): create (COM1 and the test port, before
 * KVM is opened), attach (every device on the VM's I/O bus, the i8042
 * made); stop whenever the VM is asked to stop; destroy last in
 * vm_destroy(), also after a failed create or attach.
 */
#ifndef KVMLU_VMM_PLATFORM_H
#define KVMLU_VMM_PLATFORM_H

#include <stddef.h>

struct io_bus;
struct vm_platform;

struct vm_platform_args {
	int serial_fd;		/* COM1's output (stdout or --serial); not owned */
	/* Raise or lower an irqchip line (COM1's IRQ 4). 0 or -errno. */
	int (*irq_line)(void *ctx, unsigned int irq, int level);
	/* The guest asked for a reset, on the vCPU thread that did; why names the port. */
	void (*on_reset)(void *ctx, const char *why);
	void *ctx;
};

struct vm_platform_ops {
	/* COM1 and the test port; *out NULL and nothing left on failure. */
	int (*create)(const struct vm_platform_args *a, struct vm_platform **out, char *err,
		      size_t errlen);
	/* Every device on bus (the i8042 made here). On failure destroy undoes it. */
	int (*attach)(struct vm_platform *p, struct io_bus *bus, char *err, size_t errlen);
	/* The VM is stopping: a waiter on the test port returns now. */
	void (*stop)(struct vm_platform *p);
	/* Close and free; NULL is nothing to do. */
	void (*destroy)(struct vm_platform *p);
};

/* vmm/devices/platform.c */
extern const struct vm_platform_ops vm_platform_ops;

#endif /* KVMLU_VMM_PLATFORM_H */
