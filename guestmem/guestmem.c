// SPDX-License-Identifier: GPL-2.0
/*
 * A VM's RAM as a set of mapped files: create, adopt, translate, destroy.
 *
 * Lifecycle:
 *  - first start: guestmem_create() plans the layout, makes one file per
 *    region (memfd_backend.c or guest_memfd_backend.c) and maps each one
 *    MAP_SHARED, so the VMM and KVM see the very pages the file holds;
 *  - VMM upgrade or after a kexec: the new process gets the plan from the
 *    state FDT and the files over a socket or from a LUO session, and calls
 *    guestmem_adopt(). Both the plan and the files are outside input here
 *    and are checked before anything is mapped;
 *  - guestmem_destroy() unmaps and closes. Closing is what frees guest RAM,
 *    unless another process or a LUO session still holds the file.
 * A failed create or adopt leaves nothing mapped; the struct can always be
 * passed to guestmem_destroy().
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guestmem/backend.h"
#include "common/err.h"
#include "guestmem/folio.h"
#include "guestmem/guestmem.h"

static int guestmem_map_region(struct guestmem *gm, struct guestmem_region *g,
			       char *err, size_t errlen)
{
	bool advised;
	void *p;
	int ret;

	/* memfd: 2 MiB-aligned, 2 MiB folios where the host allows (folio.h). */
	if (gm->backend == GUESTMEM_MEMFD) {
		ret = guestmem_folio_map(g->fd, g->size, g->fd_offset,
					 guestmem_shmem_thp_allows_huge(gm->shmem_thp),
					 &g->hva, &advised, err, errlen);
		if (!ret && !advised)
			gm->huge_advised = false;
		return ret;
	}
	p = mmap(NULL, (size_t)g->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 g->fd, (off_t)g->fd_offset);
	if (p == MAP_FAILED) {
		int ret = -errno;

		kvmlu_err(err, errlen, 0, "mmap region gpa 0x%llx size 0x%llx fd %d offset 0x%llx: %s",
			      (unsigned long long)g->gpa, (unsigned long long)g->size, g->fd,
			      (unsigned long long)g->fd_offset, strerror(errno));
		return ret;
	}
	g->hva = p;
	return 0;
}

static void guestmem_unmap_region(struct guestmem_region *g)
{
	if (g->hva)
		munmap(g->hva, (size_t)g->size);
	g->hva = NULL;
}

void guestmem_destroy(struct guestmem *gm)
{
	unsigned int i, nr;

	if (!gm)
		return;
	nr = gm->nr < GUESTMEM_MAX_REGIONS ? gm->nr : GUESTMEM_MAX_REGIONS;
	for (i = 0; i < nr; i++) {
		struct guestmem_region *g = &gm->r[i];

		guestmem_unmap_region(g);
		if (g->fd >= 0)
			close(g->fd);
		g->fd = -1;
	}
}

int guestmem_create(struct guestmem *gm, enum guestmem_backend backend,
		    uint64_t ram_size, int vm_fd, const char *name,
		    char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	if (!gm)
		return -EINVAL;
	if (backend != GUESTMEM_MEMFD && backend != GUESTMEM_GUEST_MEMFD) {
		kvmlu_err(err, errlen, 0, "guestmem: unknown backend %d", (int)backend);
		return -EINVAL;
	}
	ret = guestmem_layout(ram_size, gm);
	if (ret) {
		kvmlu_err(err, errlen, 0,
			      "guestmem: cannot lay out %llu bytes of RAM (need a multiple of 2 MiB, at most %llu)",
			      (unsigned long long)ram_size, (unsigned long long)GUESTMEM_MAX_RAM);
		return ret;
	}
	gm->backend = backend;
	gm->shmem_thp = guestmem_shmem_thp_read(NULL);
	gm->huge_advised = backend == GUESTMEM_MEMFD &&
			   guestmem_shmem_thp_allows_huge(gm->shmem_thp);
	if (backend == GUESTMEM_GUEST_MEMFD) {
		ret = guestmem_gmem_probe(vm_fd, err, errlen);
		if (ret)
			return ret;
	}

	for (i = 0; i < gm->nr; i++) {
		struct guestmem_region *g = &gm->r[i];
		char label[64];
		int fd;

		snprintf(label, sizeof(label), "kvmlu:%s:ram%u", name ? name : "vm", i);
		if (backend == GUESTMEM_MEMFD)
			fd = guestmem_memfd_create(g->size, label, err, errlen);
		else
			fd = guestmem_gmem_create(vm_fd, g->size, err, errlen);
		if (fd < 0) {
			ret = fd;
			goto err_destroy;
		}
		g->fd = fd;
		g->fd_offset = 0;
		ret = guestmem_map_region(gm, g, err, errlen);
		if (ret)
			goto err_destroy;
	}
	return 0;

err_destroy:
	guestmem_destroy(gm);
	return ret;
}

/* The plan in gm came from a state FDT: check it before trusting it. */
static int guestmem_plan_check(const struct guestmem *gm, char *err, size_t errlen)
{
	uint64_t total = 0;
	unsigned int i, j;

	if (gm->backend != GUESTMEM_MEMFD && gm->backend != GUESTMEM_GUEST_MEMFD) {
		kvmlu_err(err, errlen, 0, "guestmem: unknown backend %d", (int)gm->backend);
		return -EINVAL;
	}
	if (gm->nr == 0 || gm->nr > GUESTMEM_MAX_REGIONS) {
		kvmlu_err(err, errlen, 0, "guestmem: %u regions (need 1 to %u)",
			      gm->nr, GUESTMEM_MAX_REGIONS);
		return -EINVAL;
	}
	for (i = 0; i < gm->nr; i++) {
		const struct guestmem_region *a = &gm->r[i];

		if (a->size == 0 || a->size % GUESTMEM_SIZE_ALIGN ||
		    a->gpa % GUESTMEM_SIZE_ALIGN || a->size > GUESTMEM_MAX_RAM ||
		    a->gpa > UINT64_MAX - a->size) {
			kvmlu_err(err, errlen, 0,
				      "guestmem: region %u gpa 0x%llx size 0x%llx is not 2 MiB aligned or out of range",
				      i, (unsigned long long)a->gpa, (unsigned long long)a->size);
			return -EINVAL;
		}
		if (a->fd_offset % (uint64_t)sysconf(_SC_PAGESIZE) ||
		    a->fd_offset > UINT64_MAX - a->size || a->fd_offset > (uint64_t)INT64_MAX) {
			kvmlu_err(err, errlen, 0, "guestmem: region %u file offset 0x%llx is not usable",
				      i, (unsigned long long)a->fd_offset);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			const struct guestmem_region *b = &gm->r[j];

			if (a->gpa < b->gpa + b->size && b->gpa < a->gpa + a->size) {
				kvmlu_err(err, errlen, 0, "guestmem: regions %u and %u overlap at gpa 0x%llx",
					      j, i, (unsigned long long)a->gpa);
				return -EINVAL;
			}
			if (a->slot == b->slot) {
				kvmlu_err(err, errlen, 0, "guestmem: regions %u and %u share memslot %u",
					      j, i, a->slot);
				return -EINVAL;
			}
		}
		total += a->size;
	}
	/* total is derived, not part of the contract: 0 means "not filled in". */
	if (gm->total && total != gm->total) {
		kvmlu_err(err, errlen, 0, "guestmem: regions add up to %llu bytes, total says %llu",
			      (unsigned long long)total, (unsigned long long)gm->total);
		return -EINVAL;
	}
	return 0;
}

int guestmem_adopt(struct guestmem *gm, const int *fds, char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	if (!gm || !fds)
		return -EINVAL;
	ret = guestmem_plan_check(gm, err, errlen);
	if (ret)
		goto err_forget;
	gm->total = 0;
	for (i = 0; i < gm->nr; i++)
		gm->total += gm->r[i].size;
	gm->shmem_thp = guestmem_shmem_thp_read(NULL);
	gm->huge_advised = gm->backend == GUESTMEM_MEMFD &&
			   guestmem_shmem_thp_allows_huge(gm->shmem_thp);

	for (i = 0; i < gm->nr; i++) {
		struct guestmem_region *g = &gm->r[i];
		uint64_t need = g->fd_offset + g->size;

		if (fds[i] < 0) {
			kvmlu_err(err, errlen, 0, "guestmem: region %u has no file (fd %d)", i, fds[i]);
			ret = -EBADF;
			goto err_unmap;
		}
		if (gm->backend == GUESTMEM_MEMFD)
			ret = guestmem_memfd_check(fds[i], need, err, errlen);
		else
			ret = guestmem_gmem_check(fds[i], need, err, errlen);
		if (ret)
			goto err_unmap;
		g->fd = fds[i];
		g->hva = NULL;
		ret = guestmem_map_region(gm, g, err, errlen);
		if (ret)
			goto err_unmap;
	}
	return 0;

err_unmap:
	while (i-- > 0)
		guestmem_unmap_region(&gm->r[i]);
err_forget:
	/* The fds stay the caller's: make sure destroy will not close them. */
	for (i = 0; i < GUESTMEM_MAX_REGIONS; i++) {
		gm->r[i].fd = -1;
		gm->r[i].hva = NULL;
	}
	return ret;
}

void *guestmem_gpa_to_hva(const struct guestmem *gm, uint64_t gpa, uint64_t len)
{
	unsigned int i;

	if (!gm)
		return NULL;
	for (i = 0; i < gm->nr && i < GUESTMEM_MAX_REGIONS; i++) {
		const struct guestmem_region *g = &gm->r[i];
		uint64_t off;

		if (!g->hva || gpa < g->gpa)
			continue;
		off = gpa - g->gpa;
		/* Written so that no sum can wrap: gpa and len are guest input. */
		if (off >= g->size || len > g->size - off)
			continue;
		return (char *)g->hva + off;
	}
	return NULL;
}
