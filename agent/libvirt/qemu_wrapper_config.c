// SPDX-License-Identifier: GPL-2.0
/* kvmlu-qemu's configuration (see qemu_wrapper_config.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "agent/libvirt/qemu_argv.h"
#include "agent/libvirt/qemu_wrapper_config.h"
#include "common/err.h"
#include "common/file_read.h"
#include "common/json_strict.h"

static int string_key(json_object *v, const char *key, char *out, size_t outlen, char *err,
		      size_t errlen)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string))
		return kvmlu_err(err, errlen, -EINVAL, "\"%s\" must be a string", key);
	s = json_object_get_string(v);
	if ((size_t)json_object_get_string_len(v) != strlen(s) || strlen(s) >= outlen)
		return kvmlu_err(err, errlen, -EINVAL, "\"%s\" too long or with a NUL", key);
	if (s[0] != '/')
		return kvmlu_err(err, errlen, -EINVAL, "\"%s\" must be an absolute path", key);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

int qemu_wrapper_config_parse(const char *text, size_t len, struct qemu_wrapper_config *cfg,
			      char *err, size_t errlen)
{
	struct qemu_wrapper_config c = { .qmp_dir = QEMU_WRAPPER_QMP_DIR,
					  .lvram_socket = QEMU_WRAPPER_LVRAM_SOCKET };
	struct json_strict_error je;
	json_object *root;
	int rc;

	rc = json_strict_parse(text, len, 4, JSON_STRICT_UTF8, &root, &je);
	if (rc)
		return kvmlu_err(err, errlen, rc, "%s", je.desc);
	if (!json_object_is_type(root, json_type_object)) {
		rc = kvmlu_err(err, errlen, -EINVAL, "not a JSON object");
		goto out;
	}
	json_object_object_foreach(root, key, val) {
		if (!strcmp(key, "qemu"))
			rc = string_key(val, key, c.qemu, sizeof(c.qemu), err, errlen);
		else if (!strcmp(key, "qmp_dir"))
			rc = string_key(val, key, c.qmp_dir, sizeof(c.qmp_dir), err, errlen);
		else if (!strcmp(key, "lvram_socket"))
			rc = string_key(val, key, c.lvram_socket, sizeof(c.lvram_socket), err,
					errlen);
		else
			rc = kvmlu_err(err, errlen, -EINVAL, "unknown key \"%.64s\"", key);
		if (rc)
			goto out;
	}
	if (!c.qemu[0]) {
		rc = kvmlu_err(err, errlen, -EINVAL, "\"qemu\" (the QEMU binary to run) is missing");
		goto out;
	}
	rc = qemu_argv_check_qmp_dir(c.qmp_dir, err, errlen);
	if (!rc)
		*cfg = c;
out:
	json_object_put(root);
	return rc;
}

int qemu_wrapper_config_load(const char *path, struct qemu_wrapper_config *cfg,
			     char *err, size_t errlen)
{
	char *text, why[256];
	size_t len = 0;
	int rc;

	rc = file_read_all(path, QEMU_WRAPPER_CONFIG_MAX, &text, &len);
	/* The wrapper runs as the domain's QEMU user, often confined. */
	if (rc == -EACCES)
		return kvmlu_err(err, errlen, rc,
				 "%s: %s (the domain's QEMU user must read it: mode 0644, and any AppArmor or SELinux profile confining QEMU must allow it, docs/libvirt.md)",
				 path, strerror(-rc));
	if (rc)
		return kvmlu_err(err, errlen, rc == -EFBIG ? -EINVAL : rc, "%s: %s", path,
				 rc == -EFBIG ? "larger than 64 KiB" : strerror(-rc));
	rc = qemu_wrapper_config_parse(text, len, cfg, why, sizeof(why));
	if (rc)
		kvmlu_err(err, errlen, rc, "%s: %s", path, why);
	free(text);
	return rc;
}
