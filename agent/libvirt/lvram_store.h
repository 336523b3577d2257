/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RAM the agent holds for libvirt domains whose QEMU it is replacing
 * (docs/libvirt.md, "Replacing a domain's QEMU"): per domain UUID the
 * memfd (the agent's own reference), its size, the checksum taken while
 * the guest was paused, and the uid the old QEMU ran as (only that user
 * may have it back). One table per agent, locked: the replace command
 * fills it, the lvram socket's threads give from it.
 *
 * Each held RAM is given once, and only while the replace command waits
 * for it (lvram_store_expect: its own start of the domain): the first
 * checked request then gets a dup of the memfd, a second is refused until
 * lvram_store_ungive (the start failed). A start by anyone else (virsh
 * start) is refused, so the domain never runs on held RAM that nobody
 * verifies. The agent keeps its own reference until
 * lvram_store_release, so the RAM never depends on a QEMU staying up.
 */
#ifndef KVMLU_LIBVIRT_LVRAM_STORE_H
#define KVMLU_LIBVIRT_LVRAM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/libvirt/lvram_request.h"

#define LVRAM_STORE_MAX		64
#define LVRAM_SUM_LEN		32	/* hex digits of the guestmem checksum */

struct lvram_held_info {
	uint64_t size;
	uid_t uid;
	char sum[LVRAM_SUM_LEN + 1];	/* at the pause */
	/*
	 * As given to the new QEMU, taken while it waits for the agent on
	 * kvmlu's QMP socket (wait=on) and has not mapped it yet; "" until
	 * then. The sum before the guest runs: once QEMU loads the vCPUs'
	 * state, KVM itself writes to the RAM (the kvmclock wall-clock
	 * struct, on the restore of MSR_KVM_WALL_CLOCK_NEW), so a sum taken
	 * after the load never equals the pause's on a KVM domain.
	 */
	char sum_given[LVRAM_SUM_LEN + 1];
	/*
	 * Hashed equal to sum since it came into the agent's hands, and given
	 * to no QEMU since (lvram_store_set_verified): the next give takes
	 * sum as sum_given without hashing again, once.
	 */
	bool verified;
	bool expected;			/* the agent's own start waits for it */
	bool given;
	pid_t given_pid;		/* the QEMU that has it, while given */
};

/* Hold fd (taken: closed on release or on error) for uuid. -EEXIST, -ENOSPC. */
int lvram_store_hold(const char *uuid, int fd, uint64_t size, uid_t uid, const char *sum);

/*
 * A request for uuid's RAM from peer (uid, pid, its command line). 0:
 * *fd is a new reference for the peer (close-on-exec), the entry is
 * given. -ENOENT: nothing held (the wrapper makes a new memfd). -EPERM
 * (peer checks, lvram_peer.h), -EAGAIN (not expected now), -EBUSY (given
 * already), -EINVAL (size differs): refused, err says why, nothing
 * changes.
 */
int lvram_store_give(const struct lvram_request *rq, uid_t peer_uid, pid_t peer_pid,
		     const char *cmdline, size_t len, int *fd, char *err, size_t errlen);
/* The RAM back in the agent's hands only: may be given again. */
void lvram_store_ungive(const char *uuid);
/* Whether a request for uuid's RAM is expected now (the agent's own start). */
void lvram_store_expect(const char *uuid, bool expect);

/*
 * What the agent did in the new QEMU before libvirt's migrate-incoming
 * (lvram_server.h): rc 0 or -errno, with why, from the QEMU pid that was
 * given the RAM (a late word from an earlier start's QEMU is dropped).
 * Waiting ends at it or after timeout_ms (-ETIMEDOUT), and at once if
 * nothing is held (-ENOENT).
 */
void lvram_store_set_incoming(const char *uuid, pid_t pid, int rc, const char *why);
int lvram_store_wait_incoming(const char *uuid, int timeout_ms, char *why, size_t whylen);

/*
 * The sum of the RAM as given to pid (sum_given above). Kept only while
 * the RAM is still given to that pid; a later give or ungive clears it.
 */
void lvram_store_set_sum_given(const char *uuid, pid_t pid, const char *sum);

/*
 * uuid's RAM was hashed equal to its sum after it came to the agent (the
 * restore after a kexec, after RETRIEVE), and only the agent has had it
 * since: its next give needs no hash of its own (sum_given above). A give
 * ends it: a QEMU that had the RAM may have changed it.
 */
void lvram_store_set_verified(const char *uuid);

/* A dup of the held fd and its info (for hashing). -ENOENT. */
int lvram_store_get(const char *uuid, int *fd, struct lvram_held_info *info);
bool lvram_store_held(const char *uuid);
/* Forget uuid's RAM and close the agent's reference. */
void lvram_store_release(const char *uuid);

#endif /* KVMLU_LIBVIRT_LVRAM_STORE_H */
