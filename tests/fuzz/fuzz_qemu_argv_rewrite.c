// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for agent/libvirt/qemu_argv.c, kvmlu-qemu's reading
 * and rewriting of the command line libvirt gives it. The input is the
 * tokens after argv[0], each ended by a NUL (the form of the seeds, which
 * are libvirt's real command lines: tests/unit/agent/qemu-argv/).
 * Invariants:
 * - inspect and rewrite agree: the same answer, the same plan;
 * - refused: a reason is given; passed: a reason is given;
 * - rewritten: argv[0] is the QEMU given, the line ends in kvmlu's -qmp,
 *   every other token is one of the input's or the new pc.ram object,
 *   and the result read again is a pass (never rewritten twice).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/libvirt/qemu_argv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define QEMU "/usr/bin/qemu-system-x86_64"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qemu_argv_plan p, p2;
	struct qemu_argv_out out;
	char err[512], err2[512];
	char *buf, **argv;
	int argc = 1, rc, rc2;

	if (size > 64 * 1024)
		return 0;
	buf = malloc(size + 1);
	argv = calloc(size + 2, sizeof(*argv));
	if (!buf || !argv)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = (char *)"kvmlu-qemu";
	for (size_t off = 0; off < size; off += strlen(buf + off) + 1)
		argv[argc++] = buf + off;
	argv[argc] = NULL;

	err[0] = err2[0] = '\0';
	rc = qemu_argv_inspect(argc, argv, &p, err, sizeof(err));
	rc2 = qemu_argv_rewrite(argc, argv, QEMU, 123, "/run/kvmlu/lv", &out, &p2, err2,
				sizeof(err2));
	if (rc) {
		if (!err[0] || rc2 != rc || strcmp(err, err2) || out.argv)
			abort();
	} else if (p.action == QEMU_ARGV_PASS) {
		if (!p.why[0] || rc2 != -EINVAL || out.argv)
			abort();
	} else {
		if (rc2 || memcmp(&p, &p2, sizeof(p)) || strcmp(out.argv[0], QEMU) ||
		    out.argc < 3 || strcmp(out.argv[out.argc - 2], "-qmp") ||
		    out.argv[out.argc - 1] != out.qmp || out.argv[out.argc])
			abort();
		for (int i = 1; i < out.argc - 2; i++) {
			bool ours = out.argv[i] == out.object;

			for (int j = 1; j < argc && !ours; j++)
				ours = out.argv[i] == argv[j];
			if (!ours)
				abort();
		}
		out.argv[0] = (char *)"kvmlu-qemu";
		if (qemu_argv_inspect(out.argc, out.argv, &p2, err, sizeof(err)) ||
		    p2.action != QEMU_ARGV_PASS)
			abort();
		qemu_argv_out_free(&out);
	}
	free(argv);
	free(buf);
	return 0;
}
