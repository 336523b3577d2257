// SPDX-License-Identifier: GPL-2.0
/*
 * How much of a VM's RAM is in host memory now, for the `status` reply
 * and so for the agent's preflight.
 *
 * Preserving a memfd for a kexec allocates every page of the file that is
 * not there (mm/memfd_luo.c, memfd_luo_preserve_folios(): memfd_pin_folios()
 * allocates a folio for every hole and brings swapped-out ones back), and
 * they stay allocated after an abort. So what an update newly costs is
 * the RAM size minus this. mincore() on the shared mapping answers from
 * the file's page cache without faulting anything in; unlike st_blocks it
 * does not count pages out on swap, which preserving must read back too.
 * Where the kernel will not tell (can_do_mincore() in mm/mincore.c), it
 * reports every page resident; the file's st_blocks caps the answer, so
 * holes are never counted as memory.
 *
 * guest_memfd is not measured: it keeps no block count, and mincore() on
 * its mapping is only trustworthy where the kernel lets us ask (it reports
 * every page resident otherwise), which would hide the cost. -EOPNOTSUPP
 * lets the caller say "unknown" and the agent count the whole RAM.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guestmem/guestmem.h"

/* Pages asked per mincore() call: a 64 KiB vector, 256 MiB of 4 KiB pages. */
#define GUESTMEM_RESIDENT_BATCH	(64u << 10)

int guestmem_resident(const struct guestmem *gm, uint64_t *bytes)
{
	long psz = sysconf(_SC_PAGESIZE);
	unsigned char *vec;
	uint64_t total = 0;
	unsigned int ri;
	int ret = 0;

	if (!gm || !bytes || gm->nr == 0 || gm->nr > GUESTMEM_MAX_REGIONS || psz <= 0)
		return -EINVAL;
	if (gm->backend != GUESTMEM_MEMFD)
		return -EOPNOTSUPP;
	vec = malloc(GUESTMEM_RESIDENT_BATCH);
	if (!vec)
		return -ENOMEM;
	for (ri = 0; ri < gm->nr && !ret; ri++) {
		const struct guestmem_region *g = &gm->r[ri];
		uint64_t n = (g->size + (uint64_t)psz - 1) / (uint64_t)psz, at, i, k, pages = 0;
		struct stat st;

		if (!g->hva) {
			ret = -EINVAL;
			break;
		}
		if (fstat(g->fd, &st) < 0) {
			ret = -errno;
			break;
		}
		for (at = 0; at < n; at += k) {
			k = n - at < GUESTMEM_RESIDENT_BATCH ? n - at : GUESTMEM_RESIDENT_BATCH;
			if (mincore((char *)g->hva + at * (uint64_t)psz,
				    (size_t)(k * (uint64_t)psz), vec) < 0) {
				ret = -errno;
				break;
			}
			for (i = 0; i < k; i++)
				pages += vec[i] & 1;
		}
		pages *= (uint64_t)psz;
		total += pages < (uint64_t)st.st_blocks * 512 ? pages : (uint64_t)st.st_blocks * 512;
	}
	free(vec);
	if (!ret)
		*bytes = total;
	return ret;
}
