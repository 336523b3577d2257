// SPDX-License-Identifier: GPL-2.0
/*
 * See agent_dirs.h. Modes: state_dir holds the journal (0700); the rest is
 * 0755 (serial logs 0750), as systemd's RuntimeDirectory= and friends would
 * make them. An existing directory is left as it is.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/daemon/agent_dirs.h"
#include "common/err.h"

static int mkdir_p(const char *path, mode_t mode, char *err, size_t errlen)
{
	char buf[AGENT_PATH_MAX];
	struct stat st;

	if (!path[0])
		return 0;
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "directory %s: path too long", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return kvmlu_err(err, errlen, -errno, "mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return kvmlu_err(err, errlen, -errno, "mkdir %s: %s", buf, strerror(errno));
	if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
		return kvmlu_err(err, errlen, -ENOTDIR, "%s: not a directory", buf);
	return 0;
}

int agent_dirs_make(const struct agent_config *cfg, char *err, size_t errlen)
{
	char sockdir[AGENT_SOCK_PATH_MAX];
	char *slash;
	int ret;

	snprintf(sockdir, sizeof(sockdir), "%s", cfg->socket_path);
	slash = strrchr(sockdir, '/');
	if (slash && slash != sockdir)
		*slash = '\0';
	else
		sockdir[0] = '\0';
	ret = mkdir_p(cfg->run_dir, 0755, err, errlen);
	if (!ret)
		ret = mkdir_p(cfg->state_dir, 0700, err, errlen);
	if (!ret)
		ret = mkdir_p(cfg->history_dir, 0755, err, errlen);
	if (!ret)
		ret = mkdir_p(cfg->serial_dir, 0750, err, errlen);
	if (!ret)
		ret = mkdir_p(sockdir, 0755, err, errlen);
	return ret;
}
