// SPDX-License-Identifier: GPL-2.0
/*
 * lvram-spike: test-only tool of harness/lvram_qemu_spike, step 0 of
 * docs/libvirt-ram-in-place.md: a QEMU guest's RAM kept in a LUO-preserved
 * memfd across a host kexec, with no kvmlu-vmm and no libvirt.
 *
 *   give --fd N --new SIZE [--probe-uid U] -- QEMU ARGV...
 *   give --fd N --session NAME [--probe-uid U] -- QEMU ARGV...
 *        A memfd named "kvmlu-lv:spike:pc.ram" of SIZE, or the one
 *        preserved in session NAME under token 0x100 (retrieved, summed,
 *        session finished), at fd N without close-on-exec, then exec of
 *        QEMU, whose argv names it as mem-path=/proc/self/fd/N. With
 *        --probe-uid, a child first drops to uid/gid U and reopens
 *        /proc/self/fd/N O_RDWR, as QEMU does as libvirt-qemu.
 *   take PID SESSION
 *        Finds PID's memfd "kvmlu-lv:..." in /proc/PID/fd, takes it with
 *        pidfd_getfd, creates SESSION and preserves it under token 0x100,
 *        prints "take: ... fd=F", then holds the session until the kexec.
 *   sum PATH
 *        The guestmem checksum (XXH3-128, one region at GPA 0) of the
 *        memfd at PATH (/proc/<take>/fd/F).
 *
 * Lines start with the subcommand; exit 0 ok, 1 failure, 2 usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/luo_session.h"
#include "guestmem/guestmem.h"

#define SPIKE_MEMFD_NAME	"kvmlu-lv:spike:pc.ram"
#define SPIKE_LINK_PREFIX	"/memfd:kvmlu-lv:"
#define SPIKE_TOKEN		LUO_TOKEN_RAM_BASE

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: lvram-spike give --fd N (--new SIZE | --session NAME) [--probe-uid U] -- ARGV...\n"
		"       lvram-spike take PID SESSION\n"
		"       lvram-spike sum PATH\n");
	exit(2);
}

static long parse_num(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		usage();
	return v;
}

/* The checksum of a memfd (not consumed: the function works on a dup). */
static int sum_fd(const char *who, int fd)
{
	struct guestmem_checksum c;
	struct guestmem gm;
	struct stat st;
	char err[256], hex[33];
	int dfd, ret;

	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: fstat: %s\n", who, strerror(errno));
		return -1;
	}
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0) {
		fprintf(stderr, "%s: dup: %s\n", who, strerror(errno));
		return -1;
	}
	memset(&gm, 0, sizeof(gm));
	gm.backend = GUESTMEM_MEMFD;
	gm.nr = 1;
	gm.r[0].size = (uint64_t)st.st_size;
	ret = guestmem_adopt(&gm, &dfd, err, sizeof(err));
	if (ret) {
		close(dfd);
		fprintf(stderr, "%s: %s\n", who, err);
		return -1;
	}
	ret = guestmem_checksum(&gm, 0, &c);
	guestmem_destroy(&gm);
	if (ret) {
		fprintf(stderr, "%s: checksum: %s\n", who, strerror(-ret));
		return -1;
	}
	guestmem_checksum_format(&c, hex);
	printf("%s: sum=%s bytes=%llu ms=%.0f threads=%u\n", who, hex,
	       (unsigned long long)c.bytes, c.nsec / 1e6, c.threads);
	fflush(stdout);
	return 0;
}

static void describe(const char *who, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return;
	printf("%s: fd=%d ino=%llu size=%lld mode=%04o uid=%u gid=%u nlink=%lu\n", who, fd,
	       (unsigned long long)st.st_ino, (long long)st.st_size, st.st_mode & 07777,
	       st.st_uid, st.st_gid, (unsigned long)st.st_nlink);
	fflush(stdout);
}

/* As QEMU under another uid would: open /proc/self/fd/N O_RDWR. */
static void probe_reopen(int n, long uid)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "give: fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		char path[64];
		int fd;

		if (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) || setgroups(0, NULL) ||
		    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid)) {
			printf("give: probe: cannot become uid %ld: %s\n", uid, strerror(errno));
			fflush(stdout);
			_exit(1);
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", n);
		fd = open(path, O_RDWR);
		if (fd < 0) {
			printf("give: reopen %s as uid %ld: failed: %s\n", path, uid, strerror(errno));
			fflush(stdout);
			_exit(1);
		}
		printf("give: reopen %s as uid %ld: ok\n", path, uid);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	fflush(stdout);
}

static int cmd_give(int argc, char **argv)
{
	const char *session = NULL;
	long n = -1, uid = -1;
	int64_t size = 0;
	char err[256];
	int i, fd;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--fd")) {
			n = parse_num(argv[++i], 1000);
		} else if (!strcmp(argv[i], "--new")) {
			uint64_t v;

			if (guestmem_parse_size(argv[++i], &v))
				usage();
			size = (int64_t)v;
		} else if (!strcmp(argv[i], "--session")) {
			session = argv[++i];
		} else if (!strcmp(argv[i], "--probe-uid")) {
			uid = parse_num(argv[++i], 65534);
		} else {
			usage();
		}
	}
	if (i + 1 >= argc || n < 3 || !!session == !!size)
		usage();

	if (size) {
		fd = memfd_create(SPIKE_MEMFD_NAME, MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, size) < 0) {
			fprintf(stderr, "give: memfd of %lld bytes: %s\n", (long long)size, strerror(errno));
			return 1;
		}
	} else {
		struct luo_session s;
		double t0 = now_ms();

		luo_session_init(&s);
		if (luo_session_retrieve(&s, session, err, sizeof(err)) ||
		    luo_session_retrieve_fd(&s, SPIKE_TOKEN, "RAM memfd", &fd, err, sizeof(err))) {
			fprintf(stderr, "give: %s\n", err);
			return 1;
		}
		printf("give: retrieved %s token 0x%llx in %.0f ms\n", session,
		       (unsigned long long)SPIKE_TOKEN, now_ms() - t0);
		describe("give: retrieved", fd);
		if (sum_fd("give: retrieved", fd))
			return 1;
		if (luo_session_finish(&s, err, sizeof(err))) {
			fprintf(stderr, "give: %s\n", err);
			return 1;
		}
		luo_session_close(&s);
	}
	/* dup2 leaves the new fd without FD_CLOEXEC: QEMU must inherit it. */
	if (dup2(fd, (int)n) < 0) {
		fprintf(stderr, "give: dup2 to %ld: %s\n", n, strerror(errno));
		return 1;
	}
	close(fd);
	describe("give: for QEMU", (int)n);
	if (uid >= 0)
		probe_reopen((int)n, uid);
	execvp(argv[i + 1], &argv[i + 1]);
	fprintf(stderr, "give: exec %s: %s\n", argv[i + 1], strerror(errno));
	return 1;
}

/* The fd number in PID of its memfd named kvmlu-lv:..., or -1. */
static int find_memfd(pid_t pid, char *link, size_t linklen)
{
	char dir[64], path[PATH_MAX];
	struct dirent *d;
	int found = -1;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	dp = opendir(dir);
	if (!dp)
		return -1;
	while ((d = readdir(dp))) {
		ssize_t len;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		len = readlink(path, link, linklen - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		if (!strncmp(link, SPIKE_LINK_PREFIX, strlen(SPIKE_LINK_PREFIX))) {
			found = atoi(d->d_name);
			break;
		}
	}
	closedir(dp);
	return found;
}

static int cmd_take(int argc, char **argv)
{
	struct luo_session s;
	char err[256], link[PATH_MAX];
	int pidfd, target, fd;
	double t0;
	pid_t pid;

	if (argc != 4)
		usage();
	pid = (pid_t)parse_num(argv[2], INT_MAX);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		fprintf(stderr, "take: pidfd_open(%d): %s\n", (int)pid, strerror(errno));
		return 1;
	}
	target = find_memfd(pid, link, sizeof(link));
	if (target < 0) {
		fprintf(stderr, "take: no %s... among /proc/%d/fd\n", SPIKE_LINK_PREFIX, (int)pid);
		return 1;
	}
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, target, 0);
	if (fd < 0) {
		fprintf(stderr, "take: pidfd_getfd(%d, %d): %s\n", (int)pid, target, strerror(errno));
		return 1;
	}
	printf("take: pid %d fd %d is %s\n", (int)pid, target, link);
	describe("take", fd);
	luo_session_init(&s);
	t0 = now_ms();
	if (luo_session_create(&s, argv[3], err, sizeof(err)) ||
	    luo_session_preserve_fd(&s, fd, SPIKE_TOKEN, "RAM memfd", err, sizeof(err))) {
		fprintf(stderr, "take: %s\n", err);
		return 1;
	}
	printf("take: preserved in %s token 0x%llx in %.0f ms; holding fd=%d until the kexec\n",
	       argv[3], (unsigned long long)SPIKE_TOKEN, now_ms() - t0, fd);
	fflush(stdout);
	for (;;)
		pause();
}

static int cmd_sum(int argc, char **argv)
{
	int fd, ret;

	if (argc != 3)
		usage();
	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "sum: open %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	ret = sum_fd("sum", fd);
	close(fd);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "give"))
		return cmd_give(argc, argv);
	if (!strcmp(argv[1], "take"))
		return cmd_take(argc, argv);
	if (!strcmp(argv[1], "sum"))
		return cmd_sum(argc, argv);
	usage();
	return 2;
}
