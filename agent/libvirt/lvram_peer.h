/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who may have RAM the agent holds (docs/libvirt.md, "Replacing a
 * domain's QEMU"): the process on the other end of the lvram socket must
 * run as the user the domain's QEMU ran as (SO_PEERCRED uid), and its
 * command line must carry the domain's UUID as its one -uuid. kvmlu-qemu
 * asks before it execs QEMU, and exec keeps the pid, so the pid asking is
 * the QEMU that will map the RAM. The command line is read as the kernel
 * gives it, NUL-separated, untrusted.
 */
#ifndef KVMLU_LIBVIRT_LVRAM_PEER_H
#define KVMLU_LIBVIRT_LVRAM_PEER_H

#include <stddef.h>
#include <sys/types.h>

#include "agent/libvirt/lvram_request.h"

#define LVRAM_CMDLINE_MAX	(256 * 1024)	/* bytes of /proc/<pid>/cmdline read */

/*
 * The value of the one "-uuid" token of cmdline[0..len) (NUL-separated)
 * into uuid. -ENOENT: none; -EINVAL: two, or not a lowercase UUID.
 */
int lvram_cmdline_uuid(const char *cmdline, size_t len, char uuid[LVRAM_UUID_LEN + 1],
		       char *err, size_t errlen);

/*
 * The checks on a peer: its uid is want_uid, and its command line
 * (cmdline[0..len)) has uuid as its one -uuid. 0, or -EPERM with err.
 */
int lvram_peer_check(uid_t peer_uid, uid_t want_uid, const char *uuid, const char *cmdline,
		     size_t len, char *err, size_t errlen);

/* /proc/<pid>/cmdline into buf (at most buflen bytes; more is -E2BIG). */
int lvram_read_cmdline(pid_t pid, char *buf, size_t buflen, size_t *len, char *err,
		       size_t errlen);

#endif /* KVMLU_LIBVIRT_LVRAM_PEER_H */
