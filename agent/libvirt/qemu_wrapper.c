// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-qemu: a libvirt domain's <emulator>, in front of the real QEMU
 * (docs/libvirt-ram-in-place.md, section 3). It runs once per QEMU start,
 * as the domain's user, and ends in exec: nothing of it stays but the
 * memfd it hands QEMU.
 *
 *   1. read the config (qemu_wrapper_config.h): the QEMU to run, never
 *      taken from argv;
 *   2. read argv (qemu_argv.c): pass, rewrite or refuse;
 *   3. pass: exec QEMU with argv unchanged (capability probes, domains
 *      without a memfd pc.ram);
 *   4. rewrite: memfd "kvmlu-lv:<uuid>:pc.ram" sized to pc.ram, moved to
 *      fd >= 100 without close-on-exec, then exec QEMU on the rewritten
 *      argv (pc.ram on /proc/self/fd/N, share on, kvmlu's QMP socket).
 *
 * Every fd it inherits (libvirt's monitor socket, taps, a restore's image)
 * is left open and at its number. A refusal or any failure is one line on
 * stderr (the domain's log) and exit 1: libvirt reports the start as
 * failed, and a restore keeps its managed-save image.
 *
 * With -incoming (a restore or a migration target) it first asks the
 * agent's lvram socket (lvram_client.h) whether the agent holds the
 * domain's RAM (domain-replace-qemu). Held: that memfd becomes fd N and
 * kvmlu's QMP socket waits for the agent (wait=on), which sets
 * x-ignore-shared before libvirt's migrate-incoming. Nothing held, or no
 * agent: a new, empty memfd, like any start; the migration stream fills
 * it. The agent refusing (a second QEMU for the same RAM, say): exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/libvirt/lvram_client.h"
#include "agent/libvirt/qemu_argv.h"
#include "agent/libvirt/qemu_wrapper_config.h"

#define RAM_FD_MIN	100	/* above anything libvirt passes */

static int read_config(struct qemu_wrapper_config *cfg, char *err, size_t errlen)
{
	const char *path = getenv(QEMU_WRAPPER_CONFIG_ENV);

	if (!path || !path[0])
		path = QEMU_WRAPPER_CONFIG_PATH;
	return qemu_wrapper_config_load(path, cfg, err, errlen);
}

/* fd at the lowest free number >= RAM_FD_MIN, inheritable; fd closed. -1 with err. */
static int ram_fd_high(int fd, const char *what, char *err, size_t errlen)
{
	/* F_DUPFD leaves close-on-exec clear: the copy is what QEMU inherits. */
	int ram_fd = fcntl(fd, F_DUPFD, RAM_FD_MIN);

	if (ram_fd < 0)
		snprintf(err, errlen, "%s to fd >= %d: %s", what, RAM_FD_MIN, strerror(errno));
	close(fd);
	return ram_fd;
}

/*
 * A restore (-incoming): the RAM the agent holds for the domain, if any
 * (lvram_client.h). 0 with *ram_fd -1: nothing held, make a new memfd.
 */
static int held_ram(const struct qemu_wrapper_config *cfg, const struct qemu_argv_plan *plan,
		    int *ram_fd, char *err, size_t errlen)
{
	char why[400];
	bool ignore_shared;
	int fd, rc;

	*ram_fd = -1;
	rc = lvram_client_open(cfg->lvram_socket, plan->uuid, plan->ram_size, &fd,
			       &ignore_shared, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "RAM from the agent: %s", why);
		return rc;
	}
	if (fd < 0) {
		fprintf(stderr, "kvmlu-qemu: domain %s: %s\n", plan->uuid, why);
		return 0;
	}
	*ram_fd = ram_fd_high(fd, "the agent's memfd", err, errlen);
	return *ram_fd < 0 ? -EBADF : 0;
}

/* The memfd for pc.ram at fd >= RAM_FD_MIN, inheritable; or -1 with err. */
static int make_ram_memfd(const struct qemu_argv_plan *plan, char *err, size_t errlen)
{
	char name[QEMU_ARGV_MEMFD_NAME_MAX];
	int fd;

	qemu_argv_memfd_name(plan->uuid, name);
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "memfd_create %s: %s", name, strerror(errno));
		return -1;
	}
	/* QEMU maps a file of the right size as it is (no truncate). */
	if (ftruncate(fd, (off_t)plan->ram_size)) {
		snprintf(err, errlen, "memfd %s to %llu bytes: %s", name,
			 (unsigned long long)plan->ram_size, strerror(errno));
		close(fd);
		return -1;
	}
	return ram_fd_high(fd, name, err, errlen);
}

int main(int argc, char **argv)
{
	struct qemu_wrapper_config cfg;
	struct qemu_argv_plan plan;
	struct qemu_argv_out out;
	struct stat st;
	char err[512];
	int ram_fd = -1;
	bool held;

	if (read_config(&cfg, err, sizeof(err))) {
		fprintf(stderr, "kvmlu-qemu: config %s\n", err);
		return 1;
	}
	if (qemu_argv_inspect(argc, argv, &plan, err, sizeof(err))) {
		fprintf(stderr, "kvmlu-qemu: refusing to start QEMU: %s\n", err);
		return 1;
	}
	if (plan.action == QEMU_ARGV_PASS) {
		argv[0] = cfg.qemu;
		execv(cfg.qemu, argv);
		fprintf(stderr, "kvmlu-qemu: exec %s: %s\n", cfg.qemu, strerror(errno));
		return 1;
	}
	/* QEMU would fail on the -qmp socket; say what is missing instead. */
	errno = 0;
	if (stat(cfg.qmp_dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "kvmlu-qemu: domain %s: QMP directory %s: %s\n", plan.uuid,
			cfg.qmp_dir, errno ? strerror(errno) : "not a directory");
		return 1;
	}
	if (plan.incoming && held_ram(&cfg, &plan, &ram_fd, err, sizeof(err))) {
		fprintf(stderr, "kvmlu-qemu: refusing to start QEMU: domain %s: %s\n", plan.uuid,
			err);
		return 1;
	}
	held = ram_fd >= 0;
	if (!held)
		ram_fd = make_ram_memfd(&plan, err, sizeof(err));
	if (ram_fd < 0) {
		fprintf(stderr, "kvmlu-qemu: domain %s: %s\n", plan.uuid, err);
		return 1;
	}
	if (qemu_argv_rewrite(argc, argv, cfg.qemu, ram_fd, cfg.qmp_dir, &out, &plan, err,
			      sizeof(err))) {
		fprintf(stderr, "kvmlu-qemu: refusing to start QEMU: %s\n", err);
		return 1;
	}
	/* The agent sets x-ignore-shared before libvirt's migrate-incoming. */
	if (held)
		qemu_argv_qmp_wait(&out);
	fprintf(stderr, "kvmlu-qemu: domain %s: pc.ram (%llu bytes) on memfd fd %d%s, kvmlu QMP %s\n",
		plan.uuid, (unsigned long long)plan.ram_size, ram_fd,
		held ? " (the RAM the agent held)" :
		plan.incoming ? " (new and empty: -incoming fills it)" : "", out.qmp);
	execv(cfg.qemu, out.argv);
	fprintf(stderr, "kvmlu-qemu: exec %s: %s\n", cfg.qemu, strerror(errno));
	qemu_argv_out_free(&out);
	return 1;
}
