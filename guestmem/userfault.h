/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A userfaultfd in shmem minor-fault mode, as lazy_verify.c uses it:
 * open with UFFD_FEATURE_MINOR_SHMEM, register ranges, map verified
 * pages (UFFDIO_CONTINUE), read faults, unregister. Internal to
 * guestmem/; wraps each ioctl once and keeps its name in the error.
 */
#ifndef KVMLU_GUESTMEM_USERFAULT_H
#define KVMLU_GUESTMEM_USERFAULT_H

#include <stddef.h>
#include <stdint.h>

/*
 * A non-blocking, close-on-exec userfaultfd that also takes faults KVM
 * raises from the kernel (so not UFFD_USER_MODE_ONLY), with shmem minor
 * faults. The fd, or -errno with the reason in err.
 */
int guestmem_userfault_open(char *err, size_t errlen);

/* Register [addr, addr + len) for minor faults; needs UFFDIO_CONTINUE. */
int guestmem_userfault_register(int uffd, void *addr, uint64_t len, char *err, size_t errlen);
int guestmem_userfault_unregister(int uffd, void *addr, uint64_t len);

/*
 * Map every page of [addr, addr + len) from the page cache, skipping
 * pages already mapped, then wake whoever waits on the range.
 */
int guestmem_userfault_continue(int uffd, void *addr, uint64_t len);

/* Wake waiters on [addr, addr + len) without mapping anything. */
int guestmem_userfault_wake(int uffd, void *addr, uint64_t len);

/*
 * Read up to max pending page-fault addresses; 0 when none is pending,
 * else how many, or -errno. Other events are skipped.
 */
int guestmem_userfault_read(int uffd, uint64_t *addrs, unsigned int max);

#endif /* KVMLU_GUESTMEM_USERFAULT_H */
