/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state memfd of a host update: the VM state FDT in a sealed memfd,
 * the one file of a VM's LUO session that is not guest RAM.
 *
 * Lifecycle: prepare-update writes the FDT into a fresh memfd and seals
 * it (no write, grow or shrink: what the kernel preserves is exactly what
 * was captured) before preserving it under LUO_TOKEN_STATE. After the
 * kexec, `kvmlu-vmm restore --session` reads it back from the retrieved
 * fd; its contents are untrusted until the state validation accepted
 * them.
 */
#ifndef KVMLU_STATE_MEMFD_H
#define KVMLU_STATE_MEMFD_H

#include <stddef.h>

/* Largest state FDT accepted back (many vCPUs with big XSAVE areas). */
#define LIVE_UPDATE_STATE_MAX_BYTES	(64u << 20)

/* A sealed memfd named "kvmlu-state:<vm_name>" holding blob; *fd on success. */
int state_memfd_create(const char *vm_name, const void *blob,
				   size_t len, int *fd, char *err, size_t errlen);

/*
 * Read the whole file fd into a malloc'd buffer (*blob, *len); refuses an
 * empty file, one larger than max bytes, and one that is not sealed
 * against writes (someone could change it while it is being read).
 */
int state_memfd_read(int fd, size_t max, void **blob, size_t *len,
				 char *err, size_t errlen);

#endif /* KVMLU_STATE_MEMFD_H */
