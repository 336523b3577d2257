/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest_memfd memory given to another VM without copying: the project's
 * kernel patch (kernel/patches/0002, kernel/README.md) adds the VM ioctl
 * KVM_LINK_GUEST_MEMFD, advertised by KVM_CAP_GUEST_MEMFD_LINK. It takes
 * a shared guest_memfd of any VM, or of no VM (one retrieved from a LUO
 * session after a kexec), and returns a guest_memfd of the calling VM on
 * the same memory.
 *
 * Lifecycle: a new VM is created with fresh guest_memfd files (cheap:
 * nothing is allocated until touched), then guestmem_gmem_relink() swaps
 * them for links to the files it was given: the old VMM's on live
 * upgrade, the retrieved ones after a kexec. The given files stay the
 * caller's and may be closed afterwards: the links hold the memory.
 * Stock kernels lack the ioctl; callers either fall back (live upgrade
 * copies) or refuse with the message these functions write.
 */
#ifndef KVMLU_GUESTMEM_GMEM_LINK_H
#define KVMLU_GUESTMEM_GMEM_LINK_H

#include <stddef.h>

#include "guestmem/guestmem.h"

/* 1 if vm_fd can KVM_LINK_GUEST_MEMFD, 0 if not, -errno if it cannot say. */
int guestmem_gmem_can_link(int vm_fd, char *err, size_t errlen);

/*
 * KVM_LINK_GUEST_MEMFD: a new guest_memfd fd of vm_fd on src_fd's memory
 * (no close-on-exec, like every RAM file), or -errno. -EOPNOTSUPP with
 * "kernel cannot link guest_memfd (needs kvmlu kernel patch)" when the
 * kernel lacks KVM_CAP_GUEST_MEMFD_LINK.
 */
int guestmem_gmem_link(int vm_fd, int src_fd, char *err, size_t errlen);

/*
 * gm is the guest_memfd RAM of vm_fd, created and bound (vm_create()):
 * replace each region's file by a link to src_fds[i], mapped and bound in
 * the same slots; the files gm held are closed. On error gm and the VM's
 * memslots are as before and src_fds are untouched.
 */
int guestmem_gmem_relink(struct guestmem *gm, int vm_fd, const int *src_fds,
			 char *err, size_t errlen);

#endif /* KVMLU_GUESTMEM_GMEM_LINK_H */
