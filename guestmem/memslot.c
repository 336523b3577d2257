// SPDX-License-Identifier: GPL-2.0
/*
 * KVM memslots for guest RAM: one KVM_SET_USER_MEMORY_REGION2 per region.
 *
 * Lifecycle: bound once per VM fd, after the files are created or adopted
 * and before the first KVM_RUN. A VM fd handed over with its memslots
 * needs no second bind; a new VM (always after a kexec) gets the adopted
 * files bound to it. If one region fails, the slots already set are
 * deleted again, so a failed bind leaves the VM as it was. A guest_memfd
 * VM whose files are swapped for links (gmem_link.c) has its slots
 * deleted with guestmem_unbind() and bound again.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "guestmem/backend.h"
#include "common/err.h"
#include "guestmem/guestmem.h"
#include "kvmlu/kvm_uapi.h"

static int guestmem_set_region2(int vm_fd, const struct kvm_userspace_memory_region2 *m)
{
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION2, m) < 0)
		return -errno;
	return 0;
}

/* A slot with memory_size 0 is deleted, whatever backed it. */
static void guestmem_unbind_slot(int vm_fd, uint32_t slot)
{
	struct kvm_userspace_memory_region2 m;

	memset(&m, 0, sizeof(m));
	m.slot = slot;
	(void)guestmem_set_region2(vm_fd, &m);
}

int guestmem_set_slot(const struct guestmem *gm, unsigned int i, int vm_fd, uint32_t flags)
{
	const struct guestmem_region *g = &gm->r[i];
	struct kvm_userspace_memory_region2 m;

	memset(&m, 0, sizeof(m));
	m.slot = g->slot;
	m.flags = flags;
	m.guest_phys_addr = g->gpa;
	m.memory_size = g->size;
	/* guest_memfd too: shared pages are reached through this mapping. */
	m.userspace_addr = (uint64_t)(uintptr_t)g->hva;
	if (gm->backend == GUESTMEM_GUEST_MEMFD) {
		m.flags |= KVM_MEM_GUEST_MEMFD;
		m.guest_memfd = (uint32_t)g->fd;
		m.guest_memfd_offset = g->fd_offset;
	}
	return guestmem_set_region2(vm_fd, &m);
}

int guestmem_bind(const struct guestmem *gm, int vm_fd, char *err, size_t errlen)
{
	unsigned int i;
	int r, ret;

	if (!gm || gm->nr == 0 || gm->nr > GUESTMEM_MAX_REGIONS) {
		kvmlu_err(err, errlen, 0, "memslot: no regions to bind (nr %u)", gm ? gm->nr : 0);
		return -EINVAL;
	}
	r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_USER_MEMORY2);
	if (r <= 0) {
		kvmlu_err(err, errlen, 0,
			      "memslot: kernel lacks KVM_CAP_USER_MEMORY2 (KVM_SET_USER_MEMORY_REGION2, Linux 6.8+) on vm fd %d",
			      vm_fd);
		return -EOPNOTSUPP;
	}

	for (i = 0; i < gm->nr; i++) {
		const struct guestmem_region *g = &gm->r[i];

		if (!g->hva || g->fd < 0) {
			kvmlu_err(err, errlen, 0, "memslot %u: region at gpa 0x%llx is not mapped",
				      g->slot, (unsigned long long)g->gpa);
			ret = -EINVAL;
			goto err_unbind;
		}
		ret = guestmem_set_slot(gm, i, vm_fd, 0);
		if (ret) {
			kvmlu_err(err, errlen, 0,
				      "KVM_SET_USER_MEMORY_REGION2 slot %u gpa 0x%llx size 0x%llx (%s fd %d): %s",
				      g->slot, (unsigned long long)g->gpa,
				      (unsigned long long)g->size,
				      guestmem_backend_name(gm->backend), g->fd, strerror(-ret));
			goto err_unbind;
		}
	}
	return 0;

err_unbind:
	while (i-- > 0)
		guestmem_unbind_slot(vm_fd, gm->r[i].slot);
	return ret;
}

void guestmem_unbind(const struct guestmem *gm, int vm_fd)
{
	for (unsigned int i = 0; i < gm->nr && i < GUESTMEM_MAX_REGIONS; i++)
		guestmem_unbind_slot(vm_fd, gm->r[i].slot);
}
