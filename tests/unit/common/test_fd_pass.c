// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of common/fd_pass.c over socketpairs: fds and payload
 * arrive intact on stream and seqpacket sockets, and every malformed or
 * oversized message is refused without leaving a received fd open.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fd_pass.h"

static char err[512];

static int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void same_file(int a, int b)
{
	struct stat sa, sb;

	assert_int_equal(fstat(a, &sa), 0);
	assert_int_equal(fstat(b, &sb), 0);
	assert_true(sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

static void round_trip(int type)
{
	const char payload[] = "{\"vm\":\"vm1\",\"regions\":2}";
	int sv[2], p[2], mem, got[4], i;
	unsigned int n = 99;
	char buf[128], c;
	size_t len = 0;

	assert_int_equal(socketpair(AF_UNIX, type, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	mem = memfd_create("fdpass", 0);
	assert_true(mem >= 0);
	{
		int fds[3] = { mem, p[1], sv[0] };

		assert_int_equal(fd_pass_send(sv[0], fds, 3, payload, sizeof(payload), err, sizeof(err)), 0);
	}
	assert_int_equal(fd_pass_recv(sv[1], got, 4, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(len, sizeof(payload));
	assert_memory_equal(buf, payload, sizeof(payload));
	same_file(got[0], mem);
	same_file(got[1], p[1]);
	same_file(got[2], sv[0]);
	/* The received pipe end is the live pipe, not a copy. */
	assert_int_equal(write(got[1], "x", 1), 1);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	assert_int_equal(fcntl(got[0], F_GETFD) & FD_CLOEXEC, 0);
	for (i = 0; i < 3; i++)
		close(got[i]);
	close(mem);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

static void test_fd_pass_round_trips_3_fds_and_payload_on_stream(void **state)
{
	(void)state;
	round_trip(SOCK_STREAM);
}

static void test_fd_pass_round_trips_3_fds_and_payload_on_seqpacket(void **state)
{
	(void)state;
	round_trip(SOCK_SEQPACKET);
}

static void test_fd_pass_keeps_back_to_back_stream_messages_apart(void **state)
{
	int sv[2], fd, got[2];
	unsigned int n;
	char buf[16];
	size_t len;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fd = memfd_create("b2b", 0);
	assert_int_equal(fd_pass_send(sv[0], NULL, 0, "first", 5, err, sizeof(err)), 0);
	assert_int_equal(fd_pass_send(sv[0], &fd, 1, "second", 6, err, sizeof(err)), 0);
	assert_int_equal(fd_pass_send(sv[0], NULL, 0, NULL, 0, err, sizeof(err)), 0);

	assert_int_equal(fd_pass_recv(sv[1], got, 2, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_int_equal(len, 5);
	assert_memory_equal(buf, "first", 5);
	assert_int_equal(fd_pass_recv(sv[1], got, 2, &n, buf, sizeof(buf), &len, FD_PASS_CLOEXEC, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(len, 6);
	assert_memory_equal(buf, "second", 6);
	assert_true(fcntl(got[0], F_GETFD) & FD_CLOEXEC);
	same_file(got[0], fd);
	close(got[0]);
	assert_int_equal(fd_pass_recv(sv[1], got, 2, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_int_equal(len, 0);
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

/* Raw sendmsg, to send what fd_pass_send() never would. */
static void raw_send(int sock, const void *data, size_t len, const int *fds, unsigned int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 128)];
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	assert_true(nfds <= 128);
	if (nfds) {
		memset(cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	assert_int_equal(sendmsg(sock, &msg, 0), (ssize_t)len);
}

struct wire_hdr { uint32_t magic, nfds, len, reserved; };

static void test_fd_pass_recv_reports_truncated_control_data_and_closes_fds(void **state)
{
	int sv[2], fds[100], got[FD_PASS_MAX_FDS], before, i, fd;
	struct wire_hdr h = { 0x4446564bU, 100, 0, 0 };
	unsigned int n = 7;
	char buf[8];
	size_t len;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	fd = memfd_create("many", 0);
	for (i = 0; i < 100; i++)
		fds[i] = fd;
	raw_send(sv[0], &h, sizeof(h), fds, 100);	/* more than FD_PASS_MAX_FDS */
	before = count_open_fds();
	err[0] = '\0';
	assert_int_equal(fd_pass_recv(sv[1], got, FD_PASS_MAX_FDS, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), -EMSGSIZE);
	assert_non_null(strstr(err, "control data truncated"));
	assert_int_equal(n, 0);
	assert_int_equal(count_open_fds(), before);
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

static void test_fd_pass_recv_refuses_more_fds_than_asked_and_closes_them(void **state)
{
	int sv[2], fds[3], got[1], before, i;
	unsigned int n = 7;
	char buf[8];
	size_t len;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (i = 0; i < 3; i++)
		fds[i] = memfd_create("extra", 0);
	assert_int_equal(fd_pass_send(sv[0], fds, 3, "x", 1, err, sizeof(err)), 0);
	before = count_open_fds();
	assert_int_equal(fd_pass_recv(sv[1], got, 1, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), -EMSGSIZE);
	assert_non_null(strstr(err, "sent 3 fds, at most 1"));
	assert_int_equal(n, 0);
	assert_int_equal(count_open_fds(), before);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	close(sv[0]);
	close(sv[1]);
}

static void test_fd_pass_recv_refuses_a_payload_larger_than_the_buffer(void **state)
{
	int sv[2], fd, got[2], before;
	unsigned int n;
	char big[100] = { 0 }, buf[10];
	size_t len;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fd = memfd_create("big", 0);
	assert_int_equal(fd_pass_send(sv[0], &fd, 1, big, sizeof(big), err, sizeof(err)), 0);
	before = count_open_fds();
	assert_int_equal(fd_pass_recv(sv[1], got, 2, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), -EMSGSIZE);
	assert_non_null(strstr(err, "payload of 100 bytes"));
	assert_int_equal(count_open_fds(), before);
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

static void test_fd_pass_recv_refuses_header_fd_count_mismatch(void **state)
{
	struct wire_hdr h = { 0x4446564bU, 2, 0, 0 };
	int sv[2], fd, got[4], before;
	unsigned int n;
	char buf[8];
	size_t len;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fd = memfd_create("mismatch", 0);
	raw_send(sv[0], &h, sizeof(h), &fd, 1);
	before = count_open_fds();
	assert_int_equal(fd_pass_recv(sv[1], got, 4, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "announces 2 fds, 1 arrived"));
	assert_int_equal(count_open_fds(), before);
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

static void test_fd_pass_recv_refuses_bad_magic_and_short_messages(void **state)
{
	struct wire_hdr h = { 0x12345678U, 0, 0, 0 };
	int sv[2], got[1];
	unsigned int n;
	char buf[8];
	size_t len;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	raw_send(sv[0], &h, sizeof(h), NULL, 0);
	assert_int_equal(fd_pass_recv(sv[1], got, 1, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "bad header"));
	raw_send(sv[0], "abc", 3, NULL, 0);
	assert_int_equal(fd_pass_recv(sv[1], got, 1, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), -EPROTO);
	h.magic = 0x4446564bU;
	h.len = 4;	/* announces 4 bytes, sends none */
	raw_send(sv[0], &h, sizeof(h), NULL, 0);
	assert_int_equal(fd_pass_recv(sv[1], got, 1, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), -EPROTO);
	close(sv[0]);
	close(sv[1]);
}

static void test_fd_pass_recv_reports_peer_closed(void **state)
{
	struct wire_hdr h = { 0x4446564bU, 0, 8, 0 };
	int sv[2], got[1];
	unsigned int n;
	char buf[8];
	size_t len;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[0]);
	assert_int_equal(fd_pass_recv(sv[1], got, 1, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), -ECONNRESET);
	close(sv[1]);

	/* Header, then the sender dies before the payload. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	raw_send(sv[0], &h, sizeof(h), NULL, 0);
	close(sv[0]);
	assert_int_equal(fd_pass_recv(sv[1], got, 1, &n, buf, sizeof(buf), &len, 0, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "payload"));
	close(sv[1]);
}

static void test_fd_pass_send_and_recv_refuse_bad_arguments(void **state)
{
	int sv[2], fds[FD_PASS_MAX_FDS + 1], i;
	static char big[FD_PASS_MAX_DATA + 1];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (i = 0; i <= FD_PASS_MAX_FDS; i++)
		fds[i] = sv[0];
	assert_int_equal(fd_pass_send(sv[0], fds, FD_PASS_MAX_FDS + 1, "x", 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "65 fds"));
	assert_int_equal(fd_pass_send(sv[0], NULL, 0, big, sizeof(big), err, sizeof(err)), -EMSGSIZE);
	fds[0] = 1000;	/* not open */
	assert_int_equal(fd_pass_send(sv[0], fds, 1, "x", 1, err, sizeof(err)), -EBADF);
	{
		unsigned int n;
		size_t len;

		assert_int_equal(fd_pass_recv(sv[1], NULL, 0, &n, NULL, 0, &len, 0x80, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "flags 0x80"));
	}
	close(sv[1]);
	assert_int_equal(fd_pass_send(sv[0], NULL, 0, "x", 1, err, sizeof(err)), -EPIPE);
	close(sv[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fd_pass_round_trips_3_fds_and_payload_on_stream),
		cmocka_unit_test(test_fd_pass_round_trips_3_fds_and_payload_on_seqpacket),
		cmocka_unit_test(test_fd_pass_keeps_back_to_back_stream_messages_apart),
		cmocka_unit_test(test_fd_pass_recv_reports_truncated_control_data_and_closes_fds),
		cmocka_unit_test(test_fd_pass_recv_refuses_more_fds_than_asked_and_closes_them),
		cmocka_unit_test(test_fd_pass_recv_refuses_a_payload_larger_than_the_buffer),
		cmocka_unit_test(test_fd_pass_recv_refuses_header_fd_count_mismatch),
		cmocka_unit_test(test_fd_pass_recv_refuses_bad_magic_and_short_messages),
		cmocka_unit_test(test_fd_pass_recv_reports_peer_closed),
		cmocka_unit_test(test_fd_pass_send_and_recv_refuse_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
