// SPDX-License-Identifier: GPL-2.0
/*
 * Saving a paused VM's state to a file (see save_state.h; the control
 * command `save-state` in vmm/vm_commands.c calls it). Only while paused:
 * a running vCPU would change the registers between the reads of one
 * capture. The file appears complete or not at all (written to path.tmp,
 * then renamed), so a reader never sees half a state. The VM stays paused
 * and unchanged whatever happens here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/state/save_state.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/vm_capture.h"
#include "vmm/vm.h"

int state_file_write(const char *path, const void *blob, size_t size,
		     char *err, size_t errlen)
{
	char tmp[4096];
	const char *p = blob;
	int fd, ret;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "open %s: %s", tmp, strerror(errno));
	while (size) {
		ssize_t n = write(fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = kvmlu_err(err, errlen, n < 0 ? -errno : -EIO, "write %s: %s", tmp,
					n < 0 ? strerror(errno) : "short write");
			goto err_unlink;
		}
		p += n;
		size -= (size_t)n;
	}
	if (fsync(fd) < 0) {
		ret = kvmlu_err(err, errlen, -errno, "fsync %s: %s", tmp, strerror(errno));
		goto err_unlink;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		ret = kvmlu_err(err, errlen, -errno, "rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		return ret;
	}
	return 0;
err_unlink:
	close(fd);
	unlink(tmp);
	return ret;
}

int save_state(struct vm *vm, const char *path, bool with_checksum,
	       struct save_state_result *r, char *err, size_t errlen)
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
	rc = state_file_write(path, blob, size, msg, sizeof(msg));
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
