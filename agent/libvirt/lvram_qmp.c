// SPDX-License-Identifier: GPL-2.0
/* kvmlu's QMP steps around a QEMU replacement (see lvram_qmp.h). */
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/libvirt/lvram_qmp.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"

#define IGNORE_SHARED	"x-ignore-shared"

int lvram_qmp_path(const char *qmp_dir, const char *uuid, char *buf, size_t buflen)
{
	int n = snprintf(buf, buflen, "%s/%s.qmp", qmp_dir, uuid);

	return n < 0 || (size_t)n >= buflen ? -ENAMETOOLONG : 0;
}

int lvram_qmp_connect(struct qmp_client *c, const char *path, pid_t pid, int wait_ms,
		      char *err, size_t errlen)
{
	int64_t until = kvmlu_mono_ms() + wait_ms;
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	for (;;) {
		fd = json_line_connect(path, LVRAM_QMP_TIMEOUT_MS, err, errlen);
		/* A QEMU that died (its exec failed) will never listen. */
		if (fd >= 0 || kvmlu_mono_ms() >= until || (kill(pid, 0) && errno == ESRCH))
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000L }, NULL);
	}
	if (fd < 0)
		return fd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || len != sizeof(cr) ||
	    cr.pid != pid) {
		close(fd);
		return kvmlu_err(err, errlen, -ESRCH, "%s: answered by pid %d, not QEMU %d", path,
				 (int)cr.pid, (int)pid);
	}
	return qmp_client_open(c, fd, LVRAM_QMP_TIMEOUT_MS, err, errlen);
}

int lvram_qmp_check_ram(struct qmp_client *c, uint64_t size, char *err, size_t errlen)
{
	struct qmp_memdev devs[4];
	size_t nr;
	int rc;

	rc = qmp_query_memdev(c, devs, 4, &nr, err, errlen);
	if (rc)
		return rc;
	if (nr != 1 || strcmp(devs[0].id, "pc.ram"))
		return kvmlu_err(err, errlen, -EINVAL, "query-memdev: %zu backends, not pc.ram alone",
				 nr);
	if (!devs[0].share)
		return kvmlu_err(err, errlen, -EINVAL, "query-memdev: pc.ram is not share=true");
	if (devs[0].size != size)
		return kvmlu_err(err, errlen, -EINVAL,
				 "query-memdev: pc.ram is %" PRIu64 " bytes, the RAM %" PRIu64,
				 devs[0].size, size);
	return 0;
}

int lvram_qmp_ignore_shared(struct qmp_client *c, bool on, char *err, size_t errlen)
{
	bool now;
	int rc;

	rc = qmp_migrate_set_capability(c, IGNORE_SHARED, on, err, errlen);
	if (!rc)
		rc = qmp_query_migrate_capability(c, IGNORE_SHARED, &now, err, errlen);
	if (!rc && now != on)
		rc = kvmlu_err(err, errlen, -EIO, "%s still %s after setting it", IGNORE_SHARED,
			       now ? "on" : "off");
	return rc;
}

int lvram_qmp_paused(struct qmp_client *c, char *err, size_t errlen)
{
	struct qmp_status s;
	int rc = qmp_query_status(c, &s, err, errlen);

	if (!rc && (s.running || strcmp(s.status, "paused")))
		rc = kvmlu_err(err, errlen, -EINVAL, "QEMU is %s, not paused", s.status);
	return rc;
}
