// SPDX-License-Identifier: GPL-2.0
/*
 * The folio size of one VM's memfd RAM (guestmem_folio.h): measured,
 * collapsed back to 2 MiB mappings, named and described, over the
 * regions of a struct guestmem with folio.c's host-wide functions.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>

#include "guestmem/folio.h"
#include "guestmem/guestmem.h"
#include "guestmem/guestmem_folio.h"

int guestmem_folio_huge_bytes(const struct guestmem *gm, uint64_t *bytes)
{
	uint64_t total = 0, b;
	unsigned int i;
	int ret;

	if (!gm || !bytes || gm->nr > GUESTMEM_MAX_REGIONS)
		return -EINVAL;
	if (gm->backend != GUESTMEM_MEMFD)
		return -EOPNOTSUPP;
	for (i = 0; i < gm->nr; i++) {
		if (!gm->r[i].hva)
			return -EINVAL;
		ret = guestmem_folio_huge_mapped(gm->r[i].hva, gm->r[i].size, NULL, &b);
		if (ret)
			return ret;
		total += b;
	}
	*bytes = total;
	return 0;
}

/* Linux 6.1 (uapi asm-generic/mman-common.h); older libc headers lack it. */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

int guestmem_folio_collapse(const struct guestmem *gm)
{
	int first = 0;
	unsigned int i;

	if (!gm || gm->nr > GUESTMEM_MAX_REGIONS)
		return -EINVAL;
	if (gm->backend != GUESTMEM_MEMFD || !gm->huge_advised)
		return 0;
	for (i = 0; i < gm->nr; i++) {
		if (!gm->r[i].hva)
			return -EINVAL;
		if (madvise(gm->r[i].hva, (size_t)gm->r[i].size, MADV_COLLAPSE) && !first)
			first = -errno;
	}
	return first;
}

const char *guestmem_folio_name(const struct guestmem *gm)
{
	return gm && gm->backend == GUESTMEM_MEMFD && gm->huge_advised ? "2M" : "4K";
}

void guestmem_folio_describe(const struct guestmem *gm, char *buf, size_t len)
{
	const char *t = guestmem_shmem_thp_name(gm->shmem_thp);

	if (gm->backend != GUESTMEM_MEMFD)
		snprintf(buf, len, "guest RAM in %s: its folio size is the backend's",
			 guestmem_backend_name(gm->backend));
	else if (gm->huge_advised)
		snprintf(buf, len, "guest RAM in 2 MiB folios where the guest touches it "
			 "(shmem_enabled is %s, MADV_HUGEPAGE)", t);
	else if (guestmem_shmem_thp_allows_huge(gm->shmem_thp))
		snprintf(buf, len, "guest RAM in 4 KiB pages: MADV_HUGEPAGE refused "
			 "(shmem_enabled is %s)", t);
	else
		snprintf(buf, len, "guest RAM in 4 KiB pages: shmem_enabled is %s "
			 "(advise gives 2 MiB folios, docs/live-update-memory.md)", t);
}
