// SPDX-License-Identifier: GPL-2.0
/*
 * KVM dirty logging of guest RAM (dirty_log.h): the bitmap interface,
 * KVM_MEM_LOG_DIRTY_PAGES plus KVM_GET_DIRTY_LOG without manual protect,
 * where GET_DIRTY_LOG itself clears the log and write-protects again.
 * That is the order the digest table needs: the log is cleared before
 * the chunks it names are hashed, so a write while one is hashed is in
 * the next collection. The dirty ring would do the same per vCPU; the
 * bitmap needs no vCPU cooperation and is one ioctl per slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/err.h"
#include "guestmem/backend.h"
#include "guestmem/dirty_log.h"
#include "kvmlu/kvm_uapi.h"

int guestmem_dirty_log_start(struct guestmem_dirty_log *d, const struct guestmem *gm,
			     int vm_fd, char *err, size_t errlen)
{
	int ret;

	memset(d, 0, sizeof(*d));
	d->vm_fd = -1;
	if (!gm || gm->nr == 0 || gm->nr > GUESTMEM_MAX_REGIONS)
		return kvmlu_err(err, errlen, -EINVAL, "dirty log: no regions");
	if (gm->backend != GUESTMEM_MEMFD)
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "dirty log: KVM cannot log writes to %s memslots",
				 guestmem_backend_name(gm->backend));
	d->gm = gm;
	d->vm_fd = vm_fd;
	d->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	for (unsigned int i = 0; i < gm->nr; i++) {
		d->nr_pages[i] = gm->r[i].size / d->page_size;
		/* KVM copies out whole longs: round up to 64 pages. */
		d->bitmap[i] = calloc((size_t)(d->nr_pages[i] + 63) / 64, sizeof(uint64_t));
		if (!d->bitmap[i]) {
			ret = kvmlu_err(err, errlen, -ENOMEM, "dirty log: bitmap of region %u", i);
			goto err_stop;
		}
	}
	for (unsigned int i = 0; i < gm->nr; i++) {
		ret = guestmem_set_slot(gm, i, vm_fd, KVM_MEM_LOG_DIRTY_PAGES);
		if (ret) {
			kvmlu_err(err, errlen, ret, "dirty log: memslot %u with KVM_MEM_LOG_DIRTY_PAGES: %s",
				  gm->r[i].slot, strerror(-ret));
			goto err_stop;
		}
		d->nr_on = i + 1;
	}
	return 0;
err_stop:
	guestmem_dirty_log_stop(d);
	return ret;
}

int guestmem_dirty_log_collect(struct guestmem_dirty_log *d, struct guestmem_digest_table *t,
			       uint64_t *dirty_pages, char *err, size_t errlen)
{
	uint64_t total = 0;

	if (!d->gm || d->nr_on != d->gm->nr || t->gm != d->gm)
		return kvmlu_err(err, errlen, -EINVAL, "dirty log: not logging this memory");
	for (unsigned int i = 0; i < d->nr_on; i++) {
		struct kvm_dirty_log log;
		uint64_t n;

		memset(&log, 0, sizeof(log));
		log.slot = d->gm->r[i].slot;
		log.dirty_bitmap = d->bitmap[i];
		if (ioctl(d->vm_fd, KVM_GET_DIRTY_LOG, &log) < 0) {
			int ret = -errno;

			/* The chunks of this slot are unknown now: hash them again. */
			guestmem_digest_table_mark(t, i, 0, d->gm->r[i].size);
			return kvmlu_err(err, errlen, ret, "KVM_GET_DIRTY_LOG slot %u: %s",
					 log.slot, strerror(-ret));
		}
		guestmem_digest_table_mark_bitmap(t, i, d->bitmap[i], d->nr_pages[i],
						  d->page_size, &n);
		total += n;
	}
	if (dirty_pages)
		*dirty_pages = total;
	return 0;
}

void guestmem_dirty_log_stop(struct guestmem_dirty_log *d)
{
	for (unsigned int i = 0; i < d->nr_on; i++)
		(void)guestmem_set_slot(d->gm, i, d->vm_fd, 0);
	for (unsigned int i = 0; i < GUESTMEM_MAX_REGIONS; i++)
		free(d->bitmap[i]);
	memset(d, 0, sizeof(*d));
	d->vm_fd = -1;
}
