// SPDX-License-Identifier: GPL-2.0
/* Peer credential check of agent connections (see peer_auth.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "agent/daemon/peer_auth.h"
#include "common/err.h"

#define PEER_MAX_GROUPS 256

bool peer_auth_allowed(uid_t uid, gid_t gid, const gid_t *groups, size_t n,
		       bool have_group, gid_t allowed)
{
	if (uid == 0)
		return true;
	if (!have_group)
		return false;
	if (gid == allowed)
		return true;
	for (size_t i = 0; i < n; i++)
		if (groups[i] == allowed)
			return true;
	return false;
}

int peer_auth_check(int fd, bool have_group, gid_t allowed, char *err, size_t errlen)
{
	gid_t groups[PEER_MAX_GROUPS];
	socklen_t len = sizeof(struct ucred);
	struct ucred cred;
	size_t n = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return kvmlu_err(err, errlen, -errno, "SO_PEERCRED: %s", strerror(errno));
	len = sizeof(groups);
	/* An ERANGE (too many groups) just leaves the supplementary list out. */
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		n = len / sizeof(gid_t);
	if (peer_auth_allowed(cred.uid, cred.gid, groups, n, have_group, allowed))
		return 0;
	return kvmlu_err(err, errlen, -EACCES,
			 "uid %u gid %u (pid %d) is not root and not in the agent's group",
			 (unsigned int)cred.uid, (unsigned int)cred.gid, (int)cred.pid);
}
