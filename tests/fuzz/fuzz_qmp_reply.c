// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for agent/libvirt/qmp_reply.c, what kvmlu reads of a
 * QEMU's QMP socket. The input is a stream of lines as QEMU would send
 * them (seeds: QEMU 7.2's own answers, tests/fuzz/corpus/fuzz_qmp_reply/);
 * each line is parsed, and every reader runs on every return and
 * greeting. Invariants:
 * - refused: a reason is given and nothing is held;
 * - accepted: the kind matches the one key that makes it, an error's
 *   text is printable ASCII, readers that succeed give values in their
 *   documented ranges (a status word of lowercase letters, at most max
 *   memory backends, NUL-terminated ids).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/libvirt/qmp_reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s >= 0x7f)
			abort();
}

static void read_all(json_object *ret)
{
	struct qmp_memdev devs[4];
	struct qmp_version v;
	struct qmp_status s;
	char err[256];
	size_t nr = 99;
	bool on;

	err[0] = '\0';
	if (qmp_version_read(ret, &v, err, sizeof(err))) {
		if (!err[0])
			abort();
	} else if (v.major > 65535 || v.minor > 65535 || v.micro > 65535) {
		abort();
	}
	err[0] = '\0';
	if (qmp_status_read(ret, &s, err, sizeof(err))) {
		if (!err[0])
			abort();
	} else if (!s.status[0] || strspn(s.status, "abcdefghijklmnopqrstuvwxyz-") !=
		   strlen(s.status)) {
		abort();
	}
	err[0] = '\0';
	if (qmp_capability_read(ret, "x-ignore-shared", &on, err, sizeof(err)) && !err[0])
		abort();
	err[0] = '\0';
	if (qmp_memdev_read(ret, devs, 4, &nr, err, sizeof(err))) {
		if (!err[0])
			abort();
	} else {
		if (nr > 4)
			abort();
		for (size_t i = 0; i < nr; i++)
			if (strnlen(devs[i].id, sizeof(devs[i].id)) >= sizeof(devs[i].id))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	size_t off = 0;

	while (off < size) {
		const char *nl = memchr(text + off, '\n', size - off);
		size_t len = nl ? (size_t)(nl - (text + off)) : size - off;
		struct qmp_line l;
		struct qmp_version v;
		char err[256] = "";
		int rc = qmp_line_parse(text + off, len, &l, err, sizeof(err));

		off += len + 1;
		if (rc) {
			if (!err[0] || l.root || (rc != -EMSGSIZE && rc != -EBADMSG && rc != -EPROTO))
				abort();
			continue;
		}
		switch (l.kind) {
		case QMP_LINE_GREETING:
			if (!json_object_object_get_ex(l.root, "QMP", NULL))
				abort();
			qmp_greeting_version(&l, &v, err, sizeof(err));
			break;
		case QMP_LINE_EVENT:
			if (!json_object_object_get_ex(l.root, "event", NULL))
				abort();
			break;
		case QMP_LINE_RETURN:
			read_all(l.ret);
			break;
		case QMP_LINE_ERROR:
			if (!l.error[0])
				abort();
			check_printable(l.error);
			break;
		}
		qmp_line_free(&l);
	}
	return 0;
}
