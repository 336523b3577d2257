/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where and how save-state writes a file a control client names. The
 * client is trusted with the control socket, not with the host's file
 * system, so the file may only be created in one directory: the one that
 * holds the VM's control socket (its run dir; the same after a live
 * upgrade, which hands the socket's path over). The name must be one plain
 * component: no '/', not "." or "..", not starting with '.' (the temp
 * files are hidden names), not ending in ".sock" (the agent finds VMs by
 * that suffix in a shared run dir).
 *
 * The write never follows a symlink and never replaces anything that is
 * not a regular file (a device node, socket, FIFO or directory stays as
 * it is); an existing regular file is replaced only when asked
 * (overwrite). The data goes to a temp file created with O_EXCL in the
 * same directory, opened once through a directory fd, and is then renamed
 * in: renameat2(RENAME_NOREPLACE) unless overwriting, so a file that
 * appears meanwhile is not replaced either.
 */
#ifndef KVMLU_STATE_STATE_FILE_H
#define KVMLU_STATE_STATE_FILE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The directory of control_path, opened (O_DIRECTORY|O_PATH) into *dirfd,
 * its resolved name into dir. -errno with the reason in err.
 */
int state_file_dir_open(const char *control_path, int *dirfd, char *dir, size_t dirlen,
			char *err, size_t errlen);

/*
 * The file name path means in dir: path is a bare name, or an absolute
 * path whose directory is dir. *name points into path. -EINVAL (path
 * outside dir, or a name the rules above refuse) or -EPERM with the
 * reason in err.
 */
int state_file_name(const char *dir, const char *path, const char **name,
		    char *err, size_t errlen);

/*
 * Write blob as name in dirfd, mode 0600, durable (fsync of the file and
 * the directory) and complete or not at all. -EEXIST if name exists and
 * overwrite is false; -EPERM if it exists and is not a regular file.
 */
int state_file_write_at(int dirfd, const char *name, const void *blob, size_t size,
			bool overwrite, char *err, size_t errlen);

#endif /* KVMLU_STATE_STATE_FILE_H */
