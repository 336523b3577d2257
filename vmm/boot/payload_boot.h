/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Boot of a flat payload (--payload, e.g. the witness guest) per the
 * contract in include/kvmlu/payload_abi.h: image at KVMLU_PAYLOAD_ENTRY,
 * boot GDT, boot info and identity page tables written into guest RAM,
 * every vCPU put straight into 64-bit mode at the entry. Runs once, after
 * vm_create() and before vm_start(); a restored VM skips it.
 */
#ifndef KVMLU_PAYLOAD_BOOT_H
#define KVMLU_PAYLOAD_BOOT_H

#include <stddef.h>

struct vm;

int payload_boot(struct vm *vm, const char *path, char *err, size_t errlen);

#endif /* KVMLU_PAYLOAD_BOOT_H */
