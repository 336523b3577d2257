/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The folio size of one VM's memfd guest RAM, over the regions of its
 * struct guestmem: what `status` reports, what the VMM says at start,
 * and the collapse after lazy verification. The host's setting and the
 * mapping of one region are folio.h's (which guestmem.c uses, so it
 * knows no struct guestmem).
 */
#ifndef KVMLU_GUESTMEM_GUESTMEM_FOLIO_H
#define KVMLU_GUESTMEM_GUESTMEM_FOLIO_H

#include <stddef.h>
#include <stdint.h>

#include "guestmem/guestmem.h"

/*
 * Bytes of gm's RAM mapped with 2 MiB entries now (every region, as
 * guestmem_folio_huge_mapped()). memfd only: -EOPNOTSUPP for guest_memfd.
 */
int guestmem_folio_huge_bytes(const struct guestmem *gm, uint64_t *bytes);

/*
 * Map gm's memfd RAM with 2 MiB entries again where its folios are 2 MiB
 * (madvise MADV_COLLAPSE on every region): after lazy verification
 * (lazy_verify.c), whose UFFDIO_CONTINUE maps a verified chunk with 4 KiB
 * PTEs although the file's folio is 2 MiB. For a chunk already in one 2
 * MiB folio the kernel only installs the PMD (collapse_pte_mapped_thp);
 * chunks still in 4 KiB pages (holes PRESERVE_FD filled) are copied into
 * a new 2 MiB folio. Only when gm asked for 2 MiB folios (huge_advised);
 * else nothing (0). 0 when every region collapsed, else the first -errno
 * (the other regions are still tried; a kernel without MADV_COLLAPSE
 * says -EINVAL). Safe while vCPUs run: KVM's mapping follows through its
 * MMU notifier.
 */
int guestmem_folio_collapse(const struct guestmem *gm);

/* "2M" when gm's memfd RAM asked for 2 MiB folios, else "4K". */
const char *guestmem_folio_name(const struct guestmem *gm);

/*
 * One sentence for the VMM's log: which folio size gm's RAM gets and why,
 * e.g. "guest RAM in 4 KiB pages: shmem_enabled is never (advise gives
 * 2 MiB folios, docs/live-update-memory.md)".
 */
void guestmem_folio_describe(const struct guestmem *gm, char *buf, size_t len);

#endif /* KVMLU_GUESTMEM_GUESTMEM_FOLIO_H */
