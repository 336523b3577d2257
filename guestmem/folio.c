// SPDX-License-Identifier: GPL-2.0
/*
 * The folio size of memfd guest RAM (folio.h says why and what decides).
 *
 * Happy path: guestmem_map_region() maps a memfd region here, aligned to
 * 2 MiB and madvise(MADV_HUGEPAGE)d when shmem_enabled allows huge
 * folios; the guest's first touches then allocate 2 MiB folios, and
 * `status` reports how much of the RAM is mapped huge.
 * Unhappy paths:
 *  1. shmem_enabled is never/deny or missing: no madvise, 4 KiB pages, as
 *     before; the VMM says so once at start.
 *  2. madvise refused (EINVAL on a kernel without THP): 4 KiB pages, not
 *     an error; *advised says it did not take.
 *  3. No 2 MiB-aligned address to be had: the reservation fails like the
 *     plain mmap would have (ENOMEM), reported with the region's values.
 * After a kexec the retrieved file already holds its folios (memfd_luo
 * keeps each folio's order); the aligned mapping lets them be mapped huge
 * even when the new kernel's setting is `never`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/err.h"
#include "guestmem/folio.h"

static const char *const shmem_thp_names[] = {
	[GUESTMEM_SHMEM_THP_UNKNOWN] = "unknown",
	[GUESTMEM_SHMEM_THP_NEVER] = "never",
	[GUESTMEM_SHMEM_THP_DENY] = "deny",
	[GUESTMEM_SHMEM_THP_ADVISE] = "advise",
	[GUESTMEM_SHMEM_THP_WITHIN_SIZE] = "within_size",
	[GUESTMEM_SHMEM_THP_ALWAYS] = "always",
	[GUESTMEM_SHMEM_THP_FORCE] = "force",
};

int guestmem_shmem_thp_parse(const char *text, enum guestmem_shmem_thp *out)
{
	const char *open, *close;
	size_t len;
	unsigned int i;

	if (!text || !out)
		return -EINVAL;
	open = strchr(text, '[');
	if (!open)
		return -EINVAL;
	close = strchr(open, ']');
	if (!close)
		return -EINVAL;
	len = (size_t)(close - open - 1);
	for (i = GUESTMEM_SHMEM_THP_NEVER; i <= GUESTMEM_SHMEM_THP_FORCE; i++) {
		if (strlen(shmem_thp_names[i]) == len &&
		    !strncmp(open + 1, shmem_thp_names[i], len)) {
			*out = (enum guestmem_shmem_thp)i;
			return 0;
		}
	}
	return -EINVAL;
}

enum guestmem_shmem_thp guestmem_shmem_thp_read(const char *path)
{
	enum guestmem_shmem_thp t = GUESTMEM_SHMEM_THP_UNKNOWN;
	char buf[256];
	ssize_t n;
	int fd;

	fd = open(path ? path : GUESTMEM_SHMEM_THP_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return GUESTMEM_SHMEM_THP_UNKNOWN;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return GUESTMEM_SHMEM_THP_UNKNOWN;
	buf[n] = '\0';
	if (guestmem_shmem_thp_parse(buf, &t))
		return GUESTMEM_SHMEM_THP_UNKNOWN;
	return t;
}

const char *guestmem_shmem_thp_name(enum guestmem_shmem_thp t)
{
	if ((unsigned int)t > GUESTMEM_SHMEM_THP_FORCE)
		return "unknown";
	return shmem_thp_names[t];
}

bool guestmem_shmem_thp_allows_huge(enum guestmem_shmem_thp t)
{
	switch (t) {
	case GUESTMEM_SHMEM_THP_ADVISE:
	case GUESTMEM_SHMEM_THP_WITHIN_SIZE:
	case GUESTMEM_SHMEM_THP_ALWAYS:
	case GUESTMEM_SHMEM_THP_FORCE:
		return true;
	default:
		return false;
	}
}

int guestmem_folio_map(int fd, uint64_t size, uint64_t offset, bool huge,
		       void **hva, bool *advised, char *err, size_t errlen)
{
	uint64_t align = GUESTMEM_HUGE_FOLIO;
	char *resv, *at, *p;
	int ret;

	if (!hva || size == 0 || size > SIZE_MAX - align)
		return kvmlu_err(err, errlen, -EINVAL, "map memfd fd %d: invalid size %llu",
				 fd, (unsigned long long)size);
	if (advised)
		*advised = false;
	/*
	 * A PMD maps a folio only where the address and the file offset agree
	 * modulo 2 MiB (thp_vma_suitable_order()); plain mmap gives that only
	 * when the kernel's shmem setting is not `never`. So reserve a
	 * slightly larger range and put the mapping at its aligned start.
	 */
	resv = mmap(NULL, (size_t)(size + align), PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (resv == MAP_FAILED) {
		ret = -errno;
		return kvmlu_err(err, errlen, ret,
				 "map memfd fd %d: reserve %llu bytes: %s", fd,
				 (unsigned long long)(size + align), strerror(errno));
	}
	at = resv + ((align - ((uintptr_t)resv + offset) % align) % align);
	p = mmap(at, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, (off_t)offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		munmap(resv, (size_t)(size + align));
		return kvmlu_err(err, errlen, ret,
				 "mmap memfd fd %d size 0x%llx offset 0x%llx: %s", fd,
				 (unsigned long long)size, (unsigned long long)offset,
				 strerror(errno));
	}
	/* Give back what the alignment did not use, on both sides. */
	if (at > resv)
		munmap(resv, (size_t)(at - resv));
	if (resv + size + align > at + size)
		munmap(at + size, (size_t)(resv + size + align - (at + size)));
	if (huge && madvise(p, (size_t)size, MADV_HUGEPAGE) == 0 && advised)
		*advised = true;
	*hva = p;
	return 0;
}

/* "ShmemPmdMapped:     2048 kB" -> bytes, if the line is one of the two. */
static bool smaps_pmd_line(const char *line, uint64_t *bytes)
{
	static const char *const keys[] = { "ShmemPmdMapped:", "FilePmdMapped:" };
	unsigned long long kb;
	unsigned int i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t n = strlen(keys[i]);

		if (!strncmp(line, keys[i], n) && sscanf(line + n, "%llu", &kb) == 1) {
			*bytes = (uint64_t)kb * 1024;
			return true;
		}
	}
	return false;
}

int guestmem_folio_huge_mapped(const void *hva, uint64_t size, const char *path,
			       uint64_t *bytes)
{
	uintptr_t lo = (uintptr_t)hva, hi = (uintptr_t)hva + size;
	uint64_t total = 0, b;
	bool inside = false;
	char line[512];
	FILE *f;

	if (!hva || !bytes)
		return -EINVAL;
	f = fopen(path ? path : "/proc/self/smaps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		/* A mapping's first line is "start-end perms ...". */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' ')) {
			inside = start >= lo && end <= hi;
			continue;
		}
		if (inside && smaps_pmd_line(line, &b))
			total += b;
	}
	fclose(f);
	*bytes = total;
	return 0;
}
