/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PC devices of one VM (vmm/platform.h says what they are and how
 * the VM core makes them). For what reads or sets them from above:
 * `status` (COM1's byte count), guest-verify (the test port), the state
 * capture (COM1's registers), a live upgrade (COM1's output fd).
 */
#ifndef KVMLU_VMM_DEVICES_PLATFORM_H
#define KVMLU_VMM_DEVICES_PLATFORM_H

#include "vmm/devices/i8042.h"
#include "vmm/devices/reset_port.h"
#include "vmm/devices/test_port.h"
#include "vmm/devices/uart8250.h"
#include "vmm/platform.h"

struct vm_platform {
	struct uart8250 uart;
	struct test_port test_port;
	struct reset_port reset;
	struct i8042 kbc;	/* ports 0x60/0x64: Linux `reboot` (vmm/boot/linux*) */
	void (*on_reset)(void *ctx, const char *why);
	void *ctx;
};

#endif /* KVMLU_VMM_DEVICES_PLATFORM_H */
