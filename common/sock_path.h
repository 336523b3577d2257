/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Taking a socket path for a listener: the agent's socket and every
 * VMM's control socket. A live socket is never taken over: whether the
 * file is in use is asked with connect(), not guessed from its presence.
 *
 *   nothing there            free
 *   a socket nobody answers  stale (its process died): removed
 *   a socket someone answers in use: -EADDRINUSE, left alone
 *   (connect() says EAGAIN, a full backlog, or EACCES: in use too)
 *   anything else            -EEXIST: never removed
 *
 * Only names in the file system; an abstract name ('@') has no file.
 */
#ifndef KVMLU_COMMON_SOCK_PATH_H
#define KVMLU_COMMON_SOCK_PATH_H

#include <stddef.h>

/*
 * Make path free to bind(): 0 when nothing is there (any more), else
 * -errno with err saying what is there. A stale socket file is unlinked.
 */
int sock_path_claim(const char *path, char *err, size_t errlen);

#endif /* KVMLU_COMMON_SOCK_PATH_H */
