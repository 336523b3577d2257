// SPDX-License-Identifier: GPL-2.0
/* Who may kexec what, and the files opened once (see kexec_files.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/update/kexec_files.h"
#include "common/err.h"
#include "common/path_name.h"

/* Not writable by group or others, owned by root: only root can change it. */
static int root_only(const struct stat *st, const char *what, const char *path,
		     char *err, size_t errlen)
{
	if (st->st_uid != 0)
		return kvmlu_err(err, errlen, -EPERM, "%s %s: owned by uid %u, not root",
				 what, path, (unsigned int)st->st_uid);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return kvmlu_err(err, errlen, -EPERM,
				 "%s %s: writable by group or others (mode %04o)", what, path,
				 (unsigned int)(st->st_mode & 07777));
	return 0;
}

/* Lexically: "." and ".." were refused before, so this is where it leads. */
static bool under_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && path[n] == '/';
}

/*
 * Walk path from / one component at a time without following a symlink,
 * checking every directory and the file; the file's fd (read-only) is
 * returned.
 */
static int open_checked(const char *what, const char *path, char *err, size_t errlen)
{
	char sofar[4096];
	const char *p = path;
	struct stat st;
	int dfd, fd = -1, ret;

	if (strlen(path) >= sizeof(sofar))
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "%s %s: path too long", what, path);
	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return kvmlu_err(err, errlen, -errno, "open /: %s", strerror(errno));
	snprintf(sofar, sizeof(sofar), "/");
	for (;;) {
		size_t n;
		char comp[256];
		bool last;

		if (fstat(dfd, &st) < 0) {
			ret = kvmlu_err(err, errlen, -errno, "%s: %s", sofar, strerror(errno));
			goto out;
		}
		ret = root_only(&st, "directory", sofar, err, errlen);
		if (ret)
			goto out;
		p += strspn(p, "/");
		n = strcspn(p, "/");
		last = p[n + strspn(p + n, "/")] == '\0';
		if (n == 0 || n >= sizeof(comp)) {
			ret = kvmlu_err(err, errlen, -EINVAL, "%s %s: not a file name", what, path);
			goto out;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			ret = kvmlu_err(err, errlen, -EPERM, "%s %s: \".\" or \"..\" in the path",
					what, path);
			goto out;
		}
		snprintf(sofar + strlen(sofar), sizeof(sofar) - strlen(sofar), "%s%s",
			 strcmp(sofar, "/") ? "/" : "", comp);
		p += n;
		if (last)
			break;
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			ret = kvmlu_err(err, errlen, errno == ENOTDIR ? -EPERM : -errno,
					"%s %s: %s: %s", what, path, sofar,
					errno == ENOTDIR ? "a symlink or not a directory" :
					strerror(errno));
			goto out;
		}
		close(dfd);
		dfd = fd;
		fd = -1;
	}
	/* O_NONBLOCK: a FIFO must not hang the open; it is refused below. */
	fd = openat(dfd, strrchr(sofar, '/') + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = kvmlu_err(err, errlen, errno == ELOOP ? -EPERM : -errno, "%s %s: %s", what,
				path, errno == ELOOP ? "a symlink" : strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		ret = kvmlu_err(err, errlen, -errno, "%s %s: %s", what, path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = kvmlu_err(err, errlen, -EPERM, "%s %s: not a regular file", what, path);
		goto out;
	}
	ret = root_only(&st, what, path, err, errlen);
out:
	close(dfd);
	if (ret) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return fd;
}

static int open_one(const struct agent_config *c, bool trusted, const char *what,
		    const char *path, char *err, size_t errlen)
{
	bool allowed = false;
	int fd;

	if (trusted) {
		/* Any file; O_NONBLOCK only so that a FIFO cannot hang this thread. */
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return kvmlu_err(err, errlen, -errno, "%s %s: %s", what, path,
					 strerror(errno));
		return fd;
	}
	if (path_has_dot_component(path))
		return kvmlu_err(err, errlen, -EPERM, "%s %s: \".\" or \"..\" in the path", what,
				 path);
	for (unsigned int i = 0; i < c->nr_kexec_dirs; i++)
		allowed |= under_dir(path, c->kexec_dirs[i]);
	if (!allowed)
		return kvmlu_err(err, errlen, -EPERM,
				 "%s %s: not under %s%s (kexec_dirs; only root may name another file)",
				 what, path, c->kexec_dirs[0],
				 c->nr_kexec_dirs > 1 ? " or the other kexec_dirs" : "");
	return open_checked(what, path, err, errlen);
}

bool kexec_files_trusted(uid_t peer_uid)
{
	return peer_uid == 0 || peer_uid == geteuid();
}

int kexec_files_open(const struct agent_config *c, bool trusted, const char *kernel,
		     const char *initrd, struct kexec_files *f, char *err, size_t errlen)
{
	*f = KEXEC_FILES_NONE;
	f->kernel_fd = open_one(c, trusted, "kernel", kernel, err, errlen);
	if (f->kernel_fd < 0) {
		int ret = f->kernel_fd;

		f->kernel_fd = -1;
		return ret;
	}
	if (initrd && initrd[0]) {
		f->initrd_fd = open_one(c, trusted, "initrd", initrd, err, errlen);
		if (f->initrd_fd < 0) {
			int ret = f->initrd_fd;

			f->initrd_fd = -1;
			kexec_files_close(f);
			return ret;
		}
	}
	return 0;
}

void kexec_files_close(struct kexec_files *f)
{
	if (f->kernel_fd >= 0)
		close(f->kernel_fd);
	if (f->initrd_fd >= 0)
		close(f->initrd_fd);
	*f = KEXEC_FILES_NONE;
}
