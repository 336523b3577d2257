/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM dirty logging on guest RAM memslots, feeding a digest table
 * (digest_table.h) so that only chunks the guest wrote are hashed again.
 *
 * Lifecycle: start (KVM_MEM_LOG_DIRTY_PAGES on every slot; KVM
 * write-protects the memory and logs each first write to a page) ->
 * collect, any number of times (KVM_GET_DIRTY_LOG: get the bitmap and
 * clear it, pages write-protected again, so a later write is logged
 * again) -> stop (logging off). Start and stop are flags-only memslot
 * changes, allowed while the vCPUs run; collect needs no pause either.
 * Only writes through KVM are logged (the guest's, and KVM's own such as
 * kvmclock): the VMM must not write guest RAM while a table relies on it.
 * guest_memfd slots cannot log (Linux 7.3 refuses the flag with
 * KVM_MEM_GUEST_MEMFD): start says -EOPNOTSUPP and changes nothing.
 */
#ifndef KVMLU_GUESTMEM_DIRTY_LOG_H
#define KVMLU_GUESTMEM_DIRTY_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guestmem/digest_table.h"
#include "guestmem/guestmem.h"

struct guestmem_dirty_log {
	const struct guestmem *gm;	/* not owned */
	int vm_fd;
	unsigned int nr_on;		/* slots 0..nr_on-1 log */
	uint64_t page_size;
	uint64_t nr_pages[GUESTMEM_MAX_REGIONS];
	uint64_t *bitmap[GUESTMEM_MAX_REGIONS];	/* one word per 64 pages */
};

/* Logging on for every region of gm bound to vm_fd; on error all off. */
int guestmem_dirty_log_start(struct guestmem_dirty_log *d, const struct guestmem *gm,
			     int vm_fd, char *err, size_t errlen);

/*
 * Get and clear each slot's log and mark the chunks it names stale in t
 * (a table of the same gm). *dirty_pages (optional): pages logged.
 */
int guestmem_dirty_log_collect(struct guestmem_dirty_log *d, struct guestmem_digest_table *t,
			       uint64_t *dirty_pages, char *err, size_t errlen);

/* Logging off and buffers freed; safe on a zeroed struct and twice. */
void guestmem_dirty_log_stop(struct guestmem_dirty_log *d);

#endif /* KVMLU_GUESTMEM_DIRTY_LOG_H */
