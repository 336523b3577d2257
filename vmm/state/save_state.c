// SPDX-License-Identifier: GPL-2.0
/*
 * Saving a paused VM's state to a file (see save_state.h; the control
 * command `save-state` in vmm/main/vm_commands.c calls it). Only while paused:
 * a running vCPU would change the registers between the reads of one
 * capture. Where the file may go and how it is written (complete or not
 * at all, never through a symlink or over anything but a regular file)
 * is state_file.c's. The VM stays paused and unchanged whatever happens
 * here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/state/save_state.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_file.h"
#include "vmm/state/vm_capture.h"

int save_state_target_open(const char *control_path, const char *path,
			   struct save_state_target *t, char *err, size_t errlen)
{
	int rc;

	rc = state_file_dir_open(control_path, &t->dirfd, t->dir, sizeof(t->dir), err, errlen);
	/* The directory is the VMM's own: its failure is never the client's path. */
	if (rc)
		return rc == -EINVAL || rc == -EPERM ? -EIO : rc;
	rc = state_file_name(t->dir, path, &t->name, err, errlen);
	if (rc)
		save_state_target_close(t);
	return rc;
}

void save_state_target_close(struct save_state_target *t)
{
	if (t->dirfd >= 0)
		close(t->dirfd);
	t->dirfd = -1;
}

int save_state(struct vm *vm, const struct save_state_target *t, bool overwrite,
	       bool with_checksum, struct save_state_result *r, char *err, size_t errlen)
{
	struct state_vm s;
	char msg[512];
	void *blob;
	size_t size;
	int rc;

	rc = state_vm_capture(vm, with_checksum, &s, msg, sizeof(msg));
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s", msg);
	rc = state_fdt_write(&s, &blob, &size, msg, sizeof(msg));
	if (rc) {
		state_vm_free(&s);
		return kvmlu_err(err, errlen, rc, "%s", msg);
	}
	rc = state_file_write_at(t->dirfd, t->name, blob, size, overwrite, msg, sizeof(msg));
	free(blob);
	if (!rc) {
		r->bytes = size;
		r->nr_vcpus = s.nr_vcpus;
		snprintf(r->uuid, sizeof(r->uuid), "%s", s.uuid);
	} else {
		kvmlu_err(err, errlen, rc, "%s", msg);
	}
	state_vm_free(&s);
	return rc;
}
