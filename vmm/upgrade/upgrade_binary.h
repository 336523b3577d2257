/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which program `upgrade` may start. The VMM runs as root and the
 * client of its control socket names args.binary, so the file must be one
 * only root (or the VMM's own user) could have put there: a regular file,
 * reached without a symlink as its last component, owned by root or by
 * the VMM's euid, not writable by group or others, executable. The
 * default, /proc/self/exe, is the running binary and is not checked.
 *
 * The check is made twice on purpose: in the control thread, for a clear
 * InvalidRequest before anything starts, and again in the forked child on
 * the fd it then executes (execveat AT_EMPTY_PATH), so the file checked
 * is the file run even if the path is changed in between.
 */
#ifndef KVMLU_UPGRADE_BINARY_H
#define KVMLU_UPGRADE_BINARY_H

#include "common/json_line.h"

/* 0, or -EINVAL with InvalidRequest in e naming the path and the rule. */
int upgrade_binary_check(const char *path, struct json_line_error *e);

/*
 * Child side of fork(), async-signal-safe: open path O_PATH|O_NOFOLLOW,
 * check it as above and execveat that fd with argv and the environment.
 * Returns only on failure (the caller reports and _exits).
 */
void upgrade_binary_exec(const char *path, char *const argv[]);

#endif /* KVMLU_UPGRADE_BINARY_H */
