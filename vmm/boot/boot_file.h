/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMLU_VMM_BOOT_FILE_H
#define KVMLU_VMM_BOOT_FILE_H

#include <stddef.h>

/*
 * Read a whole regular file of 1..max bytes into a new buffer (what names
 * it in errors: "--kernel"). The caller frees *buf.
 */
int boot_file_read(const char *what, const char *path, size_t max,
		   void **buf, size_t *len, char *err, size_t errlen);

#endif /* KVMLU_VMM_BOOT_FILE_H */
