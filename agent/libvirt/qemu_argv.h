/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command line libvirt gives the kvmlu-qemu wrapper (its <emulator>),
 * read and rewritten so that the domain's RAM lives in a memfd kvmlu can
 * take (docs/libvirt-ram-in-place.md, section 3). Pure: no I/O, no fd is
 * touched; argv in, a plan and a new argv out, or a refusal with the
 * reason. Every token is untrusted.
 *
 * Three answers:
 *   pass     exec QEMU unchanged: a capability probe (-machine none), no
 *            -uuid, or no JSON memory-backend-memfd with id pc.ram;
 *   rewrite  pc.ram becomes memory-backend-file on /proc/self/fd/N, N the
 *            memfd the wrapper made, share on; prealloc is dropped, and a
 *            second QMP socket, kvmlu's, is appended;
 *   refuse   (-EINVAL) a command line kvmlu cannot keep in place and will
 *            not run as if it could: hugetlb, share false, a second
 *            memory backend, dimm or virtio-mem devices, -mem-path,
 *            -readconfig, -set, a -global on a memory backend, a machine
 *            that does not use pc.ram, a bad -uuid, or a command line
 *            that does not read as QEMU's option syntax.
 */
#ifndef KVMLU_LIBVIRT_QEMU_ARGV_H
#define KVMLU_LIBVIRT_QEMU_ARGV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QEMU_ARGV_UUID_LEN	36
#define QEMU_ARGV_RAM_ID	"pc.ram"
/* The memfd's name: "kvmlu-lv:<uuid>:pc.ram" (the agent finds it by this). */
#define QEMU_ARGV_MEMFD_PREFIX	"kvmlu-lv:"
#define QEMU_ARGV_MEMFD_NAME_MAX	(sizeof(QEMU_ARGV_MEMFD_PREFIX) + QEMU_ARGV_UUID_LEN + \
					 sizeof(":" QEMU_ARGV_RAM_ID))
/* Longest argv the wrapper reads (libvirt's are a few hundred tokens). */
#define QEMU_ARGV_MAX		4096
/* Largest pc.ram taken: 16 TiB. */
#define QEMU_ARGV_RAM_MAX	(16ULL << 40)

enum qemu_argv_action {
	QEMU_ARGV_PASS,
	QEMU_ARGV_REWRITE,
};

struct qemu_argv_plan {
	enum qemu_argv_action action;
	char why[160];			/* pass: why nothing is changed */
	/* rewrite only: */
	char uuid[QEMU_ARGV_UUID_LEN + 1];
	uint64_t ram_size;		/* bytes: the memfd's size */
	bool incoming;			/* -incoming: a restore or migration target */
};

/*
 * Reads argv[1..argc) (argv[0] is the wrapper's own path and ignored).
 * 0: plan filled, pass or rewrite. -EINVAL: refused, err says why and
 * names the option; -E2BIG: more than QEMU_ARGV_MAX tokens.
 */
int qemu_argv_inspect(int argc, char *const argv[], struct qemu_argv_plan *plan,
		      char *err, size_t errlen);

/* The rewritten command line. argv[0] is the QEMU path given. */
struct qemu_argv_out {
	char **argv;			/* NULL-terminated */
	int argc;
	char *object;			/* the new -object text (owned) */
	char *qmp;			/* the appended -qmp value (owned) */
};

/*
 * Inspects argv again and, when the answer is rewrite, builds the new
 * command line: pc.ram on /proc/self/fd/<ram_fd>, and
 * `-qmp unix:<qmp_dir>/<uuid>.qmp,server=on,wait=off`. qmp_dir: an
 * absolute path without ',' that leaves the socket path within
 * sun_path. 0: out filled (free with qemu_argv_out_free). -EINVAL:
 * refused, or the answer was pass (err says so); -ENOMEM.
 */
int qemu_argv_rewrite(int argc, char *const argv[], const char *qemu, int ram_fd,
		      const char *qmp_dir, struct qemu_argv_out *out, struct qemu_argv_plan *plan,
		      char *err, size_t errlen);
void qemu_argv_out_free(struct qemu_argv_out *out);

/*
 * The appended -qmp made to wait (wait=on) for its first client before
 * QEMU goes on: the agent sets x-ignore-shared there before libvirt's
 * migrate-incoming when it gave the RAM (design facts 11 and 12).
 */
void qemu_argv_qmp_wait(struct qemu_argv_out *out);

/* "kvmlu-lv:<uuid>:pc.ram" into name. */
void qemu_argv_memfd_name(const char *uuid, char name[QEMU_ARGV_MEMFD_NAME_MAX]);

/* Whether dir can hold kvmlu's QMP sockets: absolute, no ',', short enough. */
int qemu_argv_check_qmp_dir(const char *dir, char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_QEMU_ARGV_H */
