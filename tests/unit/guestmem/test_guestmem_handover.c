// SPDX-License-Identifier: GPL-2.0
/*
 * Guest RAM handed to another process over common/fd_pass: what a live
 * upgrade does, in miniature, with guestmem's own files and checksum.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fd_pass.h"
#include "guestmem/guestmem.h"

static char err[512];

/*
 * The upgrade path in miniature: a child creates guest RAM and a state
 * memfd, writes to both, checksums the RAM, sends the files and the sum,
 * and exits. The parent adopts the RAM file after the child is gone and
 * must find the same memory and the same sum.
 */
#define HANDOVER_RAM (16ULL << 20)

static int child_hand_over(int sock)
{
	struct guestmem gm;
	struct guestmem_checksum c;
	char e[256], hex[33];
	int fds[2];

	if (guestmem_create(&gm, GUESTMEM_MEMFD, HANDOVER_RAM, -1, "handover", e, sizeof(e)))
		return 10;
	memset(gm.r[0].hva, 0x5a, 1 << 20);
	memcpy((char *)gm.r[0].hva + HANDOVER_RAM - 24, "survives the old process", 24);
	if (guestmem_checksum(&gm, 2, &c))
		return 11;
	guestmem_checksum_format(&c, hex);
	fds[0] = gm.r[0].fd;
	fds[1] = memfd_create("state", 0);
	if (fds[1] < 0 || write(fds[1], "vcpu state", 10) != 10)
		return 12;
	if (fd_pass_send(sock, fds, 2, hex, sizeof(hex), e, sizeof(e)))
		return 13;
	guestmem_destroy(&gm);
	close(fds[1]);
	return 0;
}

static void test_fd_pass_hands_guest_ram_to_another_process_intact(void **state)
{
	struct guestmem gm;
	struct guestmem_checksum c;
	int sv[2], fds[4], status;
	unsigned int n;
	char hex[33], mine[33], st[10];
	size_t len;
	pid_t pid;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[1]);
		_exit(child_hand_over(sv[0]));
	}
	close(sv[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	assert_int_equal(fd_pass_recv(sv[1], fds, 4, &n, hex, sizeof(hex), &len, FD_PASS_CLOEXEC, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(len, sizeof(hex));
	assert_int_equal(hex[32], '\0');
	assert_int_equal(pread(fds[1], st, sizeof(st), 0), 10);
	assert_memory_equal(st, "vcpu state", 10);
	close(fds[1]);

	/* The plan would come from the state FDT; here the same layout call. */
	assert_int_equal(guestmem_layout(HANDOVER_RAM, &gm), 0);
	gm.backend = GUESTMEM_MEMFD;
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), 0);
	assert_memory_equal((char *)gm.r[0].hva + HANDOVER_RAM - 24, "survives the old process", 24);
	assert_int_equal(((unsigned char *)gm.r[0].hva)[(1 << 20) - 1], 0x5a);
	assert_int_equal(guestmem_checksum(&gm, 1, &c), 0);
	guestmem_checksum_format(&c, mine);
	assert_string_equal(mine, hex);
	guestmem_destroy(&gm);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fd_pass_hands_guest_ram_to_another_process_intact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
