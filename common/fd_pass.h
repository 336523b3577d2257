/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Handing open files to another process over a UNIX socket (SCM_RIGHTS):
 * up to FD_PASS_MAX_FDS fds plus a small byte payload in one message.
 *
 * Used on a VMM live upgrade: the old process sends the guest RAM files,
 * the state memfd and the control socket; the new one receives them and
 * adopts them. A message on the wire is a 16-byte header (magic, fd count,
 * payload length, all host order - both ends are on the same machine),
 * with the fds attached to it, then the payload. The receiver checks that
 * the fds it got are exactly the ones the header announces; on any error it
 * closes every fd that did arrive, so nothing leaks into the process.
 * Works on SOCK_STREAM and SOCK_SEQPACKET sockets.
 */
#ifndef KVMLU_FD_PASS_H
#define KVMLU_FD_PASS_H

#include <stddef.h>

#define FD_PASS_MAX_FDS		64		/* kernel limit SCM_MAX_FD is 253 */
#define FD_PASS_MAX_DATA	(64U << 10)	/* payload bytes per message */

/* fd_pass_recv() flags */
#define FD_PASS_CLOEXEC		1U	/* received fds get FD_CLOEXEC */

/*
 * Send nfds fds (0 to FD_PASS_MAX_FDS) and len payload bytes (0 to
 * FD_PASS_MAX_DATA) as one message. The fds stay open in the sender.
 */
int fd_pass_send(int sock, const int *fds, unsigned int nfds,
		 const void *data, size_t len, char *err, size_t errlen);

/*
 * Receive one message: at most max_fds fds into fds[], *nfds set to how
 * many; at most buflen payload bytes into buf, *len set to how many. A
 * message with more fds or a longer payload than that is an error
 * (-EMSGSIZE), as are a truncated or malformed message (-EPROTO) and a peer
 * that closed the socket (-ECONNRESET). On error *nfds is 0 and no
 * received fd is left open.
 */
int fd_pass_recv(int sock, int *fds, unsigned int max_fds, unsigned int *nfds,
		 void *buf, size_t buflen, size_t *len, unsigned int flags,
		 char *err, size_t errlen);

#endif /* KVMLU_FD_PASS_H */
