/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two halves of domain-replace-qemu (qemu_replace.h), also used by
 * host-update for a domain whose RAM stays in place (lvram_inplace.h):
 *
 *   save_and_hold        running -> shut off with a managed save of its
 *                        device state only, its RAM memfd hashed and held
 *                        in lvram_store.h (qemu_uid: who may have it back).
 *                        On failure the domain runs again on its old QEMU,
 *                        or is lost (QEMU died during the save), err says.
 *   restart_and_verify   shut off with its managed save and its RAM held
 *                        -> running on a new QEMU that maps the held RAM
 *                        (START_PAUSED, x-ignore-shared set by the lvram
 *                        socket before libvirt's migrate-incoming, off
 *                        again once paused), the RAM hashed again (unless
 *                        verified: it was hashed equal before the start)
 *                        and compared with the held sum; equal: resumed.
 *
 * Each returns 0 or -errno with err and cls (the error class) set.
 */
#ifndef KVMLU_LIBVIRT_QEMU_REPLACE_JOB_H
#define KVMLU_LIBVIRT_QEMU_REPLACE_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <libvirt/libvirt.h>

#include "agent/libvirt/lvram_request.h"
#include "agent/libvirt/lvram_store.h"

struct qemu_replace_job {
	virConnectPtr conn;
	virDomainPtr dom;
	char uuid[LVRAM_UUID_LEN + 1];
	char name[256];
	char qmp_dir[108];
	bool verified;			/* restart: skip the second hash */
	/*
	 * host-update after a kexec (lvram_inplace.h): the managed-save
	 * image, from which a domain libvirtd no longer knows is defined
	 * again (defined says it was).
	 */
	const char *image_path;
	bool defined;
	/*
	 * save_and_hold: called with the taken RAM memfd (the caller's to dup,
	 * not to keep) once x-ignore-shared is on, while the guest still runs
	 * (host-update preserves the RAM in LUO here: its cost stays out of
	 * the pause). Nonzero: nothing suspended, the capability off again,
	 * the error is why's.
	 */
	int (*before_suspend)(struct qemu_replace_job *job, int ram_fd, char *why, size_t n);
	void *arg;			/* before_suspend's */
	pid_t old_pid, new_pid;
	uid_t qemu_uid;			/* the old QEMU's, set by save_and_hold */
	int64_t image_bytes;		/* -1 unknown */
	uint64_t size;
	char sum[LVRAM_SUM_LEN + 1], sum_after[LVRAM_SUM_LEN + 1];
	const char *cls;		/* error class when failing */
	char err[768];
};

int qemu_replace_save_and_hold(struct qemu_replace_job *r);
int qemu_replace_restart_and_verify(struct qemu_replace_job *r);

#endif /* KVMLU_LIBVIRT_QEMU_REPLACE_JOB_H */
