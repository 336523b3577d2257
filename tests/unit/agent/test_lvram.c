// SPDX-License-Identifier: GPL-2.0
/*
 * The lvram-open exchange and the checks around RAM the agent holds for
 * domain-replace-qemu (agent/libvirt/lvram_request.c, lvram_peer.c,
 * lvram_store.c, lvram_server.c, lvram_client.c, qemu_ram_fd.c):
 * hostile request and answer lines, the peer checks (uid, -uuid), each
 * held RAM given once, the wrapper's side against a real lvram socket,
 * and the reading of a QEMU's command line and maps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agent/libvirt/lvram_client.h"
#include "agent/libvirt/lvram_peer.h"
#include "agent/libvirt/lvram_request.h"
#include "agent/libvirt/lvram_server.h"
#include "agent/libvirt/lvram_store.h"
#include "agent/libvirt/qemu_ram_fd.h"
#include "common/fd_pass.h"

#define UUID "6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a21"
#define UUID2 "6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a22"
#define SUM "0123456789abcdef0123456789abcdef"
#define SUM2 "fedcba9876543210fedcba9876543210"
#define MIB (1ULL << 20)

static int parse(const char *line, struct lvram_request *rq)
{
	char err[256];

	memset(err, 0, sizeof(err));
	int rc = lvram_request_parse(line, strlen(line), rq, err, sizeof(err));

	if (rc)
		assert_true(err[0] != '\0');
	return rc;
}

static void request_good(void **state)
{
	struct lvram_request rq;
	char line[LVRAM_LINE_MAX];

	(void)state;
	assert_int_equal(parse("{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID
			       "\",\"size\":268435456}}", &rq), 0);
	assert_string_equal(rq.uuid, UUID);
	assert_int_equal(rq.size, 256 * MIB);
	/* The wrapper's own line reads back the same, newline and all. */
	assert_int_equal(lvram_request_format(&rq, line, sizeof(line)), 0);
	assert_int_equal(line[strlen(line) - 1], '\n');
	memset(&rq, 0, sizeof(rq));
	assert_int_equal(lvram_request_parse(line, strlen(line), &rq, NULL, 0), 0);
	assert_string_equal(rq.uuid, UUID);
	/* Blanks around the object are JSON. */
	assert_int_equal(parse(" {\"args\":{\"size\":4096,\"uuid\":\"" UUID "\"},"
			       "\"cmd\":\"lvram-open\"} ", &rq), 0);
}

static void request_hostile(void **state)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"null",
		"{\"cmd\":\"lvram-open\"}",
		"{\"cmd\":\"lvram-open\",\"args\":[]}",
		"{\"cmd\":\"status\",\"args\":{\"uuid\":\"" UUID "\",\"size\":4096}}",
		"{\"cmd\":1,\"args\":{\"uuid\":\"" UUID "\",\"size\":4096}}",
		/* duplicate keys, at the top and in args */
		"{\"cmd\":\"lvram-open\",\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":4096}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"uuid\":\"" UUID2 "\",\"size\":4096}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":4096,\"size\":8192}}",
		/* unknown and missing keys */
		"{\"cmd\":\"lvram-open\",\"id\":1,\"args\":{\"uuid\":\"" UUID "\",\"size\":4096}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":4096,\"fd\":3}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\"}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"size\":4096}}",
		/* UUIDs libvirt never writes */
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"6F1B6A4E-3C0E-4C52-9B1E-2A7E0D9C4A21\",\"size\":4096}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"6f1b6a4e3c0e4c529b1e2a7e0d9c4a21\",\"size\":4096}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "0\",\"size\":4096}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"../../etc/passwd-xxxxxxxxxxxxxxxxxxx\",\"size\":4096}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a2\\u0000\",\"size\":4096}}",
		/* sizes */
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":0}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":-4096}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":4097}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":4096.0}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":\"4096\"}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":17592186048512}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":18446744073709551615}}",
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":99999999999999999999999}}",
		/* deeper than the request is */
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":{\"a\":[1]}}}",
		/* two objects */
		"{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":4096}}{}",
		/* invalid UTF-8 in a string */
		"{\"cmd\":\"lvram-open\xff\",\"args\":{\"uuid\":\"" UUID "\",\"size\":4096}}",
	};
	struct lvram_request rq;
	char big[LVRAM_LINE_MAX + 64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&rq, 0x5a, sizeof(rq));
		if (parse(bad[i], &rq) == 0)
			fail_msg("accepted: %s", bad[i]);
	}
	/* A NUL inside the line. */
	{
		const char l[] = "{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID "\",\"size\":4096}}";
		char buf[sizeof(l) + 1];

		memcpy(buf, l, sizeof(l));
		buf[10] = '\0';
		assert_int_not_equal(lvram_request_parse(buf, sizeof(l) - 1, &rq, NULL, 0), 0);
	}
	/* Over the bound, even if it were valid JSON. */
	memset(big, ' ', sizeof(big));
	snprintf(big + sizeof(big) - 80, 80, "{\"cmd\":\"lvram-open\",\"args\":{}}");
	assert_int_equal(lvram_request_parse(big, strlen(big), &rq, NULL, 0), -EMSGSIZE);
}

static void reply_lines(void **state)
{
	struct lvram_reply r;
	char line[512];

	(void)state;
	assert_int_equal(lvram_reply_format_ok(true, true, line, sizeof(line)), 0);
	assert_int_equal(lvram_reply_parse(line, strlen(line), &r, NULL, 0), 0);
	assert_true(r.ok && r.held && r.ignore_shared);
	assert_int_equal(lvram_reply_format_ok(false, false, line, sizeof(line)), 0);
	assert_int_equal(lvram_reply_parse(line, strlen(line), &r, NULL, 0), 0);
	assert_true(r.ok && !r.held && !r.ignore_shared);
	assert_int_equal(lvram_reply_format_error("PermissionDenied", "no\x01pe", line,
						  sizeof(line)), 0);
	assert_int_equal(lvram_reply_parse(line, strlen(line), &r, NULL, 0), 0);
	assert_false(r.ok);
	assert_string_equal(r.error_class, "PermissionDenied");
	assert_string_equal(r.desc, "no?pe");	/* printable only: it goes into a log */

	static const char *const bad[] = {
		"{\"ok\":true,\"return\":{\"held\":false,\"ignore_shared\":true}}",
		"{\"ok\":true,\"return\":{\"held\":true}}",
		"{\"ok\":true,\"return\":{\"held\":1,\"ignore_shared\":true}}",
		"{\"ok\":true,\"return\":{\"held\":true,\"ignore_shared\":true,\"fd\":4}}",
		"{\"ok\":true,\"return\":{\"held\":true,\"held\":false,\"ignore_shared\":false}}",
		"{\"ok\":true,\"ok\":false,\"return\":{\"held\":true,\"ignore_shared\":true}}",
		"{\"ok\":true,\"return\":{\"held\":true,\"ignore_shared\":true},\"error\":{}}",
		"{\"ok\":false,\"error\":{\"class\":\"Failed\"}}",
		"{\"ok\":false,\"error\":{\"class\":1,\"desc\":\"x\"}}",
		"{\"ok\":\"yes\"}",
		"[true]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!lvram_reply_parse(bad[i], strlen(bad[i]), &r, NULL, 0))
			fail_msg("accepted: %s", bad[i]);
}

/* A command line as /proc/<pid>/cmdline has it: NUL after each token. */
static size_t cmdline(char *buf, size_t buflen, const char *const *argv)
{
	size_t n = 0;

	for (; *argv; argv++) {
		size_t l = strlen(*argv) + 1;

		assert_true(n + l <= buflen);
		memcpy(buf + n, *argv, l);
		n += l;
	}
	return n;
}

static void cmdline_uuid(void **state)
{
	const char *const one[] = { "qemu", "-name", "x", "-uuid", UUID, "-S", NULL };
	const char *const two[] = { "qemu", "-uuid", UUID, "-uuid", UUID2, NULL };
	const char *const none[] = { "qemu", "-name", "-uuid" UUID, NULL };
	const char *const last[] = { "qemu", "-uuid", NULL };
	const char *const upper[] = { "qemu", "-uuid", "6F1B6A4E-3C0E-4C52-9B1E-2A7E0D9C4A21", NULL };
	char buf[512], u[LVRAM_UUID_LEN + 1];
	size_t n;

	(void)state;
	n = cmdline(buf, sizeof(buf), one);
	assert_int_equal(lvram_cmdline_uuid(buf, n, u, NULL, 0), 0);
	assert_string_equal(u, UUID);
	n = cmdline(buf, sizeof(buf), two);
	assert_int_equal(lvram_cmdline_uuid(buf, n, u, NULL, 0), -EINVAL);
	n = cmdline(buf, sizeof(buf), none);
	assert_int_equal(lvram_cmdline_uuid(buf, n, u, NULL, 0), -ENOENT);
	n = cmdline(buf, sizeof(buf), last);
	assert_int_equal(lvram_cmdline_uuid(buf, n, u, NULL, 0), -EINVAL);
	n = cmdline(buf, sizeof(buf), upper);
	assert_int_equal(lvram_cmdline_uuid(buf, n, u, NULL, 0), -EINVAL);
	/* The value cut off at the end of what was read (no NUL after it). */
	n = cmdline(buf, sizeof(buf), one);
	assert_int_equal(lvram_cmdline_uuid(buf, n - 4 - 1, u, NULL, 0), -EINVAL);
}

static void peer_checks(void **state)
{
	const char *const qemu[] = { "qemu", "-uuid", UUID, NULL };
	char buf[256], err[256];
	size_t n = cmdline(buf, sizeof(buf), qemu);

	(void)state;
	assert_int_equal(lvram_peer_check(64055, 64055, UUID, buf, n, err, sizeof(err)), 0);
	assert_int_equal(lvram_peer_check(1000, 64055, UUID, buf, n, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "uid 1000"));
	assert_int_equal(lvram_peer_check(64055, 64055, UUID2, buf, n, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "is not " UUID2));
	assert_int_equal(lvram_peer_check(0, 64055, UUID, buf, n, err, sizeof(err)), -EPERM);
}

static int memfd_of(uint64_t size)
{
	int fd = memfd_create("test-lvram", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	return fd;
}

static void store_gives_once(void **state)
{
	const char *const qemu[] = { "qemu", "-uuid", UUID, NULL };
	const char *const other[] = { "qemu", "-uuid", UUID2, NULL };
	struct lvram_request rq = { .uuid = UUID, .size = 2 * MIB };
	struct lvram_held_info info;
	char buf[256], buf2[256], err[256];
	size_t n = cmdline(buf, sizeof(buf), qemu), n2 = cmdline(buf2, sizeof(buf2), other);
	int fd = -1, fd2 = -1, held = memfd_of(2 * MIB);
	struct stat a, b;

	(void)state;
	/* Nothing held: the wrapper makes a new memfd. */
	assert_int_equal(lvram_store_give(&rq, 107, 4242, buf, n, &fd, err, sizeof(err)), -ENOENT);
	assert_int_equal(lvram_store_hold(UUID, held, 2 * MIB, 107, SUM), 0);
	assert_int_equal(lvram_store_hold(UUID, memfd_of(MIB), MIB, 107, SUM), -EEXIST);
	assert_true(lvram_store_held(UUID));
	/* Wrong uid, wrong -uuid, wrong size: refused, nothing given. */
	assert_int_equal(lvram_store_give(&rq, 0, 4242, buf, n, &fd, err, sizeof(err)), -EPERM);
	assert_int_equal(lvram_store_give(&rq, 107, 4242, buf2, n2, &fd, err, sizeof(err)), -EPERM);
	rq.size = 4 * MIB;
	assert_int_equal(lvram_store_give(&rq, 107, 4242, buf, n, &fd, err, sizeof(err)), -EINVAL);
	rq.size = 2 * MIB;
	assert_int_equal(fd, -1);
	/* The right peer, but no replacement waits for it (a virsh start): refused. */
	assert_int_equal(lvram_store_give(&rq, 107, 4242, buf, n, &fd, err, sizeof(err)), -EAGAIN);
	assert_non_null(strstr(err, "domain-replace-qemu"));
	assert_int_equal(fd, -1);
	/* The right peer gets it while expected, once. */
	lvram_store_expect(UUID, true);
	assert_int_equal(lvram_store_give(&rq, 107, 4242, buf, n, &fd, err, sizeof(err)), 0);
	assert_true(fd >= 0);
	assert_int_equal(lvram_store_give(&rq, 107, 4243, buf, n, &fd2, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "pid 4242"));
	assert_int_equal(lvram_store_get(UUID, &fd2, &info), 0);
	assert_true(info.given);
	assert_int_equal(info.given_pid, 4242);
	assert_string_equal(info.sum, SUM);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(fstat(fd2, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);	/* the same file, not a copy */
	close(fd2);
	close(fd);
	/* The start failed: the RAM may be given again, to the next start. */
	lvram_store_ungive(UUID);
	assert_int_equal(lvram_store_give(&rq, 107, 4244, buf, n, &fd, err, sizeof(err)), 0);
	close(fd);
	/* A word from another QEMU than the one given the RAM is dropped. */
	lvram_store_set_incoming(UUID, 4242, -EPIPE, "an earlier start");
	assert_int_equal(lvram_store_wait_incoming(UUID, 10, err, sizeof(err)), -ETIMEDOUT);
	lvram_store_set_incoming(UUID, 4244, -EIO, "why not");
	assert_int_equal(lvram_store_wait_incoming(UUID, 10, err, sizeof(err)), -EIO);
	assert_string_equal(err, "why not");
	lvram_store_release(UUID);
	assert_false(lvram_store_held(UUID));
	assert_int_equal(lvram_store_wait_incoming(UUID, 10, err, sizeof(err)), -ENOENT);
	assert_int_equal(lvram_store_give(&rq, 107, 4242, buf, n, &fd, err, sizeof(err)), -ENOENT);
}

/* What the store holds for UUID now (lvram_store_get, its fd closed). */
static struct lvram_held_info held_info(void)
{
	struct lvram_held_info info;
	int fd = -1;

	assert_int_equal(lvram_store_get(UUID, &fd, &info), 0);
	close(fd);
	return info;
}

/*
 * The sum of the RAM as given is kept for the QEMU it was given to only,
 * and a new give or an ungive forgets it: domain-replace-qemu compares the
 * pause's sum with this one, taken before that QEMU mapped the RAM (after
 * its load KVM writes the kvmclock wall clock into it).
 */
static void store_keeps_sum_given(void **state)
{
	const char *const qemu[] = { "qemu", "-uuid", UUID, NULL };
	struct lvram_request rq = { .uuid = UUID, .size = 2 * MIB };
	struct lvram_held_info info;
	char buf[256], err[256];
	size_t n = cmdline(buf, sizeof(buf), qemu);
	int fd = -1;

	(void)state;
	assert_int_equal(lvram_store_hold(UUID, memfd_of(2 * MIB), 2 * MIB, 107, SUM), 0);
	lvram_store_expect(UUID, true);
	/* Not given yet: nothing to keep. */
	lvram_store_set_sum_given(UUID, 4242, SUM2);
	info = held_info();
	assert_string_equal(info.sum_given, "");
	assert_int_equal(lvram_store_give(&rq, 107, 4242, buf, n, &fd, err, sizeof(err)), 0);
	close(fd);
	/* Another pid's word, or not a sum: dropped. */
	lvram_store_set_sum_given(UUID, 4243, SUM2);
	lvram_store_set_sum_given(UUID, 4242, "0123");
	info = held_info();
	assert_string_equal(info.sum_given, "");
	lvram_store_set_sum_given(UUID, 4242, SUM2);
	info = held_info();
	assert_string_equal(info.sum_given, SUM2);
	assert_string_equal(info.sum, SUM);
	/* The start failed: the next start's QEMU gets hashed afresh. */
	lvram_store_ungive(UUID);
	info = held_info();
	assert_string_equal(info.sum_given, "");
	assert_int_equal(lvram_store_give(&rq, 107, 4244, buf, n, &fd, err, sizeof(err)), 0);
	close(fd);
	lvram_store_set_sum_given(UUID, 4244, SUM2);
	lvram_store_ungive(UUID);
	assert_int_equal(lvram_store_give(&rq, 107, 4245, buf, n, &fd, err, sizeof(err)), 0);
	close(fd);
	info = held_info();
	assert_string_equal(info.sum_given, "");
	lvram_store_release(UUID);
}

/*
 * RAM the agent verified itself (hashed equal after RETRIEVE) has its sum
 * as given at the first give, with no hash of its own while QEMU waits;
 * once given, never again: that QEMU may have changed it.
 */
static void store_verified_gives_sum_once(void **state)
{
	const char *const qemu[] = { "qemu", "-uuid", UUID, NULL };
	struct lvram_request rq = { .uuid = UUID, .size = 2 * MIB };
	struct lvram_held_info info;
	char buf[256], err[256];
	size_t n = cmdline(buf, sizeof(buf), qemu);
	int fd = -1;

	(void)state;
	assert_int_equal(lvram_store_hold(UUID, memfd_of(2 * MIB), 2 * MIB, 107, SUM), 0);
	lvram_store_set_verified(UUID);
	lvram_store_expect(UUID, true);
	info = held_info();
	assert_true(info.verified);
	assert_string_equal(info.sum_given, "");
	assert_int_equal(lvram_store_give(&rq, 107, 4242, buf, n, &fd, err, sizeof(err)), 0);
	close(fd);
	info = held_info();
	assert_string_equal(info.sum_given, SUM);
	assert_false(info.verified);
	/* That start failed: the next QEMU's RAM is hashed afresh. */
	lvram_store_ungive(UUID);
	assert_int_equal(lvram_store_give(&rq, 107, 4243, buf, n, &fd, err, sizeof(err)), 0);
	close(fd);
	info = held_info();
	assert_string_equal(info.sum_given, "");
	/* Verified while given: no (that QEMU has it). */
	lvram_store_set_verified(UUID);
	lvram_store_ungive(UUID);
	info = held_info();
	assert_false(info.verified);
	lvram_store_release(UUID);
	/* Unknown uuid: nothing happens. */
	lvram_store_set_verified(UUID);
	assert_false(lvram_store_held(UUID));
}

/* What the server answers on one connection (a socketpair: the peer is this process). */
static void serve_one(const char *line, struct lvram_reply *r, int *fd)
{
	char buf[LVRAM_LINE_MAX + 2];
	unsigned int nfds = 0;
	size_t len = 0;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(write(sv[1], line, strlen(line)), (ssize_t)strlen(line));
	lvram_server_serve(sv[0], "/nonexistent");
	*fd = -1;
	assert_int_equal(fd_pass_recv(sv[1], fd, 1, &nfds, buf, sizeof(buf), &len, FD_PASS_CLOEXEC,
				      NULL, 0), 0);
	close(sv[1]);
	assert_int_equal(lvram_reply_parse(buf, len, r, NULL, 0), 0);
	assert_int_equal(nfds, r->ok && r->held ? 1 : 0);
}

static void server_answers(void **state)
{
	struct lvram_reply r;
	char line[LVRAM_LINE_MAX];
	struct lvram_request rq = { .uuid = UUID2, .size = 2 * MIB };
	int fd;

	(void)state;
	assert_int_equal(lvram_request_format(&rq, line, sizeof(line)), 0);
	serve_one(line, &r, &fd);
	assert_true(r.ok && !r.held);
	/* Held, but this process is not that domain's QEMU (no -uuid): refused. */
	assert_int_equal(lvram_store_hold(UUID2, memfd_of(2 * MIB), 2 * MIB, getuid(), SUM), 0);
	serve_one(line, &r, &fd);
	assert_false(r.ok);
	assert_string_equal(r.error_class, "PermissionDenied");
	assert_int_equal(fd, -1);
	assert_int_equal(lvram_store_get(UUID2, &fd, NULL), 0);
	close(fd);
	/* A hostile line: an error answer, nothing given. */
	serve_one("{\"cmd\":\"lvram-open\",\"args\":{\"uuid\":\"" UUID2 "\",\"size\":2097152,"
		  "\"size\":2097152}}\n", &r, &fd);
	assert_false(r.ok);
	assert_string_equal(r.error_class, "InvalidRequest");
	serve_one("{}\n{}\n", &r, &fd);
	assert_false(r.ok);
	lvram_store_release(UUID2);
}

static void client_against_socket(void **state)
{
	char dir[] = "/tmp/test-lvram-XXXXXX", path[128], why[256];
	bool ign = true;
	int fd = 7;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lvram.sock", dir);
	/* No agent: a new memfd, as any start. */
	assert_int_equal(lvram_client_open(path, UUID, 2 * MIB, &fd, &ign, why, sizeof(why)), 0);
	assert_int_equal(fd, -1);
	assert_false(ign);
	assert_non_null(strstr(why, "no agent"));
	assert_int_equal(lvram_server_start(path, "/nonexistent", why, sizeof(why)), 0);
	/* Nothing held. */
	assert_int_equal(lvram_client_open(path, UUID, 2 * MIB, &fd, &ign, why, sizeof(why)), 0);
	assert_int_equal(fd, -1);
	/* Held for another user: the start must fail, nothing given. */
	assert_int_equal(lvram_store_hold(UUID, memfd_of(2 * MIB), 2 * MIB, getuid() + 1, SUM), 0);
	assert_int_equal(lvram_client_open(path, UUID, 2 * MIB, &fd, &ign, why, sizeof(why)), -EPERM);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(why, "PermissionDenied"));
	lvram_store_release(UUID);
	unlink(path);
	rmdir(dir);
}

static void qemu_cmdline_ram_fd(void **state)
{
	const char *const good[] = { "qemu", "-uuid", UUID, "-object",
		"{\"qom-type\":\"memory-backend-file\",\"id\":\"pc.ram\",\"mem-path\":\"/proc/self/fd/101\","
		"\"share\":true,\"size\":67108864,\"x-use-canonical-path-for-ramblock-id\":false}",
		"-object", "{\"qom-type\":\"secret\",\"id\":\"s0\"}", NULL };
	const char *const priv[] = { "qemu", "-object",
		"{\"qom-type\":\"memory-backend-file\",\"id\":\"pc.ram\",\"mem-path\":\"/proc/self/fd/101\","
		"\"share\":false}", NULL };
	const char *const two[] = { "qemu", "-object",
		"{\"qom-type\":\"memory-backend-file\",\"id\":\"pc.ram\",\"mem-path\":\"/proc/self/fd/101\",\"share\":true}",
		"-object",
		"{\"qom-type\":\"memory-backend-file\",\"id\":\"pc.ram\",\"mem-path\":\"/proc/self/fd/102\",\"share\":true}",
		NULL };
	const char *const memfd[] = { "qemu", "-object",
		"{\"qom-type\":\"memory-backend-memfd\",\"id\":\"pc.ram\",\"share\":true}", NULL };
	const char *const path[] = { "qemu", "-object",
		"{\"qom-type\":\"memory-backend-file\",\"id\":\"pc.ram\",\"mem-path\":\"/proc/self/fd/1x\",\"share\":true}",
		NULL };
	char buf[1024];
	int fdno = -1;
	size_t n;

	(void)state;
	n = cmdline(buf, sizeof(buf), good);
	assert_int_equal(qemu_ram_fd_from_cmdline(buf, n, &fdno, NULL, 0), 0);
	assert_int_equal(fdno, 101);
	n = cmdline(buf, sizeof(buf), priv);
	assert_int_equal(qemu_ram_fd_from_cmdline(buf, n, &fdno, NULL, 0), -EINVAL);
	n = cmdline(buf, sizeof(buf), two);
	assert_int_equal(qemu_ram_fd_from_cmdline(buf, n, &fdno, NULL, 0), -EINVAL);
	n = cmdline(buf, sizeof(buf), memfd);
	assert_int_equal(qemu_ram_fd_from_cmdline(buf, n, &fdno, NULL, 0), -ENOENT);
	n = cmdline(buf, sizeof(buf), path);
	assert_int_equal(qemu_ram_fd_from_cmdline(buf, n, &fdno, NULL, 0), -EINVAL);
}

static void maps_lines(void **state)
{
	const char maps[] =
		"55d0c0000000-55d0c0001000 r--p 00000000 fd:01 1234 /usr/bin/qemu\n"
		"7f0000000000-7f0010000000 rw-s 00000000 00:01 5678 /memfd:kvmlu-lv:x:pc.ram (deleted)\n"
		"7f0020000000-7f0020001000 rw-p 00000000 00:00 0 \n"
		"garbage line\n";

	(void)state;
	assert_true(qemu_ram_fd_mapped(maps, strlen(maps), makedev(0, 1), 5678));
	assert_false(qemu_ram_fd_mapped(maps, strlen(maps), makedev(0, 2), 5678));
	assert_false(qemu_ram_fd_mapped(maps, strlen(maps), makedev(0, 1), 567));
	assert_true(qemu_ram_fd_mapped(maps, strlen(maps), makedev(0xfd, 1), 1234));
	/* A line cut before its inode matches nothing. */
	assert_false(qemu_ram_fd_mapped(maps, 100, makedev(0, 1), 5678));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_good),
		cmocka_unit_test(request_hostile),
		cmocka_unit_test(reply_lines),
		cmocka_unit_test(cmdline_uuid),
		cmocka_unit_test(peer_checks),
		cmocka_unit_test(store_gives_once),
		cmocka_unit_test(store_keeps_sum_given),
		cmocka_unit_test(store_verified_gives_sum_once),
		cmocka_unit_test(server_answers),
		cmocka_unit_test(client_against_socket),
		cmocka_unit_test(qemu_cmdline_ram_fd),
		cmocka_unit_test(maps_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
