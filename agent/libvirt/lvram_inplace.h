/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One libvirt domain's RAM kept in place across a host update
 * (docs/libvirt-ram-in-place.md, section 8, "In host-update"): the
 * update's phases for a domain the classifier accepted, around the two
 * halves of domain-replace-qemu (qemu_replace_job.h) and a LUO session.
 *
 *   prepare   save_and_hold (x-ignore-shared; while the guest still runs
 *             LUO session kvmlu/lv/<uuid> created and the RAM memfd
 *             preserved in it, token LVRAM_TOKEN_RAM; then suspend, managed
 *             save of device state only, the RAM hashed and held), then
 *             the managed-save image copied into a sealed memfd (the file
 *             may be on a file system the kexec loses), its XXH64 taken,
 *             and preserved too (LVRAM_TOKEN_IMAGE).
 *             The session stays open until the kexec. The report gets
 *             what the next kernel needs: session, checksum, sizes, the
 *             image's path, owner and mode, the QEMU's uid.
 *   rollback  (same kernel, before the kexec) the session closed (the
 *             kernel unpreserves), restart_and_verify from the RAM still
 *             held: running again on a new QEMU.
 *   restore   (the next kernel, kvmlu-agent.service, libvirtd answering)
 *             the session retrieved, both files taken, the image checked
 *             against its XXH64, the RAM hashed and compared with the sum
 *             at the pause before anything runs on it; equal: the image
 *             written back where libvirt keeps the managed save, the RAM
 *             held (lvram_store.h), the session finished, then
 *             restart_and_verify (no second hash): running. Different, or
 *             the session or a file missing: not started, nothing
 *             cold-booted, the report says why and what a person can do.
 *
 * The steps that reach libvirt and the kernel go through struct
 * lvram_inplace_ops, so the unit tests run every branch without
 * libvirtd or /dev/liveupdate; the program uses lvram_inplace_real.
 */
#ifndef KVMLU_LIBVIRT_LVRAM_INPLACE_H
#define KVMLU_LIBVIRT_LVRAM_INPLACE_H

#include <stddef.h>
#include <stdint.h>

#include <libvirt/libvirt.h>

#include "agent/journal/domain_report.h"
#include "agent/libvirt/qemu_replace_job.h"
#include "common/luo_session.h"

#define LVRAM_TOKEN_RAM		LUO_TOKEN_RAM(0)
#define LVRAM_TOKEN_IMAGE	LUO_TOKEN_STATE

struct lvram_inplace_ops {
	/* qemu_replace_job.h's halves; job->dom NULL: looked up by job->uuid. */
	int (*save_and_hold)(struct qemu_replace_job *job);
	int (*restart)(struct qemu_replace_job *job);
	/* common/luo_session.h's */
	int (*create)(struct luo_session *s, const char *name, char *err, size_t errlen);
	int (*retrieve)(struct luo_session *s, const char *name, char *err, size_t errlen);
	int (*preserve_fd)(struct luo_session *s, int fd, uint64_t token, const char *what,
			   char *err, size_t errlen);
	int (*retrieve_fd)(struct luo_session *s, uint64_t token, const char *what, int *fd,
			   char *err, size_t errlen);
	int (*finish)(struct luo_session *s, char *err, size_t errlen);
	void (*close)(struct luo_session *s);
};

extern const struct lvram_inplace_ops lvram_inplace_real;

/* Tests: other steps (NULL: lvram_inplace_real again). */
void lvram_inplace_set_ops(const struct lvram_inplace_ops *ops);

/* Where libvirt keeps d's managed save: <save_dir>/<name>.save. -ENAMETOOLONG. */
int lvram_inplace_image_path(const char *save_dir, const char *name, char *buf, size_t len);

/*
 * Dry run: kvmlu's QMP socket of d's QEMU answers as that QEMU and takes
 * x-ignore-shared on and off again (read back each time), so a real
 * update could drive it. Nothing else is touched; 0 or -errno with err.
 */
int lvram_inplace_probe(const struct libvirt_domain_report *d, const char *qmp_dir, char *err,
			size_t errlen);

/*
 * d running (listed, accepted). 0: d saved, in_place, its fields set, sess
 * open until the kexec. Else -errno with err, and d either running again
 * (failed, the error says), or saved in place with sess closed or open:
 * the caller's rollback brings it back (lvram_inplace_rollback).
 */
int lvram_inplace_prepare(virConnectPtr conn, struct libvirt_domain_report *d,
			  const char *qmp_dir, const char *save_dir, struct luo_session *sess,
			  char *err, size_t errlen);

/* d saved in place, before the kexec: running again (resumed) or failed. */
int lvram_inplace_rollback(virConnectPtr conn, struct libvirt_domain_report *d,
			   const char *qmp_dir, struct luo_session *sess, char *err, size_t errlen);

/* d saved in place, after the kexec: restored, or failed with why and how. */
int lvram_inplace_restore(virConnectPtr conn, struct libvirt_domain_report *d,
			  const char *qmp_dir, char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_LVRAM_INPLACE_H */
