// SPDX-License-Identifier: GPL-2.0
/*
 * The sealed memfd that carries a VM's state FDT to the next VMM, through
 * a host kexec or a live upgrade (see state_memfd.h for its lifecycle).
 * Written once by the old side, read once by the new one, which treats
 * it as outside input.
 */
#include "vmm/state/state_memfd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

/*
 * Sealed so that nobody (not even this VMM by mistake) changes the state
 * between capture and restore; F_SEAL_SEAL so the seals stay. The LUO
 * memfd handler preserves exactly these seals (mm/memfd_luo.c).
 */
#define STATE_MEMFD_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

int state_memfd_create(const char *vm_name, const void *blob,
		       size_t len, int *fd, char *err, size_t errlen)
{
	const uint8_t *p = blob;
	char label[96];
	size_t done = 0;
	int mfd, ret;

	if (len == 0 || len > STATE_MEMFD_MAX_BYTES)
		return kvmlu_err(err, errlen, -EINVAL, "state memfd: size %zu outside 1..%u",
				 len, STATE_MEMFD_MAX_BYTES);
	snprintf(label, sizeof(label), "kvmlu-state:%s", vm_name);
	/* Close-on-exec: it reaches the next VMM through LUO, never through exec. */
	mfd = memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return kvmlu_err(err, errlen, -errno, "state memfd: memfd_create(%s): %s",
				 label, strerror(errno));
	while (done < len) {
		ssize_t n = write(mfd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = kvmlu_err(err, errlen, n < 0 ? -errno : -EIO,
					"state memfd: write at %zu of %zu: %s", done, len,
					n < 0 ? strerror(errno) : "no progress");
			goto err_close;
		}
		done += (size_t)n;
	}
	if (fcntl(mfd, F_ADD_SEALS, STATE_MEMFD_SEALS) < 0) {
		ret = kvmlu_err(err, errlen, -errno, "state memfd: F_ADD_SEALS 0x%x: %s",
				STATE_MEMFD_SEALS, strerror(errno));
		goto err_close;
	}
	*fd = mfd;
	return 0;

err_close:
	close(mfd);
	return ret;
}

int state_memfd_read(int fd, size_t max, void **blob, size_t *len,
		     char *err, size_t errlen)
{
	struct stat st;
	size_t size, done = 0;
	uint8_t *buf;
	int seals, ret;

	if (fstat(fd, &st) < 0)
		return kvmlu_err(err, errlen, -errno, "state memfd: fstat fd %d: %s",
				 fd, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return kvmlu_err(err, errlen, -EINVAL, "state memfd: fd %d is not a regular file "
				 "(mode 0%o)", fd, (unsigned int)st.st_mode);
	if (st.st_size <= 0 || (uint64_t)st.st_size > max)
		return kvmlu_err(err, errlen, -EINVAL, "state memfd: size %lld outside 1..%zu",
				 (long long)st.st_size, max);
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK)) !=
			 (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK))
		return kvmlu_err(err, errlen, -EPERM, "state memfd: not sealed against "
				 "changes (seals 0x%x)", seals < 0 ? 0 : seals);
	size = (size_t)st.st_size;
	buf = malloc(size);
	if (!buf)
		return kvmlu_err(err, errlen, -ENOMEM, "state memfd: no memory for %zu bytes",
				 size);
	while (done < size) {
		ssize_t n = pread(fd, buf + done, size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = kvmlu_err(err, errlen, n < 0 ? -errno : -EIO,
					"state memfd: read at %zu of %zu: %s", done, size,
					n < 0 ? strerror(errno) : "file ended early");
			goto err_free;
		}
		done += (size_t)n;
	}
	*blob = buf;
	*len = size;
	return 0;

err_free:
	free(buf);
	return ret;
}
