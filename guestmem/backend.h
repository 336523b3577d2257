/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two kinds of file guest RAM can live in, as guestmem.c sees them:
 * make a file of a given size, or vet a file someone handed us. Internal to
 * guestmem/. Each create returns the new fd (no close-on-exec: the file must
 * outlive an exec on upgrade) or -errno; each check returns 0 or -errno and
 * leaves the fd alone either way.
 */
#ifndef KVMLU_GUESTMEM_BACKEND_H
#define KVMLU_GUESTMEM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* memfd_backend.c */
int guestmem_memfd_create(uint64_t size, const char *name, char *err, size_t errlen);
int guestmem_memfd_check(int fd, uint64_t need, char *err, size_t errlen);

/* guest_memfd_backend.c */
int guestmem_gmem_probe(int vm_fd, char *err, size_t errlen);
int guestmem_gmem_create(int vm_fd, uint64_t size, char *err, size_t errlen);
int guestmem_gmem_check(int fd, uint64_t need, char *err, size_t errlen);

/* memslot.c: delete every slot of gm from vm_fd (before binding new files). */
struct guestmem;
void guestmem_unbind(const struct guestmem *gm, int vm_fd);
/*
 * Set region i's memslot with extra KVM_MEM_* flags (dirty_log.c turns
 * logging on and off this way: a flags-only change KVM allows while the
 * vCPUs run). 0 or -errno.
 */
int guestmem_set_slot(const struct guestmem *gm, unsigned int i, int vm_fd, uint32_t flags);

#endif /* KVMLU_GUESTMEM_BACKEND_H */
