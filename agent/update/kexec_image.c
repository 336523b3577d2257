// SPDX-License-Identifier: GPL-2.0
/* kexec_file_load, unload and the guarded jump (see kexec_image.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/kexec.h>
#include <linux/reboot.h>
#include <stdio.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/update/host_facts.h"
#include "agent/update/kexec_image.h"
#include "agent/update/preflight.h"
#include "common/err.h"

static const char *load_hint(int e)
{
	switch (e) {
	case ENOEXEC:
		return " (not a bootable bzImage, or not relocatable)";
	case EKEYREJECTED:
	case EPERM:
		return " (signature refused or kexec disabled by lockdown/kexec_load_disabled)";
	case EBUSY:
		return " (a kexec image is being loaded by someone else)";
	case ENOSYS:
		return " (kernel built without CONFIG_KEXEC_FILE)";
	default:
		return "";
	}
}

int kexec_image_load_fds(int kfd, int ifd, const char *kernel, const char *cmdline,
			 char *err, size_t errlen)
{
	unsigned long flags = ifd < 0 ? KEXEC_FILE_NO_INITRAMFS : 0;

	/* The length counts the NUL: the kernel checks the last byte is 0. */
	if (syscall(SYS_kexec_file_load, kfd, ifd, strlen(cmdline) + 1, cmdline, flags))
		return kvmlu_err(err, errlen, -errno, "kexec_file_load %s: %s%s", kernel,
				 strerror(errno), load_hint(errno));
	return 0;
}

int kexec_image_load(const char *kernel, const char *initrd, const char *cmdline,
		     char *err, size_t errlen)
{
	int kfd, ifd = -1, ret;

	kfd = open(kernel, O_RDONLY | O_CLOEXEC);
	if (kfd < 0)
		return kvmlu_err(err, errlen, -errno, "kernel %s: %s", kernel, strerror(errno));
	if (initrd && initrd[0]) {
		ifd = open(initrd, O_RDONLY | O_CLOEXEC);
		if (ifd < 0) {
			ret = kvmlu_err(err, errlen, -errno, "initrd %s: %s", initrd,
					strerror(errno));
			close(kfd);
			return ret;
		}
	}
	ret = kexec_image_load_fds(kfd, ifd, kernel, cmdline, err, errlen);
	if (ifd >= 0)
		close(ifd);
	close(kfd);
	return ret;
}

int kexec_image_unload(char *err, size_t errlen)
{
	if (syscall(SYS_kexec_file_load, -1, -1, 0UL, NULL, (unsigned long)KEXEC_FILE_UNLOAD))
		return kvmlu_err(err, errlen, -errno, "kexec_file_load(UNLOAD): %s",
				 strerror(errno));
	return 0;
}

bool kexec_image_is_loaded(void)
{
	char c = '0';
	int fd = open("/sys/kernel/kexec_loaded", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

int kexec_image_jump_allowed(bool config_allows, char *err, size_t errlen)
{
	char cmdline[4096];

	if (config_allows)
		return 0;
	if (!host_facts_cmdline("", cmdline, sizeof(cmdline)) &&
	    preflight_cmdline_has(cmdline, "kvmlu.harness"))
		return 0;
	return kvmlu_err(err, errlen, -EPERM,
			 "kexec not allowed on this host: set \"allow_kexec\": true in the "
			 "agent configuration (or boot the host with kvmlu.harness=1)");
}

int kexec_image_jump(char *err, size_t errlen)
{
	sync();
	reboot(LINUX_REBOOT_CMD_KEXEC);
	return kvmlu_err(err, errlen, -errno, "reboot(LINUX_REBOOT_CMD_KEXEC): %s",
			 strerror(errno));
}
