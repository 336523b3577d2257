// SPDX-License-Identifier: GPL-2.0
/*
 * `save-state` (see save_state.h). Only while paused: a running vCPU
 * would change the registers between the reads of one capture. The file
 * appears complete or not at all (written to path.tmp, then renamed),
 * so a reader never sees half a state. The VM stays paused and unchanged
 * whatever happens here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/err.h"
#include "common/json_line.h"
#include "vmm/control/commands.h"
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

int control_cmd_save_state(struct control_ctx *ctx, json_object *args, json_object **ret,
			   struct json_line_error *e)
{
	json_object *jpath = NULL, *jsum = NULL;
	enum vm_state st = vm_get_state(ctx->vm);
	struct state_vm s;
	const char *path;
	bool with_sum = false;
	char err[512];
	void *blob;
	size_t size;
	int rc;

	if (!args || !json_object_object_get_ex(args, "path", &jpath) ||
	    !json_object_is_type(jpath, json_type_string))
		return json_line_error_set(e, KVMLU_ERR_INVALID,
					 "save-state: args.path (a string) is required");
	path = json_object_get_string(jpath);
	if (path[0] != '/')
		return json_line_error_set(e, KVMLU_ERR_INVALID,
					 "save-state: path \"%.200s\" is not absolute", path);
	if (json_object_object_get_ex(args, "checksum", &jsum)) {
		if (!json_object_is_type(jsum, json_type_boolean))
			return json_line_error_set(e, KVMLU_ERR_INVALID,
						 "save-state: args.checksum must be true or false");
		with_sum = json_object_get_boolean(jsum);
	}
	if (st != VM_STATE_PAUSED)
		return json_line_error_set(e, KVMLU_ERR_NOT_PAUSED,
					 "save-state needs a paused VM; it is %s (send pause first)",
					 vm_state_name(st));
	rc = state_vm_capture(ctx->vm, with_sum, &s, err, sizeof(err));
	if (rc)
		return json_line_error_set(e, KVMLU_ERR_FAILED, "save-state: %s", err);
	rc = state_fdt_write(&s, &blob, &size, err, sizeof(err));
	if (rc) {
		state_vm_free(&s);
		return json_line_error_set(e, KVMLU_ERR_FAILED, "save-state: %s", err);
	}
	rc = state_file_write(path, blob, size, err, sizeof(err));
	free(blob);
	if (rc) {
		state_vm_free(&s);
		return json_line_error_set(e, KVMLU_ERR_FAILED, "save-state: %s", err);
	}
	*ret = json_object_new_object();
	json_object_object_add(*ret, "path", json_object_new_string(path));
	json_object_object_add(*ret, "bytes", json_line_new_u64(size));
	json_object_object_add(*ret, "vcpus", json_object_new_int64((int)s.nr_vcpus));
	json_object_object_add(*ret, "uuid", json_object_new_string(s.uuid));
	state_vm_free(&s);
	return 0;
}
