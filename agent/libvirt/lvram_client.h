/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmlu-qemu's side of lvram-open (lvram_request.h): before a QEMU with
 * -incoming is exec'd, ask the agent whether it holds the domain's RAM.
 */
#ifndef KVMLU_LIBVIRT_LVRAM_CLIENT_H
#define KVMLU_LIBVIRT_LVRAM_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LVRAM_CLIENT_TIMEOUT_MS	5000

/*
 * 0 and *fd >= 0: the held memfd (close-on-exec), *ignore_shared as the
 * agent says. 0 and *fd == -1: nothing held, or no agent listening (why
 * says which): a new memfd, as any start. -errno: the agent refused or
 * answered something unreadable (why says so): the start must fail.
 */
int lvram_client_open(const char *socket_path, const char *uuid, uint64_t size, int *fd,
		      bool *ignore_shared, char *why, size_t whylen);

#endif /* KVMLU_LIBVIRT_LVRAM_CLIENT_H */
