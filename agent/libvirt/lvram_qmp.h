/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmlu's QMP steps around a QEMU replacement (docs/libvirt.md,
 * "Replacing a domain's QEMU"), on the socket kvmlu-qemu adds
 * (<qmp_dir>/<uuid>.qmp). Each step connects anew and checks that the
 * process answering is the QEMU meant (SO_PEERCRED pid), so a stale or
 * foreign socket at that path is never believed.
 *
 *   lvram_qmp_check_ram      pc.ram is the one backend, shared, of size
 *                            bytes (a non-shared block would be migrated, or
 *                            on a restore silently zeroed: design fact 3);
 *   lvram_qmp_ignore_shared  x-ignore-shared set to on or off, read back;
 *   lvram_qmp_paused         the QEMU is paused and not in an incoming
 *                            migration any more.
 */
#ifndef KVMLU_LIBVIRT_LVRAM_QMP_H
#define KVMLU_LIBVIRT_LVRAM_QMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/libvirt/qmp_client.h"

#define LVRAM_QMP_TIMEOUT_MS	5000	/* per answer */

/*
 * Connect to path, retrying for up to wait_ms (a QEMU just exec'd has not
 * made its socket yet; the wait ends early if pid is gone), as pid's. 0: c
 * open. -ESRCH: another process answers.
 */
int lvram_qmp_connect(struct qmp_client *c, const char *path, pid_t pid, int wait_ms,
		      char *err, size_t errlen);

int lvram_qmp_check_ram(struct qmp_client *c, uint64_t size, char *err, size_t errlen);
int lvram_qmp_ignore_shared(struct qmp_client *c, bool on, char *err, size_t errlen);
int lvram_qmp_paused(struct qmp_client *c, char *err, size_t errlen);

/* <qmp_dir>/<uuid>.qmp into buf. -ENAMETOOLONG. */
int lvram_qmp_path(const char *qmp_dir, const char *uuid, char *buf, size_t buflen);

#endif /* KVMLU_LIBVIRT_LVRAM_QMP_H */
