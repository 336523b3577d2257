// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of common/file_read.c: a file of exactly the limit is read
 * whole and NUL-terminated, one byte more is refused with nothing
 * allocated, a missing file says so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file_read.h"

static char path[] = "/tmp/kvmlu-file-read.XXXXXX";

static void write_bytes(size_t n)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	assert_int_equal(fclose(f), 0);
}

static void test_file_read_exactly_the_limit(void **state)
{
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	write_bytes(100);
	assert_int_equal(file_read_all(path, 100, &buf, &len), 0);
	assert_int_equal(len, 100);
	assert_int_equal(buf[100], 0);
	assert_int_equal(buf[99], 'a' + 99 % 26);
	free(buf);
}

static void test_file_read_one_byte_over_is_refused(void **state)
{
	char *buf = (char *)&buf;
	size_t len = 7;

	(void)state;
	write_bytes(101);
	assert_int_equal(file_read_all(path, 100, &buf, &len), -EFBIG);
	assert_ptr_equal(buf, (char *)&buf);	/* untouched: nothing to free */
	assert_int_equal(len, 7);
}

static void test_file_read_empty_and_missing(void **state)
{
	char *buf = NULL;
	size_t len = 1;

	(void)state;
	write_bytes(0);
	assert_int_equal(file_read_all(path, 100, &buf, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);
	unlink(path);
	assert_int_equal(file_read_all(path, 100, &buf, &len), -ENOENT);
}

static int setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_read_exactly_the_limit),
		cmocka_unit_test(test_file_read_one_byte_over_is_refused),
		cmocka_unit_test(test_file_read_empty_and_missing),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
