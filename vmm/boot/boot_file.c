// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the files a user names on the command line (--payload, --kernel,
 * --initrd): untrusted, so a regular file, a size in bounds, read whole or
 * refused with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/boot/boot_file.h"

int boot_file_read(const char *what, const char *path, size_t max,
		   void **buf, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *p;
	size_t done = 0;
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "%s %s: %s", what, path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = kvmlu_err(err, errlen, -errno, "%s %s: fstat: %s", what, path, strerror(errno));
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = kvmlu_err(err, errlen, -EINVAL, "%s %s: not a regular file", what, path);
		goto err_close;
	}
	if (st.st_size <= 0 || (uint64_t)st.st_size > max) {
		rc = kvmlu_err(err, errlen, -EFBIG, "%s %s: size %lld, must be 1..%zu bytes",
			       what, path, (long long)st.st_size, max);
		goto err_close;
	}
	p = malloc((size_t)st.st_size);
	if (!p) {
		rc = kvmlu_err(err, errlen, -ENOMEM, "%s %s: no memory for %lld bytes", what, path,
			       (long long)st.st_size);
		goto err_close;
	}
	while (done < (size_t)st.st_size) {
		n = read(fd, p + done, (size_t)st.st_size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = kvmlu_err(err, errlen, n < 0 ? -errno : -EIO,
				       "%s %s: read at %zu of %lld: %s", what, path, done,
				       (long long)st.st_size, n < 0 ? strerror(errno) : "file shrank");
			goto err_free;
		}
		done += (size_t)n;
	}
	close(fd);
	*buf = p;
	*len = done;
	return 0;
err_free:
	free(p);
err_close:
	close(fd);
	return rc;
}
