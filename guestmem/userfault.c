// SPDX-License-Identifier: GPL-2.0
/*
 * The userfaultfd behind lazy verification (userfault.h).
 *
 * Opened through the syscall, or through /dev/userfaultfd where the
 * syscall is refused to this process; never UFFD_USER_MODE_ONLY: KVM
 * faults guest pages in from the kernel (get_user_pages from KVM_RUN),
 * and those faults are the ones that must wait. Minor mode on shmem
 * (Linux 5.14+, UFFD_FEATURE_MINOR_SHMEM): a fault on a page that is in
 * the page cache but not mapped is reported instead of being mapped, and
 * UFFDIO_CONTINUE maps that very page; nothing is copied.
 *
 * Lifecycle: open -> register each region -> continue/wake as chunks
 * are verified -> unregister -> close. Closing (or unregistering) wakes
 * every waiter, which then maps the page as an ordinary fault would.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/err.h"
#include "guestmem/userfault.h"

static int userfault_new(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	int dev, saved;

	if (fd >= 0 || (errno != EPERM && errno != EACCES))
		return fd;
	/* vm.unprivileged_userfaultfd=0 without CAP_SYS_PTRACE: the device may still let us. */
	saved = errno;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		errno = saved;
		return -1;
	}
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	saved = errno;
	close(dev);
	errno = saved;
	return fd;
}

int guestmem_userfault_open(char *err, size_t errlen)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MINOR_SHMEM };
	int fd, ret;

	fd = userfault_new();
	if (fd < 0) {
		ret = -errno;
		return kvmlu_err(err, errlen, ret, "userfaultfd: %s%s", strerror(errno),
				 errno == ENOSYS ? " (kernel built without CONFIG_USERFAULTFD)" :
				 errno == EPERM ? " (needs CAP_SYS_PTRACE or vm.unprivileged_userfaultfd=1)" :
				 "");
	}
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		ret = -errno;
		close(fd);
		/* EINVAL: a feature asked for is not there. */
		return kvmlu_err(err, errlen, ret == -EINVAL ? -EOPNOTSUPP : ret,
				 "UFFDIO_API with UFFD_FEATURE_MINOR_SHMEM: %s%s", strerror(-ret),
				 ret == -EINVAL ? " (no shmem minor faults in this kernel, Linux 5.14+)" : "");
	}
	if (!(api.features & UFFD_FEATURE_MINOR_SHMEM)) {
		close(fd);
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "UFFDIO_API: UFFD_FEATURE_MINOR_SHMEM not offered (features 0x%llx)",
				 (unsigned long long)api.features);
	}
	return fd;
}

int guestmem_userfault_register(int uffd, void *addr, uint64_t len, char *err, size_t errlen)
{
	struct uffdio_register reg = {
		.range = { .start = (uint64_t)(uintptr_t)addr, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MINOR,
	};

	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		return kvmlu_err(err, errlen, -errno,
				 "UFFDIO_REGISTER minor %p+0x%llx: %s", addr,
				 (unsigned long long)len, strerror(errno));
	if (!(reg.ioctls & (1ULL << _UFFDIO_CONTINUE))) {
		guestmem_userfault_unregister(uffd, addr, len);
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "UFFDIO_REGISTER minor %p: no UFFDIO_CONTINUE on this range (ioctls 0x%llx)",
				 addr, (unsigned long long)reg.ioctls);
	}
	return 0;
}

int guestmem_userfault_unregister(int uffd, void *addr, uint64_t len)
{
	struct uffdio_range r = { .start = (uint64_t)(uintptr_t)addr, .len = len };

	return ioctl(uffd, UFFDIO_UNREGISTER, &r) < 0 ? -errno : 0;
}

int guestmem_userfault_wake(int uffd, void *addr, uint64_t len)
{
	struct uffdio_range r = { .start = (uint64_t)(uintptr_t)addr, .len = len };

	return ioctl(uffd, UFFDIO_WAKE, &r) < 0 ? -errno : 0;
}

int guestmem_userfault_continue(int uffd, void *addr, uint64_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = (uint64_t)(uintptr_t)addr, pos = start, end = start + len;

	while (pos < end) {
		struct uffdio_continue c = {
			.range = { .start = pos, .len = end - pos },
			/* One wake for the whole range, below. */
			.mode = UFFDIO_CONTINUE_MODE_DONTWAKE,
		};

		if (ioctl(uffd, UFFDIO_CONTINUE, &c) == 0)
			break;
		/* Partly done: mapped says how far; go on from there. */
		if (c.mapped > 0) {
			pos += (uint64_t)c.mapped;
			continue;
		}
		if (errno == EEXIST) {
			/* Mapped already (a fault on a verified chunk got there first). */
			pos += page;
			continue;
		}
		if (errno == EAGAIN || errno == EINTR)
			continue;
		return -errno;
	}
	return guestmem_userfault_wake(uffd, addr, len);
}

int guestmem_userfault_read(int uffd, uint64_t *addrs, unsigned int max)
{
	struct uffd_msg msg[16];
	unsigned int n = 0;
	ssize_t got;

	if (max > sizeof(msg) / sizeof(msg[0]))
		max = sizeof(msg) / sizeof(msg[0]);
	got = read(uffd, msg, max * sizeof(msg[0]));
	if (got < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	for (size_t i = 0; i < (size_t)got / sizeof(msg[0]); i++)
		if (msg[i].event == UFFD_EVENT_PAGEFAULT)
			addrs[n++] = msg[i].arg.pagefault.address;
	return (int)n;
}
