/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's lvram socket (docs/libvirt.md, "Replacing a domain's
 * QEMU"): kvmlu-qemu asks here, before it execs QEMU with -incoming,
 * whether the agent holds RAM for its domain. One request a connection
 * (lvram_request.h), answered within LVRAM_SERVER_READ_MS:
 *   - nothing held: held false, no fd (the wrapper makes a new memfd);
 *   - held, and the peer checks pass (lvram_peer.h): held true, the memfd
 *     attached (common/fd_pass.c), ignore_shared true. Then, on the same
 *     thread, the agent connects to the new QEMU's kvmlu QMP socket
 *     (wait=on: QEMU waits for it before libvirt's monitor comes up),
 *     checks pc.ram (shared, the size held) and sets x-ignore-shared,
 *     before libvirt's migrate-incoming (design facts 11 and 12); the
 *     outcome goes to lvram_store_set_incoming;
 *   - anything else: an error answer, nothing given.
 * Each connection has its own detached thread; the socket is mode 0666
 * (any QEMU user may ask, the checks decide).
 */
#ifndef KVMLU_LIBVIRT_LVRAM_SERVER_H
#define KVMLU_LIBVIRT_LVRAM_SERVER_H

#include <stddef.h>

#define LVRAM_SERVER_READ_MS	2000	/* for the request line */
#define LVRAM_QMP_WAIT_MS	30000	/* for the new QEMU's QMP socket */

/* Bind path (never taking over a live socket) and serve it on a thread. */
int lvram_server_start(const char *path, const char *qmp_dir, char *err, size_t errlen);

/* One connection, fd (closed here): the whole exchange above. */
void lvram_server_serve(int fd, const char *qmp_dir);

#endif /* KVMLU_LIBVIRT_LVRAM_SERVER_H */
