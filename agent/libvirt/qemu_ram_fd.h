/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A running QEMU's RAM memfd, as kvmlu-qemu gave it (docs/libvirt-ram-
 * in-place.md, section 3, "Memfd take"): found by the QEMU's command line
 * and taken with pidfd_getfd, never by the memfd's name (a memfd LUO gave
 * back after a kexec has none).
 *
 *   pid     the one process whose command line has -uuid <uuid> and a
 *           pc.ram memory-backend-file on /proc/self/fd/N (what the
 *           wrapper writes); none or two: refused;
 *   fd N    from that -object, which must say share true;
 *   take    pidfd_open + pidfd_getfd of N; the file must be a regular
 *           file of the size QEMU reports, and its inode must be mapped in
 *           /proc/<pid>/maps (QEMU maps it: it is the guest's RAM).
 *
 * The command line and the maps text are untrusted (the QEMU process
 * could write anything there); the parsers are pure.
 */
#ifndef KVMLU_LIBVIRT_QEMU_RAM_FD_H
#define KVMLU_LIBVIRT_QEMU_RAM_FD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * From cmdline[0..len) (NUL-separated): N of the one -object
 * {"qom-type":"memory-backend-file","id":"pc.ram","mem-path":"/proc/self/fd/N",
 * "share":true,...}. -ENOENT none, -EINVAL odd (share not true, two).
 */
int qemu_ram_fd_from_cmdline(const char *cmdline, size_t len, int *fdno,
			     char *err, size_t errlen);

/* Whether maps[0..len) has a mapping of inode ino on device dev (st_dev). */
bool qemu_ram_fd_mapped(const char *maps, size_t len, dev_t dev, ino_t ino);

/* The pid of the domain's QEMU started through kvmlu-qemu. -ENOENT, -EEXIST (two). */
int qemu_ram_find_pid(const char *uuid, pid_t *pid, int *fdno, char *err, size_t errlen);

/*
 * fd N of pid, checked: a regular file of size bytes, mapped by pid.
 * *fd is the agent's own reference (close-on-exec).
 */
int qemu_ram_take(pid_t pid, int fdno, uint64_t size, int *fd, char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_QEMU_RAM_FD_H */
