/* SPDX-License-Identifier: GPL-2.0 */
/*
 * domain-replace-qemu: a running libvirt domain gets a new QEMU process
 * (after a QEMU package update, say) with its RAM kept in place, on the
 * same kernel (docs/libvirt.md, "Replacing a domain's QEMU"):
 *
 *   check    running, started through kvmlu-qemu (qemu_ram_fd.h), kvmlu's
 *            QMP socket answers as that QEMU, pc.ram alone, shared, a
 *            multiple of 2 MiB;
 *   take     the RAM memfd (pidfd_getfd), checked against QEMU's maps;
 *   save     x-ignore-shared on (read back), virDomainSuspend,
 *            virDomainManagedSave: the image holds device state only
 *            (checked with the save's job statistics);
 *   hold     the RAM hashed (guestmem) and held (lvram_store.h);
 *   restart  virDomainCreateWithFlags(START_PAUSED): kvmlu-qemu asks the
 *            lvram socket and gets the held memfd; the agent sets
 *            x-ignore-shared in the new QEMU before libvirt's
 *            migrate-incoming (lvram_server.h);
 *   verify   once paused: x-ignore-shared off again (later saves carry
 *            RAM), the RAM hashed again; equal: virDomainResume; not
 *            equal (or no sum from the pause): left paused,
 *            ChecksumMismatch with both sums.
 *
 * A shut-off domain whose RAM the agent still holds (a restart that
 * failed) and that has its managed-save image goes straight to restart:
 * that is the retry. One replacement at a time (Busy).
 */
#ifndef KVMLU_LIBVIRT_QEMU_REPLACE_H
#define KVMLU_LIBVIRT_QEMU_REPLACE_H

struct agent_config;
struct json_line_request;
struct json_object;

#include <stddef.h>

/* The reply to a domain-replace-qemu request (a new object). */
struct json_object *qemu_replace_command(const struct agent_config *cfg,
					 const struct json_line_request *rq);

/*
 * At the agent's start: read kvmlu-qemu's configuration (cfg's
 * qemu_config) and serve its lvram socket. -ENOENT: no such file (no
 * domains through kvmlu-qemu here; nothing served).
 */
int qemu_replace_start(const struct agent_config *cfg, char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_QEMU_REPLACE_H */
