/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The `save-state` control command: write the paused VM's state FDT to a
 * file, for inspection with dtc and for tests.
 *   -> {"cmd":"save-state","args":{"path":"/tmp/vm1.dtb","checksum":true}}
 *   <- {"ok":true,"return":{"path":"/tmp/vm1.dtb","bytes":10607,"vcpus":1}}
 */
#ifndef KVMLU_STATE_SAVE_STATE_H
#define KVMLU_STATE_SAVE_STATE_H

#include <stddef.h>

/* Write blob to path atomically (temp file + rename), mode 0600. */
int state_file_write(const char *path, const void *blob, size_t size,
		     char *err, size_t errlen);

#endif /* KVMLU_STATE_SAVE_STATE_H */
