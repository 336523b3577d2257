/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The address of a kvmlu control socket. A path names a socket file; a
 * name starting with '@' is in Linux's abstract namespace, which needs no
 * directory and so can always be bound: a VMM that holds a restored VM
 * but cannot bind its --control path listens on KVMLU_HELD_SOCKET_FMT
 * (vmm/live_update/hold.c) and the agent looks there.
 */
#ifndef KVMLU_UNIX_ADDR_H
#define KVMLU_UNIX_ADDR_H

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Where a held VM's VMM answers when its --control path cannot be bound. */
#define KVMLU_HELD_SOCKET_FMT "@kvmlu/held/%s"

static inline int kvmlu_unix_addr(const char *name, struct sockaddr_un *sa, socklen_t *len)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!n || n >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, name, n);
	if (name[0] == '@')
		sa->sun_path[0] = '\0';	/* abstract: the length, not a NUL, ends it */
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '@' ? 0 : 1));
	return 0;
}

static inline int kvmlu_unix_is_abstract(const char *name)
{
	return name[0] == '@';
}

#endif /* KVMLU_UNIX_ADDR_H */
