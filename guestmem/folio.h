/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The folio size of memfd guest RAM: 2 MiB shmem THP where the host allows
 * it, 4 KiB pages otherwise (docs/live-update-memory.md, lever 4).
 *
 * Why: Linux 7.3's memfd preservation (mm/memfd_luo.c) pins, preserves
 * and, after the kexec, re-inserts guest RAM one folio at a time, so a
 * file of 2 MiB folios costs 512 times fewer steps than one of 4 KiB
 * pages (docs/live-update-memory.md has the measurement). KVM also maps a
 * 2 MiB-aligned PMD-mapped host page with one nested page table entry.
 *
 * Which folios a memfd gets is the host's choice:
 * /sys/kernel/mm/transparent_hugepage/shmem_enabled (the setting of the
 * kernel's internal shmem mount that memfds live on). With `advise` a
 * mapping marked MADV_HUGEPAGE gets 2 MiB folios when it faults; `always`
 * and `within_size` give them without asking; `never` and `deny` never.
 * The VMM asks (MADV_HUGEPAGE) whenever the setting is not never/deny, and
 * maps every region 2 MiB-aligned, so that folios that are already huge
 * (e.g. retrieved after a kexec) are mapped huge whatever the setting.
 *
 * Lifecycle: read once per mapping (first start, upgrade, after a kexec);
 * the setting can change at any time, and a folio keeps the size it got.
 * What the RAM actually holds is measured, not assumed:
 * guestmem_folio_huge_mapped() reads the VMM's own /proc/self/smaps.
 * What one VM's RAM gets, over its regions: guestmem_folio.h.
 */
#ifndef KVMLU_GUESTMEM_FOLIO_H
#define KVMLU_GUESTMEM_FOLIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUESTMEM_SHMEM_THP_PATH "/sys/kernel/mm/transparent_hugepage/shmem_enabled"
#define GUESTMEM_HUGE_FOLIO	(2ULL << 20)

enum guestmem_shmem_thp {
	GUESTMEM_SHMEM_THP_UNKNOWN = 0,	/* no such file (kernel without THP), unreadable */
	GUESTMEM_SHMEM_THP_NEVER,
	GUESTMEM_SHMEM_THP_DENY,
	GUESTMEM_SHMEM_THP_ADVISE,
	GUESTMEM_SHMEM_THP_WITHIN_SIZE,
	GUESTMEM_SHMEM_THP_ALWAYS,
	GUESTMEM_SHMEM_THP_FORCE,
};

/*
 * The selected word of shmem_enabled's text ("always within_size [advise]
 * never deny force"). 0, or -EINVAL if no known word is in brackets.
 */
int guestmem_shmem_thp_parse(const char *text, enum guestmem_shmem_thp *out);

/* The host's setting now (path NULL: GUESTMEM_SHMEM_THP_PATH). */
enum guestmem_shmem_thp guestmem_shmem_thp_read(const char *path);

/* "advise", "never", ... and "unknown". */
const char *guestmem_shmem_thp_name(enum guestmem_shmem_thp t);

/* Whether a MADV_HUGEPAGE mapping of a memfd gets 2 MiB folios under t. */
bool guestmem_shmem_thp_allows_huge(enum guestmem_shmem_thp t);

/*
 * Map size bytes of fd at offset, shared, at a 2 MiB-aligned address, and
 * if huge, madvise(MADV_HUGEPAGE) on it. A refused madvise is not an
 * error (*advised says whether it took). 0 or -errno.
 */
int guestmem_folio_map(int fd, uint64_t size, uint64_t offset, bool huge,
		       void **hva, bool *advised, char *err, size_t errlen);

/*
 * Bytes of [hva, hva + size) this process maps with 2 MiB entries (the
 * ShmemPmdMapped and FilePmdMapped lines of /proc/self/smaps, over every
 * mapping inside the range). Only pages someone touched are mapped: KVM's
 * faults count (they go through this process's page tables), holes do
 * not. path NULL: /proc/self/smaps. 0 or -errno.
 */
int guestmem_folio_huge_mapped(const void *hva, uint64_t size, const char *path,
			       uint64_t *bytes);

#endif /* KVMLU_GUESTMEM_FOLIO_H */
