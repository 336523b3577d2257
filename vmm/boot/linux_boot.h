/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `kvmlu-vmm run --kernel bzImage [--initrd F] [--append S]`: boot a Linux
 * guest. Reads the image and initrd (untrusted files: regular, bounded in
 * size, the image fully validated), plans and writes the guest's boot
 * memory (linux_load.h) and puts the boot vCPU at the 64-bit entry. The
 * other vCPUs are left as KVM creates them with the in-kernel LAPIC:
 * waiting for the INIT/SIPI that Linux sends when it brings them up.
 *
 * Lifecycle: once, after vm_create() and before vm_start(), instead of
 * payload_boot(). A restored VM skips it: its kernel is in guest RAM.
 * On error nothing has been written to guest RAM or the vCPUs.
 */
#ifndef KVMLU_VMM_LINUX_BOOT_H
#define KVMLU_VMM_LINUX_BOOT_H

#include <stddef.h>

struct vm;

/*
 * The command line without --append: the console is COM1, panics and
 * `reboot` end the VM through the keyboard controller, and the i8042
 * driver does not wait out its probe of an aux port that is not there.
 */
#define LINUX_BOOT_DEFAULT_CMDLINE "console=ttyS0 reboot=k panic=-1 i8042.noaux"
/* Largest initrd read from disk. */
#define LINUX_INITRD_MAX_SIZE	(1024u << 20)

/* cmdline NULL: LINUX_BOOT_DEFAULT_CMDLINE. initrd NULL: none. */
int linux_boot(struct vm *vm, const char *kernel, const char *initrd,
	       const char *cmdline, char *err, size_t errlen);

#endif /* KVMLU_VMM_LINUX_BOOT_H */
