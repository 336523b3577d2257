// SPDX-License-Identifier: GPL-2.0
/* Which program `upgrade` may start (see upgrade_binary.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvmlu/control_wire.h"
#include "vmm/upgrade/upgrade_binary.h"

#define SELF_EXE "/proc/self/exe"

extern char **environ;

/*
 * The checked fd (O_PATH) of path, or -1 with *why (a rule) or errno set.
 * Only async-signal-safe calls: the child runs it between fork and exec.
 */
static int binary_open(const char *path, const char **why)
{
	struct stat st;
	uid_t me = geteuid();
	int fd;

	*why = NULL;
	if (!strcmp(path, SELF_EXE))
		return open(path, O_PATH | O_CLOEXEC);
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	if (S_ISLNK(st.st_mode))
		*why = "a symlink (name the file itself)";
	else if (!S_ISREG(st.st_mode))
		*why = "not a regular file";
	else if (st.st_uid != 0 && st.st_uid != me)
		*why = "owned by another user (only root's or the VMM's own user's files run)";
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		*why = "writable by group or others";
	else if (!(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		*why = "not executable";
	if (*why) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int upgrade_binary_check(const char *path, struct json_line_error *e)
{
	const char *why;
	int fd = binary_open(path, &why);

	if (fd < 0)
		return json_line_error_set(e, KVMLU_ERR_INVALID, "upgrade: binary %.200s: %s", path,
					   why ? why : strerror(errno));
	close(fd);
	return 0;
}

void upgrade_binary_exec(const char *path, char *const argv[])
{
	static const char msg[] = "kvmlu-vmm: upgrade: the new binary no longer passes its check\n";
	const char *why;
	int fd = binary_open(path, &why);

	if (fd < 0) {
		if (why && write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
			/* nothing more we can say */
		}
		return;
	}
	execveat(fd, "", argv, environ, AT_EMPTY_PATH);
	close(fd);
}
