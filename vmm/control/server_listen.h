/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control socket's listening end: a socket path is claimed only if
 * nobody answers there (common/sock_path.h), bound with no window in
 * which its file is more open than 0600, and listened on. An abstract
 * name ('@') has no file; SO_PEERCRED alone keeps others out of it.
 */
#ifndef KVMLU_VMM_CONTROL_SERVER_LISTEN_H
#define KVMLU_VMM_CONTROL_SERVER_LISTEN_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Bind and listen at path. 0 with *fd_out the listening socket and
 * *dev and *ino its file (0 for an abstract name, so stop() unlinks only
 * the file it made); -errno with err saying why, nothing left behind.
 */
int control_listen_bind(const char *path, int backlog, int *fd_out, dev_t *dev, ino_t *ino,
			char *err, size_t errlen);

#endif /* KVMLU_VMM_CONTROL_SERVER_LISTEN_H */
