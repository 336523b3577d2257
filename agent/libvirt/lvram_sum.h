/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checksum of a domain's RAM memfd: guestmem's XXH3-128 (the same
 * digest kvmlu-vmm records at a pause), over one region at GPA 0 the size
 * of the file. Only meaningful while no vCPU writes to it.
 */
#ifndef KVMLU_LIBVIRT_LVRAM_SUM_H
#define KVMLU_LIBVIRT_LVRAM_SUM_H

#include <stddef.h>

/* fd stays the caller's. sum: 32 hex digits. 0 or -errno with err. */
int lvram_sum(int fd, char sum[33], char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_LVRAM_SUM_H */
