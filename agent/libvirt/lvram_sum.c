// SPDX-License-Identifier: GPL-2.0
/* The checksum of a RAM memfd (see lvram_sum.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/libvirt/lvram_sum.h"
#include "common/err.h"
#include "guestmem/guestmem.h"

int lvram_sum(int fd, char sum[33], char *err, size_t errlen)
{
	struct guestmem_checksum c;
	struct guestmem gm;
	struct stat st;
	int dfd, rc;

	if (fstat(fd, &st))
		return kvmlu_err(err, errlen, -errno, "fstat: %s", strerror(errno));
	/* guestmem owns what it adopts: a copy of the fd. */
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0)
		return kvmlu_err(err, errlen, -errno, "dup: %s", strerror(errno));
	memset(&gm, 0, sizeof(gm));
	gm.backend = GUESTMEM_MEMFD;
	gm.nr = 1;
	gm.r[0].size = (uint64_t)st.st_size;
	rc = guestmem_adopt(&gm, &dfd, err, errlen);
	if (rc) {
		close(dfd);
		return rc;
	}
	rc = guestmem_checksum(&gm, 0, &c);
	guestmem_destroy(&gm);
	if (rc)
		return kvmlu_err(err, errlen, rc, "checksum: %s", strerror(-rc));
	guestmem_checksum_format(&c, sum);
	return 0;
}
