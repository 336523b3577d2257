// SPDX-License-Identifier: GPL-2.0
/*
 * guest_memfd backend: guest RAM in a KVM guest_memfd file created with
 * GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED, so the VMM can map
 * it like a memfd and every page starts out shared (no confidential
 * computing here; the point is a file KVM owns, which the project's
 * kernel (kernel/patches, CONFIG_LIVEUPDATE_GUEST_MEMFD) preserves over
 * LUO; upstream 7.3 does not, kernel/README.md).
 *
 * Lifecycle: probed and created once per region on the VM's fd when the VM
 * is first started (the file is bound to that VM for its whole life). On a
 * VMM upgrade the fd travels to the new process and is vetted with
 * guestmem_gmem_check(); a new VM gets the memory through a link
 * (gmem_link.c) where the kernel can, as after a kexec. It cannot be
 * resized.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "guestmem/backend.h"
#include "common/err.h"
#include "kvmlu/kvm_uapi.h"

#define GUESTMEM_GMEM_FLAGS (GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED)

/* The name KVM gives the anonymous inode of every guest_memfd file. */
#define GUESTMEM_GMEM_LINK "anon_inode:[kvm-gmem]"

int guestmem_gmem_probe(int vm_fd, char *err, size_t errlen)
{
	int r;

	r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_GUEST_MEMFD);
	if (r < 0) {
		int ret = -errno;

		kvmlu_err(err, errlen, 0, "guest_memfd: KVM_CHECK_EXTENSION(KVM_CAP_GUEST_MEMFD) on vm fd %d: %s",
			      vm_fd, strerror(errno));
		return ret;
	}
	if (r == 0) {
		kvmlu_err(err, errlen, 0,
			      "guest_memfd: kernel lacks KVM_CAP_GUEST_MEMFD (Linux 6.8+ with CONFIG_KVM_GUEST_MEMFD); use --memory-backend memfd");
		return -EOPNOTSUPP;
	}
	/* Asked on the VM fd: the supported flags depend on the VM type. */
	r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_GUEST_MEMFD_FLAGS);
	if (r < 0)
		r = 0;
	if (((uint64_t)r & GUESTMEM_GMEM_FLAGS) != GUESTMEM_GMEM_FLAGS) {
		kvmlu_err(err, errlen, 0,
			      "guest_memfd: KVM_CAP_GUEST_MEMFD_FLAGS is 0x%x, need 0x%llx (MMAP|INIT_SHARED, Linux 6.18+); use --memory-backend memfd",
			      (unsigned int)r, (unsigned long long)GUESTMEM_GMEM_FLAGS);
		return -EOPNOTSUPP;
	}
	return 0;
}

int guestmem_gmem_create(int vm_fd, uint64_t size, char *err, size_t errlen)
{
	struct kvm_create_guest_memfd req;
	int fd, ret;

	ret = guestmem_gmem_probe(vm_fd, err, errlen);
	if (ret)
		return ret;
	memset(&req, 0, sizeof(req));
	req.size = size;
	req.flags = GUESTMEM_GMEM_FLAGS;
	fd = ioctl(vm_fd, KVM_CREATE_GUEST_MEMFD, &req);
	if (fd < 0) {
		ret = -errno;
		kvmlu_err(err, errlen, 0, "KVM_CREATE_GUEST_MEMFD size %llu flags 0x%llx: %s",
			      (unsigned long long)size, (unsigned long long)req.flags,
			      strerror(errno));
		return ret;
	}
	return fd;
}

/*
 * Newer kernels keep guest_memfd on its own fs (GUEST_MEMFD_MAGIC); older
 * ones on the anon inode fs, where only the inode name tells. 0 if fd is
 * one, else -errno with what it is in err.
 */
static int guestmem_gmem_identify(int fd, char *err, size_t errlen)
{
	char path[64], link[64];
	struct statfs sfs;
	ssize_t n;

	if (fstatfs(fd, &sfs) == 0 && (uint64_t)sfs.f_type == GUEST_MEMFD_MAGIC)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		int ret = -errno;

		kvmlu_err(err, errlen, 0, "guest_memfd fd %d: readlink %s: %s",
			      fd, path, strerror(errno));
		return ret;
	}
	link[n] = '\0';
	if (strcmp(link, GUESTMEM_GMEM_LINK)) {
		kvmlu_err(err, errlen, 0, "fd %d is not a guest_memfd (it is %s)", fd, link);
		return -EINVAL;
	}
	return 0;
}

int guestmem_gmem_check(int fd, uint64_t need, char *err, size_t errlen)
{
	struct stat st;
	int ret;

	if (fstat(fd, &st) < 0) {
		ret = -errno;
		kvmlu_err(err, errlen, 0, "guest_memfd fd %d: fstat: %s", fd, strerror(errno));
		return ret;
	}
	ret = guestmem_gmem_identify(fd, err, errlen);
	if (ret)
		return ret;
	if ((uint64_t)st.st_size < need) {
		kvmlu_err(err, errlen, 0, "guest_memfd fd %d holds %llu bytes, region needs %llu",
			      fd, (unsigned long long)st.st_size, (unsigned long long)need);
		return -EINVAL;
	}
	return 0;
}
