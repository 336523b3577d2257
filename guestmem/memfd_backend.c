// SPDX-License-Identifier: GPL-2.0
/*
 * memfd backend: guest RAM in an unlinked shmem file, the kind of file the
 * kernel's memfd LUO handler can carry across a kexec (mm/memfd_luo.c
 * accepts shmem files with no links; it refuses hugetlbfs).
 *
 * Lifecycle: created once per region when the VM is first started, sized
 * with ftruncate and sealed against growing and shrinking (a shrink under a
 * running guest would turn its memory into SIGBUS; the seals are among
 * those LUO preserves). On upgrade the fd is passed to the new VMM; across a
 * kexec it is retrieved from the LUO session. Either way the receiver runs
 * guestmem_memfd_check() before trusting it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "guestmem/backend.h"
#include "common/err.h"

int guestmem_memfd_create(uint64_t size, const char *name, char *err, size_t errlen)
{
	const char *label = name && *name ? name : "kvmlu-ram";
	int fd, ret;

	if (size == 0 || size > (uint64_t)INT64_MAX) {
		kvmlu_err(err, errlen, 0, "memfd: invalid size %llu",
			      (unsigned long long)size);
		return -EINVAL;
	}
	/*
	 * No MFD_CLOEXEC: the fd must survive exec of a new VMM. No
	 * MFD_HUGETLB: LUO cannot preserve hugetlbfs files.
	 */
	fd = memfd_create(label, MFD_ALLOW_SEALING);
	if (fd < 0) {
		ret = -errno;
		kvmlu_err(err, errlen, 0, "memfd_create(%s): %s", label, strerror(errno));
		return ret;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		ret = -errno;
		kvmlu_err(err, errlen, 0, "memfd %s: ftruncate to %llu bytes: %s",
			      label, (unsigned long long)size, strerror(errno));
		goto err_close;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
		ret = -errno;
		kvmlu_err(err, errlen, 0, "memfd %s: F_ADD_SEALS shrink|grow: %s",
			      label, strerror(errno));
		goto err_close;
	}
	return fd;

err_close:
	close(fd);
	return ret;
}

int guestmem_memfd_check(int fd, uint64_t need, char *err, size_t errlen)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int ret = -errno;

		kvmlu_err(err, errlen, 0, "memfd fd %d: fstat: %s", fd, strerror(errno));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		kvmlu_err(err, errlen, 0, "fd %d is not a memfd (mode 0%o is not a regular file)",
			      fd, (unsigned int)st.st_mode);
		return -EINVAL;
	}
	if (fstatfs(fd, &sfs) < 0) {
		int ret = -errno;

		kvmlu_err(err, errlen, 0, "memfd fd %d: fstatfs: %s", fd, strerror(errno));
		return ret;
	}
	if ((unsigned long)sfs.f_type == (unsigned long)HUGETLBFS_MAGIC) {
		kvmlu_err(err, errlen, 0,
			      "fd %d is a hugetlbfs file; only shmem memfds can be preserved",
			      fd);
		return -EINVAL;
	}
	if ((unsigned long)sfs.f_type != (unsigned long)TMPFS_MAGIC) {
		kvmlu_err(err, errlen, 0,
			      "fd %d is not a memfd (filesystem type 0x%lx, not shmem)",
			      fd, (unsigned long)sfs.f_type);
		return -EINVAL;
	}
	/* A linked tmpfs file (e.g. in /dev/shm) is shmem but LUO refuses it. */
	if (st.st_nlink != 0) {
		kvmlu_err(err, errlen, 0,
			      "fd %d is a tmpfs file with %lu links, not an unlinked memfd",
			      fd, (unsigned long)st.st_nlink);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size < need) {
		kvmlu_err(err, errlen, 0, "memfd fd %d holds %llu bytes, region needs %llu",
			      fd, (unsigned long long)st.st_size, (unsigned long long)need);
		return -EINVAL;
	}
	return 0;
}
