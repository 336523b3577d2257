/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who may talk to the agent: root, or a process whose primary or
 * supplementary groups include the configured group. Checked on every
 * accepted connection from the kernel's view of the peer (SO_PEERCRED,
 * SO_PEERGROUPS), on top of the socket's 0660 root:group mode.
 */
#ifndef KVMLU_PEER_AUTH_H
#define KVMLU_PEER_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The decision alone, for tests: groups are the peer's supplementary groups. */
bool peer_auth_allowed(uid_t uid, gid_t gid, const gid_t *groups, size_t n,
		       bool have_group, gid_t allowed);

/* 0 if the peer on fd may use the agent, else -EACCES with who it was. */
int peer_auth_check(int fd, bool have_group, gid_t allowed, char *err, size_t errlen);

#endif /* KVMLU_PEER_AUTH_H */
