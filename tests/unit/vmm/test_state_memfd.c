// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/state/state_memfd.c: the sealed memfd that
 * carries the state FDT through a host kexec. After the kexec its
 * contents are outside input, so the reader must refuse files that are
 * empty, too large, not regular, or not sealed against changes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/state/state_memfd.h"

static char err[512];

static void test_state_memfd_round_trip_is_sealed(void **state)
{
	static const char blob[] = "\xd0\x0d\xfe\xed state fdt stand-in";
	void *back = NULL;
	size_t len = 0;
	int fd = -1, seals;

	(void)state;
	assert_int_equal(state_memfd_create("vm1", blob, sizeof(blob), &fd,
						    err, sizeof(err)), 0);
	seals = fcntl(fd, F_GET_SEALS);
	assert_true(seals & F_SEAL_WRITE);
	assert_true(seals & F_SEAL_GROW);
	assert_true(seals & F_SEAL_SHRINK);
	assert_true(seals & F_SEAL_SEAL);
	/* Sealed: nobody changes the state between capture and restore. */
	assert_int_equal(write(fd, "x", 1), -1);
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_int_equal(state_memfd_read(fd, 1 << 20, &back, &len, err, sizeof(err)), 0);
	assert_int_equal(len, sizeof(blob));
	assert_memory_equal(back, blob, sizeof(blob));
	free(back);
	close(fd);
}

static void test_state_memfd_create_refuses_empty_blob(void **state)
{
	int fd = -1;

	(void)state;
	assert_int_equal(state_memfd_create("vm1", "", 0, &fd, err, sizeof(err)), -EINVAL);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err, "size 0"));
}

static void test_state_memfd_read_refuses_unsealed_file(void **state)
{
	void *back = NULL;
	size_t len = 0;
	int fd = memfd_create("unsealed", MFD_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abcd", 4), 4);
	assert_int_equal(state_memfd_read(fd, 1 << 20, &back, &len, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "not sealed"));
	assert_null(back);
	close(fd);
}

static void test_state_memfd_read_refuses_empty_and_oversized(void **state)
{
	char big[4096];
	void *back = NULL;
	size_t len = 0;
	int fd = -1;

	(void)state;
	memset(big, 0x5a, sizeof(big));
	assert_int_equal(state_memfd_create("vm1", big, sizeof(big), &fd,
						    err, sizeof(err)), 0);
	/* A limit below the file's size: refused, nothing allocated. */
	assert_int_equal(state_memfd_read(fd, 1024, &back, &len, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "size 4096 outside 1..1024"));
	assert_null(back);
	close(fd);

	fd = memfd_create("empty", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK), 0);
	assert_int_equal(state_memfd_read(fd, 1 << 20, &back, &len, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "size 0"));
	close(fd);
}

static void test_state_memfd_read_refuses_pipe(void **state)
{
	void *back = NULL;
	size_t len = 0;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(state_memfd_read(p[0], 1 << 20, &back, &len, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_memfd_round_trip_is_sealed),
		cmocka_unit_test(test_state_memfd_create_refuses_empty_blob),
		cmocka_unit_test(test_state_memfd_read_refuses_unsealed_file),
		cmocka_unit_test(test_state_memfd_read_refuses_empty_and_oversized),
		cmocka_unit_test(test_state_memfd_read_refuses_pipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
