/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state memfd: the VM state FDT in a sealed memfd, how both update
 * mechanisms hand a paused VM's state to the next VMM. In a host update
 * it is the one file of a VM's LUO session that is not guest RAM; in a
 * live upgrade it goes to the new process with the RAM files over the
 * upgrade socket (vmm/upgrade/upgrade_wire.h).
 *
 * Lifecycle: the old side (prepare-update, or upgrade) writes the FDT
 * into a fresh memfd and seals it (no write, grow or shrink: what the
 * kernel preserves or the new process reads is exactly what was
 * captured) before preserving it under LUO_TOKEN_STATE or sending it.
 * The new side (`kvmlu-vmm restore --session` after the kexec, or
 * `kvmlu-vmm incoming`) reads it back; an unsealed file is refused, and
 * its contents are untrusted until the state validation accepted them.
 */
#ifndef KVMLU_STATE_MEMFD_H
#define KVMLU_STATE_MEMFD_H

#include <stddef.h>

/* Largest state FDT accepted back (many vCPUs with big XSAVE areas). */
#define STATE_MEMFD_MAX_BYTES	(64u << 20)

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
