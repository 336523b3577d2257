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
 *   seqread DEV SECONDS REGION
 *       1 MiB O_DIRECT pread()s at OFF, OFF + 1 ... MiB (wrapping after
 *       LEN), one at a time, for SECONDS (O_DIRECT: the guest's page cache
 *       would otherwise serve the region after its first pass).
 *   randread DEV SECONDS REGION
 *       4 KiB O_DIRECT pread()s at random 4 KiB-aligned offsets inside the
 *       region, one at a time (queue depth 1), for SECONDS.
 *   aio DEV SECONDS REGION read|write QD
 *       4 KiB O_DIRECT reads or writes at random 4 KiB-aligned offsets
 *       inside the region through Linux AIO (io_setup/io_submit/
 *       io_getevents as raw syscalls: the guest has no libaio), QD of them
 *       in flight: each completion is resubmitted at once, so the device
 *       always has QD minus the few being resubmitted. avgqd is the
 *       block layer's own figure (time_in_queue of /sys/block/NAME/stat
 *       over the run's time), which shows the depth the device really saw.
 *       Prints aio-randread or aio-randwrite.
 *   waitmark DEV MARK_BLOCK WORD...
 *       polls the block (O_DIRECT, every 200 ms) until it starts with one
 *       of the WORDs; prints which.
 *   tcp-sink PORT [COUNT]
 *       accepts COUNT connections (default 1) one after the other, reads
 *       each to EOF (or a reset: tcp-sink-reset), closes it; prints bytes
 *       and MB/s per connection.
 *   tcp-echo PORT
 *       accepts one connection (TCP_NODELAY) and writes back whatever it
 *       reads until EOF; prints tcp-echo-listen first, then the bytes.
 *   tcp-rr HOST PORT SECONDS SIZE
 *       connects (retrying for 30 s, TCP_NODELAY), then for SECONDS writes
 *       SIZE bytes and reads SIZE bytes back, one transaction at a time;
 *       prints transactions and transactions per second.
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
#include <linux/aio_abi.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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
		"       kvmlu-loadgen seqread DEV SECONDS [OFF_MIB+]LEN_MIB\n"
		"       kvmlu-loadgen randread DEV SECONDS [OFF_MIB+]LEN_MIB\n"
		"       kvmlu-loadgen aio DEV SECONDS [OFF_MIB+]LEN_MIB read|write QD\n"
		"       kvmlu-loadgen waitmark DEV MARK_BLOCK WORD...\n"
		"       kvmlu-loadgen tcp-sink PORT [COUNT]\n"
		"       kvmlu-loadgen tcp-echo PORT\n"
		"       kvmlu-loadgen tcp-rr HOST PORT SECONDS SIZE\n"
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

static int seqread(const char *dev, long secs, const char *region)
{
	int fd = open(dev, O_RDONLY | O_DIRECT);
	char *buf = aligned_buf(MIB, 0);
	long off, region_mib, n = 0;
	double t0, t;

	if (fd < 0)
		die("open O_DIRECT");
	region_arg(region, &off, &region_mib);
	t0 = now_s();
	do {
		if (pread(fd, buf, MIB, (off_t)(off + n % region_mib) * MIB) != MIB)
			die("pread");
		n++;
		t = now_s() - t0;
	} while (t < (double)secs);
	printf("KVMLU-LOADGEN seqread mib=%ld secs=%.3f MBps=%.2f\n", n, t,
	       t > 0 ? (double)n * MIB / 1e6 / t : 0.0);
	fflush(stdout);
	close(fd);
	free(buf);
	return 0;
}

/* time_in_queue (ms, field 11) of /sys/block/NAME/stat for DEV, or -1 */
static long long time_in_queue(const char *dev)
{
	const char *name = strrchr(dev, '/');
	char path[256];
	unsigned long long f[11];
	FILE *fp;
	int n;

	snprintf(path, sizeof(path), "/sys/block/%s/stat", name ? name + 1 : dev);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	n = fscanf(fp, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10]);
	fclose(fp);
	return n == 11 ? (long long)f[10] : -1;
}

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#define AIO_MAX_QD 256

static int aio_rand(const char *dev, long secs, const char *region, const char *dir, long qd)
{
	int wr = strcmp(dir, "write") == 0;
	int fd = open(dev, (wr ? O_WRONLY : O_RDONLY) | O_DIRECT);
	static struct iocb cbs[AIO_MAX_QD];
	static struct iocb *ready[AIO_MAX_QD];
	static struct io_event ev[AIO_MAX_QD];
	aio_context_t ctx = 0;
	char *bufs;
	long off, len, blocks, n = 0, inflight = 0, nready = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	long long q0, q1;
	double t0, t;

	if (fd < 0)
		die("open O_DIRECT");
	if (strcmp(dir, "read") != 0 && !wr)
		usage();
	if (qd < 1 || qd > AIO_MAX_QD)
		usage();
	region_arg(region, &off, &len);
	blocks = len * (MIB / BLK);
	bufs = aligned_buf((size_t)qd * BLK, 0x3c);
	if (syscall(SYS_io_setup, qd, &ctx) != 0)
		die("io_setup");
	for (long i = 0; i < qd; i++) {
		cbs[i].aio_fildes = (uint32_t)fd;
		cbs[i].aio_lio_opcode = wr ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
		cbs[i].aio_buf = (uint64_t)(uintptr_t)(bufs + i * BLK);
		cbs[i].aio_nbytes = BLK;
		cbs[i].aio_data = (uint64_t)i;
		ready[nready++] = &cbs[i];
	}
	q0 = time_in_queue(dev);
	t0 = now_s();
	t = 0;
	for (;;) {
		/* Every completed request goes back in at once, at a new offset. */
		if (t < (double)secs && nready > 0) {
			long done = 0;
			for (long i = 0; i < nready; i++)
				ready[i]->aio_offset = (int64_t)off * MIB +
						       (int64_t)(next_rand(&x) % (uint64_t)blocks) * BLK;
			while (done < nready) {
				long r = syscall(SYS_io_submit, ctx, nready - done, ready + done);
				if (r < 0 && errno == EAGAIN && inflight > 0)
					break;
				if (r <= 0)
					die("io_submit");
				done += r;
				inflight += r;
			}
			memmove(ready, ready + done, (size_t)(nready - done) * sizeof(ready[0]));
			nready -= done;
		}
		if (inflight == 0)
			break;
		long got = syscall(SYS_io_getevents, ctx, 1, qd, ev, NULL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			die("io_getevents");
		for (long i = 0; i < got; i++) {
			if (ev[i].res != BLK) {
				errno = ev[i].res < 0 ? (int)-ev[i].res : EIO;
				die(wr ? "aio write" : "aio read");
			}
			ready[nready++] = &cbs[ev[i].data];
		}
		inflight -= got;
		n += got;
		t = now_s() - t0;
	}
	q1 = time_in_queue(dev);
	printf("KVMLU-LOADGEN aio-rand%s qd=%ld ops=%ld secs=%.3f iops=%.1f MBps=%.2f avgqd=%.1f\n",
	       wr ? "write" : "read", qd, n, t, (double)n / t, (double)n * BLK / 1e6 / t,
	       q0 >= 0 && q1 >= 0 && t > 0 ? (double)(q1 - q0) / 1000.0 / t : -1.0);
	fflush(stdout);
	syscall(SYS_io_destroy, ctx);
	close(fd);
	free(bufs);
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

/* connect_retry: a TCP connection to HOST:PORT, retrying for 30 s */
static int connect_retry(const char *host, long port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	double tc = now_s();
	int s;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		errno = EINVAL;
		die("address");
	}
	for (;;) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0)
			die("socket");
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			return s;
		if (now_s() - tc > 30)
			die("connect");
		close(s);
		usleep(200000);
	}
}

static int tcp_echo(long port)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1, s;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	static char buf[64 * 1024];
	long long bytes = 0;
	ssize_t r;

	if (ls < 0)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("bind");
	if (listen(ls, 1) != 0)
		die("listen");
	printf("KVMLU-LOADGEN tcp-echo-listen port=%ld\n", port);
	fflush(stdout);
	s = accept(ls, NULL, NULL);
	if (s < 0)
		die("accept");
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while ((r = read(s, buf, sizeof(buf))) > 0) {
		for (ssize_t w = 0; w < r;) {
			ssize_t k = write(s, buf + w, (size_t)(r - w));
			if (k < 0)
				die("write");
			w += k;
		}
		bytes += r;
	}
	close(s);
	close(ls);
	printf("KVMLU-LOADGEN tcp-echo bytes=%lld\n", bytes);
	fflush(stdout);
	return 0;
}

static int tcp_rr(const char *host, long port, long secs, long size)
{
	static char buf[64 * 1024];
	int s, one = 1;
	long n = 0;
	double t0, t;

	if (size < 1 || size > (long)sizeof(buf))
		usage();
	s = connect_retry(host, port);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(buf, 0x42, (size_t)size);
	t0 = now_s();
	do {
		if (write(s, buf, (size_t)size) != size)
			die("write");
		for (long got = 0; got < size;) {
			ssize_t r = read(s, buf + got, (size_t)(size - got));
			if (r <= 0) {
				if (r == 0)
					errno = ECONNRESET;
				die("read");
			}
			got += r;
		}
		n++;
		t = now_s() - t0;
	} while (t < (double)secs);
	shutdown(s, SHUT_WR);
	while (read(s, buf, sizeof(buf)) > 0)
		;
	close(s);
	printf("KVMLU-LOADGEN tcp-rr size=%ld trans=%ld secs=%.3f tps=%.1f\n", size, n, t, (double)n / t);
	fflush(stdout);
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
	static char buf[64 * 1024];
	long long bytes = 0;
	double t0, t;
	int s = connect_retry(host, port);

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
	if (strcmp(argv[1], "seqread") == 0 && argc == 5)
		return seqread(argv[2], num_arg(argv[3]), argv[4]);
	if (strcmp(argv[1], "aio") == 0 && argc == 7)
		return aio_rand(argv[2], num_arg(argv[3]), argv[4], argv[5], num_arg(argv[6]));
	if (strcmp(argv[1], "randread") == 0 && argc == 5)
		return randread(argv[2], num_arg(argv[3]), argv[4]);
	if (strcmp(argv[1], "waitmark") == 0 && argc >= 5)
		return waitmark(argv[2], num_arg(argv[3]), argv + 4, argc - 4);
	if (strcmp(argv[1], "tcp-sink") == 0 && (argc == 3 || argc == 4))
		return tcp_sink(num_arg(argv[2]), argc == 4 ? num_arg(argv[3]) : 1);
	if (strcmp(argv[1], "tcp-echo") == 0 && argc == 3)
		return tcp_echo(num_arg(argv[2]));
	if (strcmp(argv[1], "tcp-rr") == 0 && argc == 6)
		return tcp_rr(argv[2], num_arg(argv[3]), num_arg(argv[4]), num_arg(argv[5]));
	if (strcmp(argv[1], "tcp-send") == 0 && argc == 5)
		return tcp_send(argv[2], num_arg(argv[3]), num_arg(argv[4]));
	usage();
	return 2;
}
