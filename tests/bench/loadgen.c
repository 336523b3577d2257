// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-loadgen: the load generator of the virtio bench
 * (tests/bench/bench_virtio_io.sh, harness case virtio_io_bench). Built
 * static, so the same binary runs in the stock Linux guest (whose
 * initramfs is busybox only) and in the QEMU host. Every result is one
 * line on stdout:
 *
 *   KVMLU-LOADGEN <mode> key=value ...
 *
 * Modes:
 * REGION is LEN or OFF+LEN in MiB: the part of DEV a run uses.
 *
 *   seqwrite DEV SECONDS REGION [MARK_BLOCK]
 *       1 MiB pwrite()s at OFF, OFF + 1 ... MiB (wrapping after LEN), each
 *       followed by fdatasync(), for SECONDS; with MARK_BLOCK (a 4 KiB
 *       block number) it runs until that block of DEV holds "KVMLU-STOP"
 *       instead (read with O_DIRECT before every write, so the guest's page
 *       cache cannot hide the host's write), printing a progress line
 *       every 8 MiB.
 *   randread DEV SECONDS REGION
 *       4 KiB O_DIRECT pread()s at random 4 KiB-aligned offsets inside the
 *       region, one at a time (queue depth 1), for SECONDS.
 *   waitmark DEV MARK_BLOCK WORD...
 *       polls the block (O_DIRECT, every 200 ms) until it starts with one
 *       of the WORDs; prints which.
 *   tcp-sink PORT [COUNT]
 *       accepts COUNT connections (default 1) one after the other, reads
 *       each to EOF (or a reset: tcp-sink-reset), closes it; prints bytes
 *       and MB/s per connection.
 *   tcp-send HOST PORT SECONDS
 *       connects (retrying for 30 s), writes 64 KiB buffers for SECONDS
 *       (or until SIGTERM/SIGINT), shuts down its write side and waits for
 *       the peer's close, so the time counts every byte received; prints
 *       bytes and MB/s.
 *
 * MB/s is 10^6 bytes per second. No thresholds: the bench compares runs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024L * 1024L)
#define BLK 4096L
#define STOP_WORD "KVMLU-STOP"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	printf("KVMLU-LOADGEN error %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: kvmlu-loadgen seqwrite DEV SECONDS [OFF_MIB+]LEN_MIB [MARK_BLOCK]\n"
		"       kvmlu-loadgen randread DEV SECONDS [OFF_MIB+]LEN_MIB\n"
		"       kvmlu-loadgen waitmark DEV MARK_BLOCK WORD...\n"
		"       kvmlu-loadgen tcp-sink PORT [COUNT]\n"
		"       kvmlu-loadgen tcp-send HOST PORT SECONDS\n");
	exit(2);
}

static long num_arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < 0)
		usage();
	return v;
}

/* region: "LEN" or "OFF+LEN" (MiB) */
static void region_arg(const char *s, long *off, long *len)
{
	const char *plus = strchr(s, '+');
	char tmp[32];

	*off = 0;
	if (plus) {
		size_t n = (size_t)(plus - s);
		if (n == 0 || n >= sizeof(tmp))
			usage();
		memcpy(tmp, s, n);
		tmp[n] = '\0';
		*off = num_arg(tmp);
		s = plus + 1;
	}
	*len = num_arg(s);
	if (*len < 1)
		*len = 1;
}

static void *aligned_buf(size_t size, int fill)
{
	void *p;
	if (posix_memalign(&p, BLK, size) != 0) {
		errno = ENOMEM;
		die("posix_memalign");
	}
	memset(p, fill, size);
	return p;
}

/* mark_has: does block MARK of the O_DIRECT fd start with WORD? */
static int mark_has(int dfd, long mark, void *buf, const char *word)
{
	if (pread(dfd, buf, BLK, (off_t)mark * BLK) != BLK)
		die("pread mark block");
	return memcmp(buf, word, strlen(word)) == 0;
}

static int seqwrite(const char *dev, long secs, const char *region, long mark)
{
	long off, region_mib;
	int fd = open(dev, O_WRONLY);
	int dfd = -1;
	char *buf = aligned_buf(MIB, 0x5a);
	void *mbuf = aligned_buf(BLK, 0);
	long n = 0;
	double t0, t;

	if (fd < 0)
		die("open for writing");
	region_arg(region, &off, &region_mib);
	if (mark >= 0) {
		dfd = open(dev, O_RDONLY | O_DIRECT);
		if (dfd < 0)
			die("open O_DIRECT for the mark");
	}
	t0 = now_s();
	for (;;) {
		if (mark >= 0) {
			if (mark_has(dfd, mark, mbuf, STOP_WORD))
				break;
		} else if (now_s() - t0 >= (double)secs) {
			break;
		}
		/* Each MiB differs from the one it replaces. */
		memcpy(buf, &n, sizeof(n));
		if (pwrite(fd, buf, MIB, (off_t)(off + n % region_mib) * MIB) != MIB)
			die("pwrite");
		if (fdatasync(fd) != 0)
			die("fdatasync");
		n++;
		if (mark >= 0 && n % 8 == 0) {
			printf("KVMLU-LOADGEN seqwrite-progress mib=%ld secs=%.2f\n", n, now_s() - t0);
			fflush(stdout);
		}
	}
	t = now_s() - t0;
	printf("KVMLU-LOADGEN seqwrite mib=%ld secs=%.3f MBps=%.2f\n", n, t,
	       t > 0 ? (double)n * MIB / 1e6 / t : 0.0);
	fflush(stdout);
	close(fd);
	if (dfd >= 0)
		close(dfd);
	free(buf);
	free(mbuf);
	return 0;
}

static int randread(const char *dev, long secs, const char *region)
{
	int fd = open(dev, O_RDONLY | O_DIRECT);
	void *buf = aligned_buf(BLK, 0);
	long off, len, blocks, n = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	double t0, t;

	if (fd < 0)
		die("open O_DIRECT");
	region_arg(region, &off, &len);
	blocks = len * (MIB / BLK);
	t0 = now_s();
	do {
		/* 64 reads between clock reads: the clock is not free in a nested guest. */
		for (int i = 0; i < 64; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (pread(fd, buf, BLK, (off_t)off * MIB + (off_t)(x % (uint64_t)blocks) * BLK) != BLK)
				die("pread");
			n++;
		}
		t = now_s() - t0;
	} while (t < (double)secs);
	printf("KVMLU-LOADGEN randread ops=%ld secs=%.3f iops=%.1f MBps=%.2f\n", n, t,
	       (double)n / t, (double)n * BLK / 1e6 / t);
	fflush(stdout);
	close(fd);
	free(buf);
	return 0;
}

static int waitmark(const char *dev, long mark, char **words, int nwords)
{
	int fd = open(dev, O_RDONLY | O_DIRECT);
	void *buf = aligned_buf(BLK, 0);

	if (fd < 0)
		die("open O_DIRECT");
	for (;;) {
		for (int i = 0; i < nwords; i++) {
			if (mark_has(fd, mark, buf, words[i])) {
				printf("KVMLU-LOADGEN waitmark word=%s\n", words[i]);
				fflush(stdout);
				close(fd);
				free(buf);
				return 0;
			}
		}
		usleep(200000);
	}
}

static int tcp_sink(long port, long count)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	static char buf[256 * 1024];

	if (ls < 0)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("bind");
	if (listen(ls, 4) != 0)
		die("listen");
	printf("KVMLU-LOADGEN tcp-listen port=%ld\n", port);
	fflush(stdout);
	for (long c = 0; c < count; c++) {
		int s = accept(ls, NULL, NULL);
		long long bytes = 0;
		double t0, t;
		ssize_t r;

		if (s < 0)
			die("accept");
		t0 = now_s();
		while ((r = read(s, buf, sizeof(buf))) > 0)
			bytes += r;
		t = now_s() - t0;
		close(s);
		/* A reset (the sender's host went away) ends this stream only. */
		printf("KVMLU-LOADGEN tcp-sink%s bytes=%lld secs=%.3f MBps=%.2f\n",
		       r < 0 ? "-reset" : "", bytes, t, t > 0 ? (double)bytes / 1e6 / t : 0.0);
		fflush(stdout);
	}
	close(ls);
	return 0;
}

static volatile sig_atomic_t send_stop;

static void on_stop(int sig)
{
	(void)sig;
	send_stop = 1;
}

static int tcp_send(const char *host, long port, long secs)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	static char buf[64 * 1024];
	long long bytes = 0;
	double t0, t, tc = now_s();
	int s = -1;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		errno = EINVAL;
		die("address");
	}
	for (;;) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0)
			die("socket");
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		if (now_s() - tc > 30)
			die("connect");
		close(s);
		usleep(200000);
	}
	/* No SA_RESTART: a signal ends a blocked write() with EINTR. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	memset(buf, 0xa5, sizeof(buf));
	t0 = now_s();
	while (!send_stop && now_s() - t0 < (double)secs) {
		ssize_t w = write(s, buf, sizeof(buf));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			die("write");
		bytes += w;
	}
	if (shutdown(s, SHUT_WR) != 0)
		die("shutdown");
	/* The sink closes once it read everything: wait for that. */
	while (read(s, buf, sizeof(buf)) > 0)
		;
	t = now_s() - t0;
	close(s);
	printf("KVMLU-LOADGEN tcp-send bytes=%lld secs=%.3f MBps=%.2f\n", bytes, t,
	       t > 0 ? (double)bytes / 1e6 / t : 0.0);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "seqwrite") == 0 && (argc == 5 || argc == 6))
		return seqwrite(argv[2], num_arg(argv[3]), argv[4], argc == 6 ? num_arg(argv[5]) : -1);
	if (strcmp(argv[1], "randread") == 0 && argc == 5)
		return randread(argv[2], num_arg(argv[3]), argv[4]);
	if (strcmp(argv[1], "waitmark") == 0 && argc >= 5)
		return waitmark(argv[2], num_arg(argv[3]), argv + 4, argc - 4);
	if (strcmp(argv[1], "tcp-sink") == 0 && (argc == 3 || argc == 4))
		return tcp_sink(num_arg(argv[2]), argc == 4 ? num_arg(argv[3]) : 1);
	if (strcmp(argv[1], "tcp-send") == 0 && argc == 5)
		return tcp_send(argv[2], num_arg(argv[3]), num_arg(argv[4]));
	usage();
	return 2;
}
