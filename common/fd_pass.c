// SPDX-License-Identifier: GPL-2.0
/*
 * fd passing over UNIX sockets (SCM_RIGHTS); the wire format is described
 * in fd_pass.h.
 *
 * Lifecycle of one handoff: the old VMM calls fd_pass_send() once per
 * message, the new VMM fd_pass_recv() once per message. Everything the
 * receiver gets is outside input: the header is checked, the fd count is
 * compared with what the kernel delivered, and on every error path the fds
 * that arrived are closed before returning, so a bad or hostile sender
 * cannot leave files open in the receiver.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fd_pass.h"

#define FD_PASS_MAGIC 0x4446564bU	/* "KVFD" read as little-endian bytes */

struct fd_pass_hdr {
	uint32_t magic;
	uint32_t nfds;
	uint32_t len;
	uint32_t reserved;	/* 0 */
};

/* Control buffer for FD_PASS_MAX_FDS, aligned the way cmsg needs it. */
union fd_pass_cmsg_buf {
	char buf[CMSG_SPACE(sizeof(int) * FD_PASS_MAX_FDS)];
	struct cmsghdr align;
};

static int fd_pass_send_rest(int sock, const char *p, size_t left, char *err, size_t errlen)
{
	while (left) {
		ssize_t n = send(sock, p, left, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int ret = -errno;

			kvmlu_err(err, errlen, 0, "fd_pass: send on socket %d: %s",
				      sock, strerror(errno));
			return ret;
		}
		p += n;
		left -= (size_t)n;
	}
	return 0;
}

int fd_pass_send(int sock, const int *fds, unsigned int nfds,
		 const void *data, size_t len, char *err, size_t errlen)
{
	union fd_pass_cmsg_buf cbuf;
	struct fd_pass_hdr hdr;
	struct msghdr msg;
	struct iovec iov[2];
	unsigned int i;
	size_t total;
	ssize_t n;

	if (nfds > FD_PASS_MAX_FDS || (nfds && !fds)) {
		kvmlu_err(err, errlen, 0, "fd_pass: cannot send %u fds (at most %u)",
			      nfds, FD_PASS_MAX_FDS);
		return -EINVAL;
	}
	if (len > FD_PASS_MAX_DATA || (len && !data)) {
		kvmlu_err(err, errlen, 0, "fd_pass: payload of %zu bytes too large (at most %u)",
			      len, FD_PASS_MAX_DATA);
		return -EMSGSIZE;
	}
	for (i = 0; i < nfds; i++) {
		if (fds[i] < 0 || fcntl(fds[i], F_GETFD) < 0) {
			kvmlu_err(err, errlen, 0, "fd_pass: fd %u to send (%d) is not open", i, fds[i]);
			return -EBADF;
		}
	}

	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = FD_PASS_MAGIC;
	hdr.nfds = nfds;
	hdr.len = (uint32_t)len;
	iov[0].iov_base = &hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)data;
	iov[1].iov_len = len;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = len ? 2 : 1;
	if (nfds) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}

	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int ret = -errno;

		kvmlu_err(err, errlen, 0, "fd_pass: sendmsg of %u fds and %zu bytes on socket %d: %s",
			      nfds, len, sock, strerror(errno));
		return ret;
	}
	/* A stream socket may take part of it; the fds went with the first byte. */
	total = sizeof(hdr) + len;
	if ((size_t)n < total) {
		size_t done = (size_t)n;

		if (done < sizeof(hdr)) {
			int ret = fd_pass_send_rest(sock, (const char *)&hdr + done,
						    sizeof(hdr) - done, err, errlen);
			if (ret)
				return ret;
			done = sizeof(hdr);
		}
		return fd_pass_send_rest(sock, (const char *)data + (done - sizeof(hdr)),
					 total - done, err, errlen);
	}
	return 0;
}

/* Read exactly len bytes (stream sockets), no control data expected. */
static int fd_pass_read_full(int sock, void *p, size_t len, const char *what,
			     char *err, size_t errlen)
{
	char *c = p;

	while (len) {
		ssize_t n = recv(sock, c, len, MSG_WAITALL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int ret = -errno;

			kvmlu_err(err, errlen, 0, "fd_pass: recv %s on socket %d: %s",
				      what, sock, strerror(errno));
			return ret;
		}
		if (n == 0) {
			kvmlu_err(err, errlen, 0, "fd_pass: socket %d closed in the middle of the %s",
				      sock, what);
			return -EPROTO;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Take every fd the kernel installed, even from a truncated cmsg. */
static unsigned int fd_pass_collect(struct msghdr *msg, int *got, unsigned int cap)
{
	unsigned int nr = 0;
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t i, n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n && nr < cap; i++)
			memcpy(&got[nr++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	return nr;
}

static void fd_pass_close_all(const int *got, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		close(got[i]);
}

int fd_pass_recv(int sock, int *fds, unsigned int max_fds, unsigned int *nfds,
		 void *buf, size_t buflen, size_t *len, unsigned int flags,
		 char *err, size_t errlen)
{
	/* Room for every fd a sender may attach, so excess ones are seen and closed. */
	int got[FD_PASS_MAX_FDS + 8];
	union fd_pass_cmsg_buf cbuf;
	struct fd_pass_hdr hdr;
	struct iovec iov[2];
	struct msghdr msg;
	unsigned int nr = 0;
	socklen_t optlen = sizeof(int);
	int type = 0, ret;
	ssize_t n;
	size_t have;

	if (!nfds || !len || (max_fds && !fds) || (buflen && !buf))
		return -EINVAL;
	*nfds = 0;
	*len = 0;
	if (flags & ~FD_PASS_CLOEXEC) {
		kvmlu_err(err, errlen, 0, "fd_pass: unknown recv flags 0x%x", flags);
		return -EINVAL;
	}
	if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &optlen) < 0) {
		ret = -errno;
		kvmlu_err(err, errlen, 0, "fd_pass: socket %d: SO_TYPE: %s", sock, strerror(errno));
		return ret;
	}

	memset(&msg, 0, sizeof(msg));
	iov[0].iov_base = &hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = buf;
	iov[1].iov_len = buflen;
	msg.msg_iov = iov;
	/*
	 * A stream has no message boundaries: read only the header now so the
	 * next message's bytes stay in the socket. A seqpacket message must be
	 * read in one go or its tail is lost.
	 */
	msg.msg_iovlen = (type == SOCK_STREAM || !buflen) ? 1 : 2;
	msg.msg_control = cbuf.buf;
	msg.msg_controllen = sizeof(cbuf.buf);

	do
		n = recvmsg(sock, &msg, (flags & FD_PASS_CLOEXEC) ? MSG_CMSG_CLOEXEC : 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		ret = -errno;
		kvmlu_err(err, errlen, 0, "fd_pass: recvmsg on socket %d: %s", sock, strerror(errno));
		return ret;
	}
	nr = fd_pass_collect(&msg, got, sizeof(got) / sizeof(got[0]));
	if (n == 0) {
		kvmlu_err(err, errlen, 0, "fd_pass: peer closed socket %d before sending", sock);
		ret = -ECONNRESET;
		goto err_close;
	}
	if (msg.msg_flags & MSG_CTRUNC) {
		kvmlu_err(err, errlen, 0,
			      "fd_pass: control data truncated on socket %d (more than %u fds sent, or fd limit reached); %u arrived and were closed",
			      sock, FD_PASS_MAX_FDS, nr);
		ret = -EMSGSIZE;
		goto err_close;
	}
	if (msg.msg_flags & MSG_TRUNC) {
		kvmlu_err(err, errlen, 0, "fd_pass: message on socket %d longer than %zu bytes",
			      sock, sizeof(hdr) + buflen);
		ret = -EMSGSIZE;
		goto err_close;
	}
	have = (size_t)n;
	if (have < sizeof(hdr)) {
		if (type != SOCK_STREAM) {
			kvmlu_err(err, errlen, 0, "fd_pass: message of %zd bytes, shorter than its header", n);
			ret = -EPROTO;
			goto err_close;
		}
		ret = fd_pass_read_full(sock, (char *)&hdr + have, sizeof(hdr) - have,
					"header", err, errlen);
		if (ret)
			goto err_close;
		have = sizeof(hdr);
	}
	if (hdr.magic != FD_PASS_MAGIC || hdr.reserved) {
		kvmlu_err(err, errlen, 0, "fd_pass: bad header on socket %d (magic 0x%08x)",
			      sock, hdr.magic);
		ret = -EPROTO;
		goto err_close;
	}
	if (hdr.nfds > max_fds) {
		kvmlu_err(err, errlen, 0, "fd_pass: peer sent %u fds, at most %u expected",
			      hdr.nfds, max_fds);
		ret = -EMSGSIZE;
		goto err_close;
	}
	if (hdr.nfds != nr) {
		kvmlu_err(err, errlen, 0, "fd_pass: header announces %u fds, %u arrived",
			      hdr.nfds, nr);
		ret = -EPROTO;
		goto err_close;
	}
	if (hdr.len > buflen) {
		kvmlu_err(err, errlen, 0, "fd_pass: payload of %u bytes, buffer holds %zu",
			      hdr.len, buflen);
		ret = -EMSGSIZE;
		goto err_close;
	}
	if (type == SOCK_STREAM) {
		ret = fd_pass_read_full(sock, buf, hdr.len, "payload", err, errlen);
		if (ret)
			goto err_close;
	} else if (have - sizeof(hdr) != hdr.len) {
		kvmlu_err(err, errlen, 0, "fd_pass: header announces %u payload bytes, %zu arrived",
			      hdr.len, have - sizeof(hdr));
		ret = -EPROTO;
		goto err_close;
	}

	if (nr)
		memcpy(fds, got, sizeof(int) * nr);
	*nfds = nr;
	*len = hdr.len;
	return 0;

err_close:
	fd_pass_close_all(got, nr);
	return ret;
}
