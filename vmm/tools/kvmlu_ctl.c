// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-ctl: a tiny client for kvmlu control sockets, for scripts and
 * tests. Sends one request line and prints the reply line, or with no
 * request argument sends stdin as-is and prints every reply line until
 * the server closes, -n lines arrived, or the timeout passes. Never
 * hangs: every wait is bounded by -t seconds (default 15).
 *
 *   kvmlu-ctl [-t SECS] SOCK '{"cmd":"status"}'
 *   kvmlu-ctl [-t SECS] [-n LINES] SOCK < requests
 *
 * SOCK starting with '@' is an abstract socket name (kvmlu/unix_addr.h).
 *
 * Exit: 0 a reply came (whatever it says), 2 timeout, 1 other failure.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kvmlu/unix_addr.h"

static long long ctl_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int ctl_send_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int ctl_send_stdin(int fd)
{
	char buf[65536];
	ssize_t n;
	int rc;

	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		rc = ctl_send_all(fd, buf, (size_t)n);
		if (rc)
			return rc;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa;
	socklen_t salen;
	long long deadline;
	long lines_wanted = -1, lines = 0;
	double timeout = 15;
	char buf[4096];
	int c, fd, rc;

	while ((c = getopt(argc, argv, "t:n:")) != -1) {
		switch (c) {
		case 't':
			timeout = strtod(optarg, NULL);
			break;
		case 'n':
			lines_wanted = strtol(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: kvmlu-ctl [-t SECS] [-n LINES] SOCK [REQUEST]\n");
			return 1;
		}
	}
	if (optind >= argc || argc - optind > 2 || timeout <= 0) {
		fprintf(stderr, "usage: kvmlu-ctl [-t SECS] [-n LINES] SOCK [REQUEST]\n");
		return 1;
	}
	if (kvmlu_unix_addr(argv[optind], &sa, &salen)) {
		fprintf(stderr, "kvmlu-ctl: %s: path empty or too long\n", argv[optind]);
		return 1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, salen) < 0) {
		fprintf(stderr, "kvmlu-ctl: connect %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if (argc - optind == 2) {
		size_t n = strlen(argv[optind + 1]);
		char *line = malloc(n + 2);

		if (!line)
			return 1;
		memcpy(line, argv[optind + 1], n);
		line[n] = '\n';
		rc = ctl_send_all(fd, line, n + 1);
		free(line);
		if (lines_wanted < 0)
			lines_wanted = 1;
	} else {
		rc = ctl_send_stdin(fd);
	}
	if (rc) {
		fprintf(stderr, "kvmlu-ctl: send: %s\n", strerror(-rc));
		/* The server may have replied before closing (e.g. permission denied). */
	}
	shutdown(fd, SHUT_WR);

	deadline = ctl_now_ms() + (long long)(timeout * 1000);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = deadline - ctl_now_ms();
		ssize_t n;

		if (lines_wanted >= 0 && lines >= lines_wanted)
			break;
		if (left <= 0) {
			fprintf(stderr, "kvmlu-ctl: no reply within %.1f s\n", timeout);
			return 2;
		}
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		fwrite(buf, 1, (size_t)n, stdout);
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	}
	fflush(stdout);
	close(fd);
	return lines > 0 ? 0 : 1;
}
