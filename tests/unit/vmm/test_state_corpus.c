// SPDX-License-Identifier: GPL-2.0
/*
 * Regression corpus of bad states: every tests/state-corpus/bad/X.dtb
 * must be refused by state_fdt_load() with an error containing the text
 * in X.expect. The files were written by test_state_fdt
 * (KVMLU_STATE_CORPUS_OUT) and by hand or the fuzzer when a bug was
 * found; they are committed so a regression in the parser shows up even
 * if the test that made them changes. Every .dtb in tests/state-corpus/good/
 * must load. Run from the top of the tree (as `make check` does).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/state/state_fdt.h"

#define CORPUS "tests/state-corpus"

static char err[512];

static void *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*size = (size_t)n;
	return buf;
}

static int for_each_dtb(const char *dir, void (*fn)(const char *path))
{
	struct dirent **ents;
	char path[512];
	int n, count = 0;

	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		fail_msg("cannot read %s (run from the top of the tree)", dir);
	for (int i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);

		if (l > 4 && !strcmp(ents[i]->d_name + l - 4, ".dtb")) {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			fn(path);
			count++;
		}
		free(ents[i]);
	}
	free(ents);
	return count;
}

static void check_bad(const char *path)
{
	char expath[512];
	struct state_vm s;
	size_t size, elen;
	void *blob = slurp(path, &size);
	char *expect;

	snprintf(expath, sizeof(expath), "%.*s.expect", (int)(strlen(path) - 4), path);
	expect = slurp(expath, &elen);
	while (elen && expect[elen - 1] == '\n')
		expect[--elen] = '\0';
	err[0] = '\0';
	if (state_fdt_load(blob, size, 0, &s, err, sizeof(err)) == 0)
		fail_msg("%s: accepted", path);
	if (!strstr(err, expect))
		fail_msg("%s: error \"%s\" does not say \"%s\"", path, err, expect);
	print_message("refused %s: %s\n", path, err);
	free(expect);
	free(blob);
}

static void check_good(const char *path)
{
	struct state_vm s;
	size_t size;
	void *blob = slurp(path, &size);

	if (state_fdt_load(blob, size, 0, &s, err, sizeof(err)))
		fail_msg("%s: refused: %s", path, err);
	state_vm_free(&s);
	free(blob);
}

static void test_state_corpus_bad_states_are_refused_by_name(void **state)
{
	(void)state;
	assert_true(for_each_dtb(CORPUS "/bad", check_bad) >= 20);
}

static void test_state_corpus_good_states_load(void **state)
{
	(void)state;
	assert_true(for_each_dtb(CORPUS "/good", check_good) >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_corpus_bad_states_are_refused_by_name),
		cmocka_unit_test(test_state_corpus_good_states_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
