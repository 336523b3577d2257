// netcount: one TCP connection whose bytes both ends count, for the
// network tests of the Linux guest (tests/guest/linux/, the harness case
// linux_guest_tcp_survives_upgrade_and_kexec). Built static by
// build-initramfs.sh, so the same binary runs in the busybox guest and in
// the QEMU host.
//
//   netcount server PORT
//   netcount client HOST PORT [CTLPORT [INTERVAL_MS]]   (CTLPORT 0: none)
//   netcount stop HOST CTLPORT
//
// The client connects once (it retries only until the first connect
// succeeds; it never reconnects) and then, every INTERVAL_MS (default
// 1000), sends one chunk of NC_CHUNK bytes and waits for the server's
// answer: the server's running count of bytes received on this
// connection, as a fixed-size line of NC_REPLY bytes. The answer must be
// exactly the client's count of bytes sent. The bytes of the stream are a
// function of their offset in it, so the server also sees a byte lost,
// repeated or reordered (bad= names the first offset that was wrong).
//
// A connection to CTLPORT (`netcount stop`), or SIGTERM/SIGINT/SIGUSR1,
// stops the client after its round: it shuts its sending side, reads to
// the end of the stream, prints its totals and exits 0. The server then
// sees the end of the stream and prints its totals for that connection:
// the two ends' lines can be compared, sent == rx and rx == tx.
//
// Lines (stdout, one per event):
//   KVMLU-NET-SRV-LISTEN port=P
//   KVMLU-NET-SRV conn=N peer=IP:PORT rx=R tx=T bad=-1 accepted=A   (per answer)
//   KVMLU-NET-SRV-END conn=N peer=IP:PORT rx=R tx=T bad=-1 accepted=A
//   KVMLU-NET-SRV-ERROR conn=N peer=IP:PORT rx=R tx=T err=TEXT
//   KVMLU-NET-CLI-CONNECTED local=IP:PORT peer=IP:PORT tries=K
//   KVMLU-NET-CLI lport=L round=K sent=S rx=R srv=V
//   KVMLU-NET-CLI-DONE lport=L rounds=K sent=S rx=R
//   KVMLU-NET-CLI-ERROR lport=L sent=S rx=R err=TEXT
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NC_CHUNK 4096
#define NC_REPLY 21 // "%020" PRIu64 "\n"
#define NC_MAX_CONNS 16

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	// One write per line: lines from several processes on one console
	// do not mix.
	ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
	(void)w;
}

static uint8_t pattern(uint64_t off)
{
	return (uint8_t)(((off ^ (off >> 8) ^ (off >> 16) ^ (off >> 24)) * 31u + 7u) & 0xffu);
}

static int parse_port(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < 1 || v > 65535) {
		fprintf(stderr, "netcount: '%s' is not a port\n", s);
		exit(2);
	}
	return (int)v;
}

static void addr_text(const struct sockaddr_in *a, char *out, size_t len)
{
	char ip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
	snprintf(out, len, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
}

static int listen_on(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_ANY) };
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 8) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

struct conn {
	int fd;
	int id;
	char peer[32];
	uint64_t rx, tx, answered;
	int64_t bad; // first offset whose byte was wrong, -1: none
};

static void srv_close(struct conn *c, int accepted, const char *err)
{
	if (err)
		say("KVMLU-NET-SRV-ERROR conn=%d peer=%s rx=%" PRIu64 " tx=%" PRIu64 " err=%s",
		    c->id, c->peer, c->rx, c->tx, err);
	else
		say("KVMLU-NET-SRV-END conn=%d peer=%s rx=%" PRIu64 " tx=%" PRIu64 " bad=%" PRId64
		    " accepted=%d",
		    c->id, c->peer, c->rx, c->tx, c->bad, accepted);
	close(c->fd);
	c->fd = -1;
}

static int run_server(int port)
{
	int lfd = listen_on(port);
	if (lfd < 0) {
		say("KVMLU-NET-SRV-ERROR conn=0 peer=- rx=0 tx=0 err=listen on %d: %s", port,
		    strerror(errno));
		return 1;
	}
	say("KVMLU-NET-SRV-LISTEN port=%d", port);
	struct conn conns[NC_MAX_CONNS];
	for (int i = 0; i < NC_MAX_CONNS; i++)
		conns[i].fd = -1;
	int accepted = 0;
	static uint8_t buf[65536];
	for (;;) {
		struct pollfd p[NC_MAX_CONNS + 1];
		int idx[NC_MAX_CONNS + 1];
		int n = 0;
		p[n] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		idx[n++] = -1;
		for (int i = 0; i < NC_MAX_CONNS; i++)
			if (conns[i].fd >= 0) {
				p[n] = (struct pollfd){ .fd = conns[i].fd, .events = POLLIN };
				idx[n++] = i;
			}
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		for (int k = 0; k < n; k++) {
			if (!p[k].revents)
				continue;
			if (idx[k] < 0) {
				struct sockaddr_in a;
				socklen_t al = sizeof(a);
				int fd = accept4(lfd, (struct sockaddr *)&a, &al, SOCK_CLOEXEC);
				if (fd < 0)
					continue;
				int slot = -1;
				for (int i = 0; i < NC_MAX_CONNS && slot < 0; i++)
					if (conns[i].fd < 0)
						slot = i;
				if (slot < 0) {
					close(fd);
					continue;
				}
				struct conn *c = &conns[slot];
				*c = (struct conn){ .fd = fd, .id = ++accepted, .bad = -1 };
				addr_text(&a, c->peer, sizeof(c->peer));
				continue;
			}
			struct conn *c = &conns[idx[k]];
			ssize_t r = read(c->fd, buf, sizeof(buf));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				srv_close(c, accepted, strerror(errno));
				continue;
			}
			if (r == 0) {
				srv_close(c, accepted, NULL);
				continue;
			}
			for (ssize_t i = 0; i < r; i++)
				if (c->bad < 0 && buf[i] != pattern(c->rx + (uint64_t)i))
					c->bad = (int64_t)(c->rx + (uint64_t)i);
			c->rx += (uint64_t)r;
			int failed = 0;
			while (!failed && c->rx >= c->answered + NC_CHUNK) {
				char line[NC_REPLY + 1];
				c->answered += NC_CHUNK;
				snprintf(line, sizeof(line), "%020" PRIu64 "\n", c->answered);
				if (write_all(c->fd, line, NC_REPLY) < 0) {
					srv_close(c, accepted, strerror(errno));
					failed = 1;
					break;
				}
				c->tx += NC_REPLY;
				say("KVMLU-NET-SRV conn=%d peer=%s rx=%" PRIu64 " tx=%" PRIu64 " bad=%" PRId64
				    " accepted=%d",
				    c->id, c->peer, c->rx, c->tx, c->bad, accepted);
			}
		}
	}
}

struct client {
	int fd, ctl;
	unsigned lport;
	uint64_t sent, rx, rounds;
	char part[NC_REPLY];
	size_t npart;
};

static int cli_fail(struct client *c, const char *what, int err)
{
	say("KVMLU-NET-CLI-ERROR lport=%u sent=%" PRIu64 " rx=%" PRIu64 " err=%s%s%s", c->lport,
	    c->sent, c->rx, what, err ? ": " : "", err ? strerror(err) : "");
	return 1;
}

// A connection on the control port asks the client to stop.
static void check_ctl(struct client *c, int revents)
{
	if (!(revents & POLLIN))
		return;
	int fd = accept4(c->ctl, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		stop_asked = 1;
	}
}

// Reads the server's answer to the chunk just sent: one NC_REPLY line
// whose value is c->sent. 0, or 1 after saying why not.
static int cli_answer(struct client *c)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = c->fd, .events = POLLIN }, { .fd = c->ctl, .events = POLLIN } };
		int n = poll(p, c->ctl >= 0 ? 2 : 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cli_fail(c, "poll", errno);
		if (c->ctl >= 0)
			check_ctl(c, p[1].revents);
		if (!p[0].revents)
			continue;
		ssize_t r = read(c->fd, c->part + c->npart, NC_REPLY - c->npart);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return cli_fail(c, "read", errno);
		if (r == 0)
			return cli_fail(c, "the server closed the connection", 0);
		c->rx += (uint64_t)r;
		c->npart += (size_t)r;
		if (c->npart < NC_REPLY)
			continue;
		c->npart = 0;
		char text[NC_REPLY];
		memcpy(text, c->part, NC_REPLY - 1);
		text[NC_REPLY - 1] = '\0';
		char *end;
		uint64_t v = strtoull(text, &end, 10);
		if (*end != '\0' || c->part[NC_REPLY - 1] != '\n')
			return cli_fail(c, "the server's answer is not a count", 0);
		if (v != c->sent) {
			char why[96];
			snprintf(why, sizeof(why), "the server counts %" PRIu64 " bytes, %" PRIu64 " were sent", v,
				 c->sent);
			return cli_fail(c, why, 0);
		}
		return 0;
	}
}

static int run_client(const char *host, int port, int ctlport, int interval_ms)
{
	struct client c = { .fd = -1, .ctl = -1 };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, host, &to.sin_addr) != 1) {
		fprintf(stderr, "netcount: '%s' is not an IPv4 address\n", host);
		return 2;
	}
	if (ctlport > 0) {
		c.ctl = listen_on(ctlport);
		if (c.ctl < 0)
			return cli_fail(&c, "listen on the control port", errno);
	}
	// Until the first connect succeeds (the server may still be booting).
	// Once connected, never again.
	int tries = 0;
	for (;;) {
		if (stop_asked)
			return cli_fail(&c, "stopped before it could connect", 0);
		c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c.fd < 0)
			return cli_fail(&c, "socket", errno);
		tries++;
		if (connect(c.fd, (struct sockaddr *)&to, sizeof(to)) == 0)
			break;
		int e = errno;
		close(c.fd);
		c.fd = -1;
		if (e != ECONNREFUSED && e != EHOSTUNREACH && e != ETIMEDOUT && e != ENETUNREACH && e != EINTR)
			return cli_fail(&c, "connect", e);
		sleep(1);
	}
	struct sockaddr_in me;
	socklen_t ml = sizeof(me);
	getsockname(c.fd, (struct sockaddr *)&me, &ml);
	c.lport = ntohs(me.sin_port);
	char local[32], peer[32];
	addr_text(&me, local, sizeof(local));
	addr_text(&to, peer, sizeof(peer));
	say("KVMLU-NET-CLI-CONNECTED local=%s peer=%s tries=%d", local, peer, tries);

	static uint8_t chunk[NC_CHUNK];
	while (!stop_asked) {
		for (size_t i = 0; i < NC_CHUNK; i++)
			chunk[i] = pattern(c.sent + i);
		if (write_all(c.fd, chunk, NC_CHUNK) < 0)
			return cli_fail(&c, "write", errno);
		c.sent += NC_CHUNK;
		if (cli_answer(&c))
			return 1;
		c.rounds++;
		say("KVMLU-NET-CLI lport=%u round=%" PRIu64 " sent=%" PRIu64 " rx=%" PRIu64 " srv=%" PRIu64,
		    c.lport, c.rounds, c.sent, c.rx, c.sent);
		// Sleep, but wake for a stop.
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			long left = interval_ms - ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
			if (stop_asked || left <= 0)
				break;
			struct pollfd p = { .fd = c.ctl, .events = POLLIN };
			int n = poll(&p, c.ctl >= 0 ? 1 : 0, (int)left);
			if (n > 0)
				check_ctl(&c, p.revents);
		}
	}
	// Stop: no more data from us; the server answers the end of the
	// stream by closing, and anything still on the way is counted.
	if (shutdown(c.fd, SHUT_WR) < 0)
		return cli_fail(&c, "shutdown", errno);
	for (;;) {
		char buf[256];
		ssize_t r = read(c.fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return cli_fail(&c, "read after shutdown", errno);
		if (r == 0)
			break;
		c.rx += (uint64_t)r;
	}
	say("KVMLU-NET-CLI-DONE lport=%u rounds=%" PRIu64 " sent=%" PRIu64 " rx=%" PRIu64, c.lport, c.rounds,
	    c.sent, c.rx);
	close(c.fd);
	return 0;
}

static int run_stop(const char *host, int port)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, host, &to.sin_addr) != 1) {
		fprintf(stderr, "netcount: '%s' is not an IPv4 address\n", host);
		return 2;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		fprintf(stderr, "netcount: stop %s:%d: %s\n", host, port, strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: netcount server PORT\n"
			"       netcount client HOST PORT [CTLPORT [INTERVAL_MS]]\n"
			"       netcount stop HOST CTLPORT\n");
	return 2;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && strcmp(argv[1], "server") == 0)
		return run_server(parse_port(argv[2]));
	if (argc >= 4 && argc <= 6 && strcmp(argv[1], "client") == 0) {
		struct sigaction sa = { .sa_handler = on_stop }; // no SA_RESTART: poll returns EINTR
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGUSR1, &sa, NULL);
		int ctl = argc >= 5 && strcmp(argv[4], "0") != 0 ? parse_port(argv[4]) : 0;
		int interval = argc >= 6 ? atoi(argv[5]) : 1000;
		if (interval < 1 || interval > 600000)
			return usage();
		return run_client(argv[2], parse_port(argv[3]), ctl, interval);
	}
	if (argc == 4 && strcmp(argv[1], "stop") == 0)
		return run_stop(argv[2], parse_port(argv[3]));
	return usage();
}
