// SPDX-License-Identifier: GPL-2.0
/* kvmlu-qemu asks the agent for held RAM (see lvram_client.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "agent/libvirt/lvram_client.h"
#include "agent/libvirt/lvram_request.h"
#include "common/err.h"
#include "common/fd_pass.h"
#include "common/json_line.h"

int lvram_client_open(const char *socket_path, const char *uuid, uint64_t size, int *fd,
		      bool *ignore_shared, char *why, size_t whylen)
{
	struct timeval tv = { .tv_sec = LVRAM_CLIENT_TIMEOUT_MS / 1000 };
	struct lvram_request rq = { .size = size };
	struct lvram_reply rep;
	char line[LVRAM_LINE_MAX + 2], buf[LVRAM_LINE_MAX + 2], e[256];
	unsigned int nfds = 0;
	size_t len = 0;
	struct stat st;
	int s, got = -1, rc;

	*fd = -1;
	*ignore_shared = false;
	snprintf(rq.uuid, sizeof(rq.uuid), "%s", uuid);
	if (lvram_request_format(&rq, line, sizeof(line)))
		return kvmlu_err(why, whylen, -EINVAL, "no request for %s", uuid);
	s = json_line_connect(socket_path, LVRAM_CLIENT_TIMEOUT_MS, e, sizeof(e));
	if (s < 0)
		return kvmlu_err(why, whylen, 0, "no agent at %s (%s)", socket_path, e);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (write(s, line, strlen(line)) != (ssize_t)strlen(line)) {
		close(s);
		return kvmlu_err(why, whylen, -EIO, "%s: request not sent", socket_path);
	}
	rc = fd_pass_recv(s, &got, 1, &nfds, buf, sizeof(buf) - 1, &len, FD_PASS_CLOEXEC, e,
			  sizeof(e));
	close(s);
	if (rc)
		return kvmlu_err(why, whylen, rc, "%s: no answer: %s", socket_path, e);
	rc = lvram_reply_parse(buf, len, &rep, e, sizeof(e));
	if (!rc && !rep.ok)
		rc = kvmlu_err(e, sizeof(e), -EPERM, "%s: %s", rep.error_class, rep.desc);
	else if (!rc && rep.held != (nfds == 1))
		rc = kvmlu_err(e, sizeof(e), -EPROTO, "held %s with %u fds",
			       rep.held ? "true" : "false", nfds);
	else if (!rc && rep.held && (fstat(got, &st) || !S_ISREG(st.st_mode) ||
				     (uint64_t)st.st_size != size))
		rc = kvmlu_err(e, sizeof(e), -EINVAL, "the RAM given is not a file of %llu bytes",
			       (unsigned long long)size);
	if (rc) {
		if (got >= 0)
			close(got);
		return kvmlu_err(why, whylen, rc, "agent at %s: %s", socket_path, e);
	}
	if (!rep.held)
		return kvmlu_err(why, whylen, 0, "the agent holds no RAM for %s", uuid);
	*fd = got;
	*ignore_shared = rep.ignore_shared;
	return kvmlu_err(why, whylen, 0, "RAM held by the agent");
}
