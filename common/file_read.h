/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small file read whole (configuration, journal, markers): never more
 * than the caller's limit, so a file grown by mistake or by an attacker
 * costs at most that much memory.
 */
#ifndef KVMLU_COMMON_FILE_READ_H
#define KVMLU_COMMON_FILE_READ_H

#include <stddef.h>

/*
 * The file at path into *buf (malloc'd, NUL-terminated; the caller frees
 * it), its size in *len. 0, or -errno: -EFBIG when it has more than max
 * bytes; nothing is allocated then.
 */
int file_read_all(const char *path, size_t max, char **buf, size_t *len);

#endif /* KVMLU_COMMON_FILE_READ_H */
