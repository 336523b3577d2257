// SPDX-License-Identifier: GPL-2.0
/* A running QEMU's RAM memfd, found and taken (see qemu_ram_fd.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent/libvirt/lvram_peer.h"
#include "agent/libvirt/qemu_ram_fd.h"
#include "common/err.h"
#include "common/json_strict.h"

#define MEM_PATH_PREFIX	"/proc/self/fd/"
#define MAPS_MAX	(4 << 20)

/* -1 when o is not the wrapper's pc.ram; else N (share checked: -EINVAL). */
static int object_fd(const char *text, size_t n, char *err, size_t errlen)
{
	struct json_strict_error je;
	json_object *o, *v;
	const char *p;
	char *end;
	long fd = -1;

	if (!n || text[0] != '{' || json_strict_parse(text, n, 4, JSON_STRICT_UTF8, &o, &je))
		return -1;
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "qom-type", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "memory-backend-file") ||
	    !json_object_object_get_ex(o, "id", &v) || !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "pc.ram"))
		goto out;
	if (!json_object_object_get_ex(o, "mem-path", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strncmp(json_object_get_string(v), MEM_PATH_PREFIX, strlen(MEM_PATH_PREFIX)))
		goto out;
	p = json_object_get_string(v) + strlen(MEM_PATH_PREFIX);
	errno = 0;
	fd = strtol(p, &end, 10);
	if (p[0] < '0' || p[0] > '9' || *end || errno || fd > 1 << 20) {
		fd = kvmlu_err(err, errlen, -EINVAL, "pc.ram's mem-path is not /proc/self/fd/N");
		goto out;
	}
	if (!json_object_object_get_ex(o, "share", &v) ||
	    !json_object_is_type(v, json_type_boolean) || !json_object_get_boolean(v))
		fd = kvmlu_err(err, errlen, -EINVAL, "pc.ram is not share=true");
out:
	json_object_put(o);
	return (int)fd;
}

int qemu_ram_fd_from_cmdline(const char *cmdline, size_t len, int *fdno,
			     char *err, size_t errlen)
{
	int found = -1;
	size_t i = 0;

	while (i < len) {
		const char *tok = cmdline + i;
		size_t n = strnlen(tok, len - i), vn;
		int fd;

		i += n + 1;
		if (n != 7 || memcmp(tok, "-object", 7) || i >= len)
			continue;
		vn = strnlen(cmdline + i, len - i);
		fd = object_fd(cmdline + i, vn, err, errlen);
		i += vn + 1;
		if (fd < -1)
			return fd;
		if (fd < 0)
			continue;
		if (found >= 0)
			return kvmlu_err(err, errlen, -EINVAL, "two pc.ram backends");
		found = fd;
	}
	if (found < 0)
		return kvmlu_err(err, errlen, -ENOENT,
				 "no pc.ram memory-backend-file on /proc/self/fd/N (not started "
				 "through kvmlu-qemu)");
	*fdno = found;
	return 0;
}

bool qemu_ram_fd_mapped(const char *maps, size_t len, dev_t dev, ino_t ino)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(maps + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (maps + i)) : len - i;
		char line[512];
		unsigned int maj, min;
		unsigned long long inode;

		if (n < sizeof(line)) {
			memcpy(line, maps + i, n);
			line[n] = '\0';
			/* start-end perms offset major:minor inode path */
			if (sscanf(line, "%*x-%*x %*4s %*x %x:%x %llu", &maj, &min, &inode) == 3 &&
			    inode == (unsigned long long)ino && maj == major(dev) &&
			    min == minor(dev))
				return true;
		}
		i += n + 1;
	}
	return false;
}

int qemu_ram_find_pid(const char *uuid, pid_t *pid, int *fdno, char *err, size_t errlen)
{
	char have[LVRAM_UUID_LEN + 1], why[160];
	pid_t found = 0;
	int found_fd = -1, rc = 0;
	struct dirent *de;
	char *buf;
	DIR *d;

	buf = malloc(LVRAM_CMDLINE_MAX);
	d = buf ? opendir("/proc") : NULL;
	if (!d) {
		free(buf);
		return kvmlu_err(err, errlen, -ENOMEM, "cannot scan /proc");
	}
	while ((de = readdir(d))) {
		size_t len;
		int fd;
		char *end;
		long p = strtol(de->d_name, &end, 10);

		if (*end || p <= 0)
			continue;
		if (lvram_read_cmdline((pid_t)p, buf, LVRAM_CMDLINE_MAX, &len, why, sizeof(why)) ||
		    lvram_cmdline_uuid(buf, len, have, why, sizeof(why)) || strcmp(have, uuid) ||
		    qemu_ram_fd_from_cmdline(buf, len, &fd, why, sizeof(why)))
			continue;
		if (found) {
			rc = kvmlu_err(err, errlen, -EEXIST, "two processes with -uuid %s: %d and %ld",
				       uuid, (int)found, p);
			break;
		}
		found = (pid_t)p;
		found_fd = fd;
	}
	closedir(d);
	free(buf);
	if (rc)
		return rc;
	if (!found)
		return kvmlu_err(err, errlen, -ENOENT,
				 "no QEMU with -uuid %s started through kvmlu-qemu", uuid);
	*pid = found;
	*fdno = found_fd;
	return 0;
}

static int read_maps(pid_t pid, char **out, size_t *len)
{
	char path[64], *buf = malloc(MAPS_MAX);
	size_t got = 0;
	ssize_t n;
	int fd;

	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	while (got < MAPS_MAX && (n = read(fd, buf + got, MAPS_MAX - got)) > 0)
		got += (size_t)n;
	close(fd);
	*out = buf;
	*len = got;
	return 0;
}

int qemu_ram_take(pid_t pid, int fdno, uint64_t size, int *fd, char *err, size_t errlen)
{
	struct stat st;
	size_t mlen = 0;
	char *maps = NULL;
	int pidfd, f, rc;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return kvmlu_err(err, errlen, -errno, "pidfd_open %d: %s", (int)pid, strerror(errno));
	f = (int)syscall(SYS_pidfd_getfd, pidfd, fdno, 0);
	rc = f < 0 ? -errno : 0;
	close(pidfd);
	if (rc)
		return kvmlu_err(err, errlen, rc, "pidfd_getfd %d of pid %d: %s", fdno, (int)pid,
				 strerror(-rc));
	if (fstat(f, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size) {
		rc = kvmlu_err(err, errlen, -EINVAL,
			       "fd %d of pid %d is not a file of %" PRIu64 " bytes (pc.ram's size)",
			       fdno, (int)pid, size);
		goto fail;
	}
	rc = read_maps(pid, &maps, &mlen);
	if (rc) {
		kvmlu_err(err, errlen, rc, "/proc/%d/maps: %s", (int)pid, strerror(-rc));
		goto fail;
	}
	rc = qemu_ram_fd_mapped(maps, mlen, st.st_dev, st.st_ino) ? 0 :
		kvmlu_err(err, errlen, -EINVAL, "QEMU %d does not map its fd %d", (int)pid, fdno);
	free(maps);
	if (rc)
		goto fail;
	*fd = f;
	return 0;
fail:
	close(f);
	return rc;
}
