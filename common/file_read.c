// SPDX-License-Identifier: GPL-2.0
/* A small file read whole, within a limit (see file_read.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/file_read.h"

int file_read_all(const char *path, size_t max, char **buf, size_t *len)
{
	size_t used = 0;
	ssize_t n;
	char *b;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	b = malloc(max + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	/* One byte more than max: to tell a file of max bytes from a bigger one. */
	while ((n = read(fd, b + used, max + 1 - used)) > 0) {
		used += (size_t)n;
		if (used > max) {
			ret = -EFBIG;
			break;
		}
	}
	if (n < 0)
		ret = -errno;
	close(fd);
	if (ret) {
		free(b);
		return ret;
	}
	b[used] = 0;
	*buf = b;
	*len = used;
	return 0;
}
