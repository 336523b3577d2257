// SPDX-License-Identifier: GPL-2.0
/* Taking a socket path without taking over a live socket (see sock_path.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/err.h"
#include "common/sock_path.h"

/* 0: somebody accepts connections there; -ECONNREFUSED: nobody; else -errno. */
static int sock_path_probe(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc = 0;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* Nonblocking: a listener with a full backlog says EAGAIN at once. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		rc = -errno;
	close(fd);
	return rc == -EAGAIN || rc == -EINPROGRESS ? 0 : rc;
}

int sock_path_claim(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return kvmlu_err(err, errlen, -errno, "%s: %s", path, strerror(errno));
	}
	if (!S_ISSOCK(st.st_mode))
		return kvmlu_err(err, errlen, -EEXIST, "%s: exists and is not a socket (left alone)",
				 path);
	rc = sock_path_probe(path);
	if (rc == 0)
		return kvmlu_err(err, errlen, -EADDRINUSE,
				 "%s: another process is listening there", path);
	if (rc == -ENOENT)	/* gone since the lstat */
		return 0;
	if (rc != -ECONNREFUSED)
		return kvmlu_err(err, errlen, -EADDRINUSE,
				 "%s: a socket that may be in use (connect: %s): left alone", path,
				 strerror(-rc));
	/* Nobody listens: a socket file left by a process that died. */
	if (unlink(path) < 0 && errno != ENOENT)
		return kvmlu_err(err, errlen, -errno, "%s: remove stale socket: %s", path,
				 strerror(errno));
	return 0;
}
