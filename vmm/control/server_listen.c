// SPDX-License-Identifier: GPL-2.0
/* The control socket's listening end (see server_listen.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/err.h"
#include "common/sock_path.h"
#include "kvmlu/unix_addr.h"
#include "vmm/control/server_listen.h"

int control_listen_bind(const char *path, int backlog, int *fd_out, dev_t *dev, ino_t *ino,
			char *err, size_t errlen)
{
	bool abstract = kvmlu_unix_is_abstract(path);
	struct sockaddr_un sa;
	socklen_t salen;
	struct stat st;
	char msg[256];
	mode_t old_mask;
	int fd, rc;

	if (kvmlu_unix_addr(path, &sa, &salen))
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "--control %s: empty or longer than %zu bytes",
			       path, sizeof(sa.sun_path) - 1);
	/* A live socket (another VMM's, the agent's) is never taken over. */
	if (!abstract) {
		rc = sock_path_claim(path, msg, sizeof(msg));
		if (rc)
			return kvmlu_err(err, errlen, rc, "--control %s", msg);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "socket: %s", strerror(errno));
	/* No window in which the socket file is more open than 0600. */
	old_mask = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, salen);
	umask(old_mask);
	if (rc < 0) {
		rc = kvmlu_err(err, errlen, -errno, "--control %s: bind: %s", path, strerror(errno));
		goto err_close;
	}
	/* An abstract name has no file: SO_PEERCRED alone keeps others out. */
	if (!abstract && (chmod(path, 0600) < 0 || stat(path, &st) < 0)) {
		rc = kvmlu_err(err, errlen, -errno, "--control %s: chmod 0600: %s", path, strerror(errno));
		goto err_unlink;
	}
	if (listen(fd, backlog) < 0) {
		rc = kvmlu_err(err, errlen, -errno, "--control %s: listen: %s", path, strerror(errno));
		goto err_unlink;
	}
	*dev = abstract ? 0 : st.st_dev;
	*ino = abstract ? 0 : st.st_ino;
	*fd_out = fd;
	return 0;
err_unlink:
	if (!abstract)
		unlink(path);
err_close:
	close(fd);
	return rc;
}

