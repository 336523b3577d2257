// SPDX-License-Identifier: GPL-2.0
/* Where and how save-state writes its file (see state_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/state/state_file.h"

#define SOCK_SUFFIX ".sock"

int state_file_dir_open(const char *control_path, int *dirfd, char *dir, size_t dirlen,
			char *err, size_t errlen)
{
	char parent[PATH_MAX], real[PATH_MAX];
	const char *slash;

	*dirfd = -1;
	if (!control_path || !control_path[0])
		return kvmlu_err(err, errlen, -ENOENT,
				 "this VM has no control socket, so no directory for state files");
	slash = strrchr(control_path, '/');
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else if (slash == control_path)
		snprintf(parent, sizeof(parent), "/");
	else if ((size_t)(slash - control_path) >= sizeof(parent))
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "control socket path too long");
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - control_path), control_path);
	if (!realpath(parent, real))
		return kvmlu_err(err, errlen, -errno, "state directory %s: %s", parent,
				 strerror(errno));
	if (strlen(real) >= dirlen)
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "state directory %s: too long", real);
	*dirfd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0)
		return kvmlu_err(err, errlen, -errno, "state directory %s: %s", real,
				 strerror(errno));
	snprintf(dir, dirlen, "%s", real);
	return 0;
}

int state_file_name(const char *dir, const char *path, const char **name,
		    char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = strcmp(dir, "/") ? strlen(dir) : 0, n;

	if (slash) {
		/* Lexically: dir is resolved, so "a/../b" or a symlinked dir never matches. */
		if (path[0] != '/' || (size_t)(slash - path) != dlen || strncmp(path, dir, dlen))
			return kvmlu_err(err, errlen, -EPERM,
					 "path \"%.200s\" is not in %s, the only directory "
					 "save-state writes to (give a file name, or %s/NAME)",
					 path, dir, dlen ? dir : "");
		path = slash + 1;
	}
	n = strlen(path);
	if (!n || path[0] == '.')
		return kvmlu_err(err, errlen, -EINVAL,
				 "file name \"%.200s\" is empty or starts with '.'", path);
	/* Room for the temp name ".NAME.XXXXXXXXXXXXXXXX.tmp". */
	if (n > NAME_MAX - 24)
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "file name longer than %d bytes",
				 NAME_MAX - 24);
	if (n >= sizeof(SOCK_SUFFIX) - 1 &&
	    !strcmp(path + n - (sizeof(SOCK_SUFFIX) - 1), SOCK_SUFFIX))
		return kvmlu_err(err, errlen, -EINVAL,
				 "file name \"%.200s\" ends in " SOCK_SUFFIX
				 ", which names control sockets in this directory", path);
	*name = path;
	return 0;
}

static const char *kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISLNK(m))
		return "a symlink";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device node";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISFIFO(m))
		return "a FIFO";
	return "not a regular file";
}

/* 0 if name may become the new file: absent, or a regular file and overwrite. */
static int target_ok(int dirfd, const char *name, bool overwrite, char *err, size_t errlen)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return kvmlu_err(err, errlen, -errno, "%s: %s", name, strerror(errno));
	}
	if (!S_ISREG(st.st_mode))
		return kvmlu_err(err, errlen, -EPERM,
				 "%s is %s: save-state replaces only regular files", name,
				 kind(st.st_mode));
	if (!overwrite)
		return kvmlu_err(err, errlen, -EEXIST,
				 "%s exists (add \"overwrite\":true to replace it)", name);
	return 0;
}

static int write_all(int fd, const void *blob, size_t size)
{
	const char *p = blob;

	while (size) {
		ssize_t n = write(fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

/* A new, empty temp file in dirfd: its name into tmp, its fd returned. */
static int create_temp(int dirfd, const char *name, char *tmp, size_t tmplen,
		       char *err, size_t errlen)
{
	struct timespec ts;

	for (unsigned int i = 0; i < 100; i++) {
		int fd;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(tmp, tmplen, ".%s.%08x%08x.tmp", name, (unsigned int)getpid(),
			 (unsigned int)(ts.tv_nsec + i));
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return kvmlu_err(err, errlen, -errno, "create %s: %s", tmp,
					 strerror(errno));
	}
	return kvmlu_err(err, errlen, -EEXIST, "create a temp file for %s: all names taken", name);
}

/* tmp becomes name: never over anything unless overwrite, and then over a regular file. */
static int move_in(int dirfd, const char *tmp, const char *name, bool overwrite,
		   char *err, size_t errlen)
{
	int ret = target_ok(dirfd, name, overwrite, err, errlen);

	if (ret)
		return ret;
	if (overwrite) {
		if (renameat(dirfd, tmp, dirfd, name) < 0)
			return kvmlu_err(err, errlen, -errno, "rename to %s: %s", name,
					 strerror(errno));
		return 0;
	}
	if (!renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE))
		return 0;
	/* A file system without RENAME_NOREPLACE: a hard link fails the same way. */
	if (errno == EINVAL && !linkat(dirfd, tmp, dirfd, name, 0)) {
		unlinkat(dirfd, tmp, 0);
		return 0;
	}
	if (errno == EEXIST) {
		/* Someone made it meanwhile: say what it is. */
		ret = target_ok(dirfd, name, false, err, errlen);
		return ret ? ret : kvmlu_err(err, errlen, -EEXIST, "%s exists", name);
	}
	return kvmlu_err(err, errlen, -errno, "rename to %s: %s", name, strerror(errno));
}

int state_file_write_at(int dirfd, const char *name, const void *blob, size_t size,
			bool overwrite, char *err, size_t errlen)
{
	char tmp[NAME_MAX + 1];
	int fd, ret;

	/* Refuse before writing anything: the common refusals cost nothing. */
	ret = target_ok(dirfd, name, overwrite, err, errlen);
	if (ret)
		return ret;
	fd = create_temp(dirfd, name, tmp, sizeof(tmp), err, errlen);
	if (fd < 0)
		return fd;
	ret = write_all(fd, blob, size);
	if (ret) {
		kvmlu_err(err, errlen, ret, "write %s: %s", tmp, strerror(-ret));
		goto out;
	}
	if (fsync(fd) < 0) {
		ret = kvmlu_err(err, errlen, -errno, "fsync %s: %s", tmp, strerror(errno));
		goto out;
	}
	ret = move_in(dirfd, tmp, name, overwrite, err, errlen);
	if (!ret && fsync(dirfd) < 0)
		ret = kvmlu_err(err, errlen, -errno, "fsync of the directory: %s", strerror(errno));
out:
	close(fd);
	if (ret)
		unlinkat(dirfd, tmp, 0);	/* ENOENT once moved in: nothing to do */
	return ret;
}
