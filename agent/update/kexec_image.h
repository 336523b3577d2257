/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The next kernel: kexec_file_load(2) of kernel + initrd + command line,
 * its unload, and the jump. The jump is guarded (kexec_image_jump_allowed)
 * so that no test on a development machine can ever reboot it.
 *
 * Lifecycle: load in preflight (trial, unloaded at once) and again in the
 * load-kernel phase; unload on rollback; jump last.
 */
#ifndef KVMLU_KEXEC_IMAGE_H
#define KVMLU_KEXEC_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

/* initrd NULL or "": none. */
int kexec_image_load(const char *kernel, const char *initrd, const char *cmdline,
		     char *err, size_t errlen);
/*
 * The same on files already open (kexec_files.h: the ones checked);
 * ifd -1: no initrd. kernel names it in messages. The fds stay open.
 */
int kexec_image_load_fds(int kfd, int ifd, const char *kernel, const char *cmdline,
			 char *err, size_t errlen);
int kexec_image_unload(char *err, size_t errlen);
/* /sys/kernel/kexec_loaded says 1. */
bool kexec_image_is_loaded(void);

/*
 * The guard: the jump is allowed only if the configuration says
 * allow_kexec, or this kernel was booted by the QEMU harness
 * (kvmlu.harness=1 on /proc/cmdline). Otherwise -EPERM with the reason.
 */
int kexec_image_jump_allowed(bool config_allows, char *err, size_t errlen);

/* sync() and reboot(LINUX_REBOOT_CMD_KEXEC); returns only on failure. */
int kexec_image_jump(char *err, size_t errlen);

#endif /* KVMLU_KEXEC_IMAGE_H */
