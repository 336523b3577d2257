// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the lvram-open exchange (agent/libvirt/
 * lvram_request.c, lvram_peer.c): the agent reads the request line from
 * whoever connects to its lvram socket, kvmlu-qemu reads the agent's
 * answer, and the agent reads the asking process's command line. The
 * input is split at the first 0x01 byte: before it, a line read as a
 * request and as an answer; after it, a command line (NUL-separated).
 * Invariants:
 * - a refused line gives a reason;
 * - an accepted request has a valid lowercase UUID and a size that is a
 *   multiple of 4096 within 16 TiB, and formats back to a line that
 *   parses to the same request;
 * - an accepted answer never says ignore_shared without held RAM, and
 *   an error's text is printable ASCII;
 * - a -uuid found in the command line is a valid UUID, and the peer
 *   check passes only for that UUID and the uid wanted.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/libvirt/lvram_peer.h"
#include "agent/libvirt/lvram_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s >= 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memchr(data, 0x01, size);
	size_t line_len = sep ? (size_t)(sep - data) : size;
	const char *line = (const char *)data, *cmd = sep ? (const char *)sep + 1 : "";
	size_t cmd_len = sep ? size - line_len - 1 : 0;
	struct lvram_request rq, back;
	struct lvram_reply rep;
	char err[256], out[LVRAM_LINE_MAX + 64], uuid[LVRAM_UUID_LEN + 1];

	err[0] = '\0';
	if (lvram_request_parse(line, line_len, &rq, err, sizeof(err))) {
		if (!err[0])
			abort();
	} else {
		if (!lvram_uuid_valid(rq.uuid) || !rq.size || rq.size % 4096 ||
		    rq.size > LVRAM_RAM_MAX)
			abort();
		if (lvram_request_format(&rq, out, sizeof(out)) ||
		    lvram_request_parse(out, strlen(out), &back, NULL, 0) ||
		    strcmp(back.uuid, rq.uuid) || back.size != rq.size)
			abort();
	}
	err[0] = '\0';
	if (lvram_reply_parse(line, line_len, &rep, err, sizeof(err))) {
		if (!err[0])
			abort();
	} else {
		if (rep.ignore_shared && !rep.held)
			abort();
		if (!rep.ok) {
			check_printable(rep.error_class);
			check_printable(rep.desc);
		}
	}
	if (!lvram_cmdline_uuid(cmd, cmd_len, uuid, NULL, 0)) {
		if (!lvram_uuid_valid(uuid))
			abort();
		if (lvram_peer_check(107, 107, uuid, cmd, cmd_len, NULL, 0) ||
		    lvram_peer_check(108, 107, uuid, cmd, cmd_len, NULL, 0) != -EPERM)
			abort();
	}
	return 0;
}
