// SPDX-License-Identifier: GPL-2.0
/* The checks on who asks for held RAM (see lvram_peer.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/libvirt/lvram_peer.h"
#include "common/err.h"

int lvram_cmdline_uuid(const char *cmdline, size_t len, char uuid[LVRAM_UUID_LEN + 1],
		       char *err, size_t errlen)
{
	const char *found = NULL;
	size_t i = 0;

	while (i < len) {
		const char *tok = cmdline + i;
		size_t n = strnlen(tok, len - i);
		const char *val;
		size_t vn;

		i += n + 1;
		if (n != 5 || memcmp(tok, "-uuid", 5))
			continue;
		if (found)
			return kvmlu_err(err, errlen, -EINVAL, "-uuid given twice");
		if (i >= len)
			return kvmlu_err(err, errlen, -EINVAL, "-uuid without a value");
		val = cmdline + i;
		vn = strnlen(val, len - i);
		if (vn != LVRAM_UUID_LEN || i + vn >= len || !lvram_uuid_valid(val))
			return kvmlu_err(err, errlen, -EINVAL, "-uuid is not a lowercase UUID");
		found = val;
		i += vn + 1;
	}
	if (!found)
		return kvmlu_err(err, errlen, -ENOENT, "no -uuid");
	memcpy(uuid, found, LVRAM_UUID_LEN + 1);
	return 0;
}

int lvram_peer_check(uid_t peer_uid, uid_t want_uid, const char *uuid, const char *cmdline,
		     size_t len, char *err, size_t errlen)
{
	char have[LVRAM_UUID_LEN + 1], why[128];

	if (peer_uid != want_uid)
		return kvmlu_err(err, errlen, -EPERM,
				 "peer uid %u is not the domain's QEMU user (uid %u)",
				 (unsigned int)peer_uid, (unsigned int)want_uid);
	if (lvram_cmdline_uuid(cmdline, len, have, why, sizeof(why)))
		return kvmlu_err(err, errlen, -EPERM, "peer's command line: %s", why);
	if (strcmp(have, uuid))
		return kvmlu_err(err, errlen, -EPERM, "peer's -uuid %s is not %s", have, uuid);
	return 0;
}

int lvram_read_cmdline(pid_t pid, char *buf, size_t buflen, size_t *len, char *err,
		       size_t errlen)
{
	char path[64];
	size_t got = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "%s: %s", path, strerror(errno));
	while (got < buflen && (n = read(fd, buf + got, buflen - got)) > 0)
		got += (size_t)n;
	if (got == buflen && read(fd, path, 1) > 0) {
		close(fd);
		return kvmlu_err(err, errlen, -E2BIG, "%s: longer than %zu bytes", path, buflen);
	}
	close(fd);
	*len = got;
	return 0;
}
