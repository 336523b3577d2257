// SPDX-License-Identifier: GPL-2.0
/*
 * qmp-call: a minimal QMP client for the live-upgrade bench's QEMU peer
 * (tests/bench/upgrade_peer.sh), small enough for the harness initramfs,
 * which has no socat, nc -U or Python.
 *
 *   qmp-call [-t SECONDS] SOCKET JSON [JSON ...]
 *
 * Connects to QEMU's QMP UNIX socket (retrying for up to SECONDS while it
 * is not there yet, default 10), reads the greeting, negotiates with
 * qmp_capabilities, then sends each JSON command in turn and prints its
 * reply (the first line that is not an event) on stdout, one line each.
 * Exit 0 when every reply is a "return", 1 when one is an "error" (the
 * remaining commands are not sent), 2 on a connection or I/O problem.
 * QMP's replies are one JSON object a line (\r\n); nothing here parses
 * JSON beyond telling a reply from an event by its first key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct reader {
	int fd;
	char buf[65536];
	size_t len;
};

static int connect_retry(const char *path, double seconds)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 50 * 1000 * 1000 };
	int tries = (int)(seconds * 20) + 1;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "qmp-call: socket path too long: %s\n", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	for (int i = 0; i < tries; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			perror("qmp-call: socket");
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		close(fd);
		if (errno != ENOENT && errno != ECONNREFUSED && errno != EAGAIN)
			break;
		nanosleep(&nap, NULL);
	}
	fprintf(stderr, "qmp-call: cannot connect to %s: %s\n", path, strerror(errno));
	return -1;
}

/* One line (without \r\n) into out; 0 on success, -1 on EOF or error. */
static int read_line(struct reader *r, char *out, size_t cap)
{
	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);

		if (nl) {
			size_t n = (size_t)(nl - r->buf);
			size_t keep = n;

			while (keep > 0 && (r->buf[keep - 1] == '\r'))
				keep--;
			if (keep >= cap)
				keep = cap - 1;
			memcpy(out, r->buf, keep);
			out[keep] = '\0';
			memmove(r->buf, nl + 1, r->len - n - 1);
			r->len -= n + 1;
			return 0;
		}
		if (r->len == sizeof(r->buf)) {
			fprintf(stderr, "qmp-call: reply line longer than %zu bytes\n", sizeof(r->buf));
			return -1;
		}
		ssize_t got = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			fprintf(stderr, "qmp-call: connection closed\n");
			return -1;
		}
		r->len += (size_t)got;
	}
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			perror("qmp-call: write");
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The first key of a QMP object: "return", "error", "event", "QMP" ... */
static int first_key_is(const char *line, const char *key)
{
	const char *p = strchr(line, '"');
	size_t n = strlen(key);

	return p && strncmp(p + 1, key, n) == 0 && p[1 + n] == '"';
}

/* Sends cmd, reads up to its reply (events skipped); 0 return, 1 error, 2 I/O. */
static int call(struct reader *r, const char *cmd, char *line, size_t cap, int print)
{
	if (write_all(r->fd, cmd, strlen(cmd)) || write_all(r->fd, "\n", 1))
		return 2;
	for (;;) {
		if (read_line(r, line, cap))
			return 2;
		/* Events begin with "timestamp" or "event"; skip them. */
		if (first_key_is(line, "return") || first_key_is(line, "error"))
			break;
	}
	if (print)
		printf("%s\n", line);
	return first_key_is(line, "error") ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct reader r;
	static char line[65536];
	double seconds = 10;
	int argi = 1;

	if (argc > 2 && strcmp(argv[1], "-t") == 0) {
		seconds = atof(argv[2]);
		argi = 3;
	}
	if (argc - argi < 2) {
		fprintf(stderr, "usage: qmp-call [-t SECONDS] SOCKET JSON [JSON ...]\n");
		return 2;
	}
	r.fd = connect_retry(argv[argi], seconds);
	if (r.fd < 0)
		return 2;
	if (read_line(&r, line, sizeof(line)))
		return 2;
	if (!first_key_is(line, "QMP")) {
		fprintf(stderr, "qmp-call: no QMP greeting: %s\n", line);
		return 2;
	}
	int rc = call(&r, "{\"execute\":\"qmp_capabilities\"}", line, sizeof(line), 0);

	if (rc) {
		fprintf(stderr, "qmp-call: qmp_capabilities: %s\n", line);
		return rc;
	}
	for (int i = argi + 1; i < argc; i++) {
		rc = call(&r, argv[i], line, sizeof(line), 1);
		if (rc)
			break;
	}
	fflush(stdout);
	close(r.fd);
	return rc;
}
