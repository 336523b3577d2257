/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Facts about this host for preflight, read from /dev, /proc and debugfs
 * (sysfs_root lets tests point it at a fake tree). Read-only: nothing on
 * the host changes.
 */
#ifndef KVMLU_HOST_FACTS_H
#define KVMLU_HOST_FACTS_H

#include <stddef.h>

#include "agent/journal/journal.h"
#include "agent/update/preflight.h"

/*
 * root: "" for the real host, else a directory holding dev/, proc/ and
 * sys/ the same way. Fails (-errno) only when the new kernel or initrd of
 * j cannot be read: that refuses the update with the file's name.
 */
int host_facts_read(const char *root, const struct journal *j, struct host_facts *h,
		    char *err, size_t errlen);

/*
 * The kernel command line this host booted with (<root>/proc/cmdline),
 * without its trailing newline. 0 or -errno.
 */
int host_facts_cmdline(const char *root, char *buf, size_t len);

/* Sum of the hex sizes, one a line, in a kho/out/scratch_len text. */
int host_facts_parse_scratch(const char *text, unsigned long long *sum);

#endif /* KVMLU_HOST_FACTS_H */
