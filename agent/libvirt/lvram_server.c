// SPDX-License-Identifier: GPL-2.0
/* The agent's lvram socket (see lvram_server.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/libvirt/lvram_peer.h"
#include "agent/libvirt/lvram_qmp.h"
#include "agent/libvirt/lvram_request.h"
#include "agent/libvirt/lvram_server.h"
#include "agent/libvirt/lvram_store.h"
#include "agent/libvirt/lvram_sum.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fd_pass.h"
#include "common/sock_path.h"
#include "kvmlu/control_wire.h"
#include "kvmlu/unix_addr.h"

struct server {
	int lfd;
	char qmp_dir[108];
};

struct conn {
	int fd;
	char qmp_dir[108];
};

/* One line (without its newline) within LVRAM_SERVER_READ_MS. */
static int read_line(int fd, char *buf, size_t buflen, size_t *len)
{
	int64_t until = kvmlu_mono_ms() + LVRAM_SERVER_READ_MS;
	size_t got = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = until - kvmlu_mono_ms();
		char *nl;
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -ETIMEDOUT;
		n = read(fd, buf + got, buflen - got);
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		got += (size_t)n;
		nl = memchr(buf, '\n', got);
		if (nl) {
			if ((size_t)(nl - buf) + 1 != got)
				return -EPROTO;	/* one request a connection */
			*len = (size_t)(nl - buf);
			return 0;
		}
		if (got == buflen)
			return -EMSGSIZE;
	}
}

static void answer(int fd, int ram_fd, const char *line)
{
	char why[128];

	if (fd_pass_send(fd, ram_fd >= 0 ? &ram_fd : NULL, ram_fd >= 0, line, strlen(line),
			 why, sizeof(why)))
		fprintf(stderr, "kvmlu-agent: lvram: answer not sent: %s\n", why);
}

static void answer_error(int fd, const char *cls, const char *desc)
{
	char line[LVRAM_LINE_MAX + 64];

	fprintf(stderr, "kvmlu-agent: lvram: refused: %s\n", desc);
	if (!lvram_reply_format_error(cls, desc, line, sizeof(line)))
		answer(fd, -1, line);
}

/*
 * The RAM's sum as given to pid: QEMU waits for the agent on kvmlu's QMP
 * socket (wait=on, before it creates any memory backend), so nothing but
 * the agent has touched the memfd since the pause. Once QEMU has loaded
 * the vCPUs, KVM writes the kvmclock wall-clock struct into the RAM
 * (lvram_store.h), which a later sum would count as a change. RAM the
 * agent verified itself since it got it (after a kexec) has its sum as
 * given already (lvram_store_set_verified): no second pass over it while
 * QEMU waits.
 */
static void sum_given(const struct lvram_request *rq, pid_t pid)
{
	char sum[LVRAM_SUM_LEN + 1], why[256];
	struct lvram_held_info info;
	int fd, rc;

	rc = lvram_store_get(rq->uuid, &fd, &info);
	if (rc) {
		fprintf(stderr, "kvmlu-agent: lvram %s: no RAM to hash: %s\n", rq->uuid, strerror(-rc));
		return;
	}
	if (info.given && info.given_pid == pid && info.sum_given[0]) {
		close(fd);
		return;
	}
	rc = lvram_sum(fd, sum, why, sizeof(why));
	close(fd);
	if (rc) {
		fprintf(stderr, "kvmlu-agent: lvram %s: hashing the RAM given: %s\n", rq->uuid, why);
		return;
	}
	lvram_store_set_sum_given(rq->uuid, pid, sum);
}

/* The new QEMU, before libvirt's migrate-incoming: RAM hashed and checked, capability on. */
static void prepare_incoming(const char *qmp_dir, const struct lvram_request *rq, pid_t pid)
{
	struct qmp_client c;
	char path[128], why[256];
	int rc;

	sum_given(rq, pid);
	rc = lvram_qmp_path(qmp_dir, rq->uuid, path, sizeof(path));
	if (rc)
		snprintf(why, sizeof(why), "QMP socket path too long");
	if (!rc)
		rc = lvram_qmp_connect(&c, path, pid, LVRAM_QMP_WAIT_MS, why, sizeof(why));
	if (!rc) {
		rc = lvram_qmp_check_ram(&c, rq->size, why, sizeof(why));
		if (!rc)
			rc = lvram_qmp_ignore_shared(&c, true, why, sizeof(why));
		qmp_client_close(&c);
	}
	if (!rc)
		snprintf(why, sizeof(why), "x-ignore-shared on in QEMU %d", (int)pid);
	fprintf(stderr, "kvmlu-agent: lvram %s: %s\n", rq->uuid, why);
	lvram_store_set_incoming(rq->uuid, pid, rc, why);
}

void lvram_server_serve(int fd, const char *qmp_dir)
{
	char line[LVRAM_LINE_MAX + 2], why[256], out[LVRAM_LINE_MAX];
	struct lvram_request rq;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	char *cmdline = NULL;
	size_t len = 0, clen = 0;
	int rc, ram_fd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) || crlen != sizeof(cr)) {
		answer_error(fd, KVMLU_ERR_PERMISSION, "peer credentials unknown");
		goto out;
	}
	rc = read_line(fd, line, sizeof(line) - 1, &len);
	if (rc) {
		answer_error(fd, rc == -EMSGSIZE ? KVMLU_ERR_LINE_TOO_LONG : KVMLU_ERR_INVALID,
			     rc == -ETIMEDOUT ? "no request line in time" :
			     rc == -EMSGSIZE ? "request line too long" : "no one request line");
		goto out;
	}
	rc = lvram_request_parse(line, len, &rq, why, sizeof(why));
	if (rc) {
		answer_error(fd, KVMLU_ERR_INVALID, why);
		goto out;
	}
	cmdline = malloc(LVRAM_CMDLINE_MAX);
	if (!cmdline || lvram_read_cmdline(cr.pid, cmdline, LVRAM_CMDLINE_MAX, &clen, why,
					   sizeof(why))) {
		answer_error(fd, KVMLU_ERR_PERMISSION, cmdline ? why : "out of memory");
		goto out;
	}
	rc = lvram_store_give(&rq, cr.uid, cr.pid, cmdline, clen, &ram_fd, why, sizeof(why));
	if (rc == -ENOENT) {
		if (!lvram_reply_format_ok(false, false, out, sizeof(out)))
			answer(fd, -1, out);
		goto out;
	}
	if (rc) {
		answer_error(fd, rc == -EPERM ? KVMLU_ERR_PERMISSION :
			     rc == -EBUSY || rc == -EAGAIN ? KVMLU_ERR_BUSY : KVMLU_ERR_INVALID, why);
		goto out;
	}
	lvram_reply_format_ok(true, true, out, sizeof(out));
	answer(fd, ram_fd, out);
	close(ram_fd);
	fprintf(stderr, "kvmlu-agent: lvram %s: RAM given to pid %d\n", rq.uuid, (int)cr.pid);
	close(fd);
	fd = -1;
	prepare_incoming(qmp_dir, &rq, cr.pid);
out:
	free(cmdline);
	if (fd >= 0)
		close(fd);
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;

	lvram_server_serve(c->fd, c->qmp_dir);
	free(c);
	return NULL;
}

static void *accept_thread(void *arg)
{
	struct server *s = arg;

	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		struct conn *c;
		pthread_t t;

		if (fd < 0) {
			if (errno != EINTR && errno != ECONNABORTED)
				usleep(100 * 1000);	/* out of fds: do not spin */
			continue;
		}
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		memcpy(c->qmp_dir, s->qmp_dir, sizeof(c->qmp_dir));
		if (pthread_create(&t, NULL, conn_thread, c)) {
			close(fd);
			free(c);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

int lvram_server_start(const char *path, const char *qmp_dir, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	socklen_t salen;
	struct server *s;
	pthread_t t;
	int fd, rc;

	if (path[0] != '/' || kvmlu_unix_addr(path, &sa, &salen) ||
	    strlen(qmp_dir) >= sizeof(s->qmp_dir))
		return kvmlu_err(err, errlen, -EINVAL, "lvram socket %s: not an absolute path "
				 "that fits a socket address", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "socket: %s", strerror(errno));
	rc = sock_path_claim(path, err, errlen);
	if (rc)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, salen) || chmod(path, 0666) || listen(fd, 16)) {
		rc = kvmlu_err(err, errlen, -errno, "lvram socket %s: %s", path, strerror(errno));
		goto fail;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		rc = kvmlu_err(err, errlen, -ENOMEM, "out of memory");
		goto fail;
	}
	s->lfd = fd;
	memcpy(s->qmp_dir, qmp_dir, strlen(qmp_dir) + 1);
	rc = pthread_create(&t, NULL, accept_thread, s);
	if (rc) {
		free(s);
		rc = kvmlu_err(err, errlen, -rc, "thread: %s", strerror(rc));
		goto fail;
	}
	pthread_detach(t);
	return 0;
fail:
	close(fd);
	return rc;
}
