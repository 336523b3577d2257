// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the kexec marker (agent/journal/kexec_marker.c): what it
 * takes from a journal, the round trip on disk, and refusal of every
 * marker this agent did not write whole.
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
#include <sys/stat.h>
#include <unistd.h>

#include "agent/journal/kexec_marker.h"

#define T0 1764763200000000000LL

static struct journal *journal_with_vms(void)
{
	struct journal *j = calloc(1, sizeof(*j));
	char err[256];

	assert_non_null(j);
	journal_init(j, T0);
	snprintf(j->kernel, sizeof(j->kernel), "/boot/vmlinuz-7.3");
	assert_int_equal(journal_add_vm(j, "vm1", "/run/kvmlu/vms/vm1.sock", err, sizeof(err)), 0);
	assert_int_equal(journal_add_vm(j, "db.2", "/run/kvmlu/vms/db.2.sock", err, sizeof(err)), 0);
	assert_int_equal(journal_add_vm(j, "off", "/run/kvmlu/vms/off.sock", err, sizeof(err)), 0);
	for (unsigned int i = 0; i < 2; i++) {
		j->vms[i].state = JOURNAL_VM_PREPARED;
		snprintf(j->vms[i].session, sizeof(j->vms[i].session), "kvmlu/vm/%s", j->vms[i].name);
	}
	return j;
}

static void test_marker_names_the_prepared_vms_and_round_trips(void **state)
{
	struct journal *j = journal_with_vms();
	struct kexec_marker m, back;
	char err[256], *text;
	size_t len;

	(void)state;
	kexec_marker_from_journal(j, T0 + 5, &m);
	assert_string_equal(m.update_id, j->update_id);
	assert_string_equal(m.kernel, "/boot/vmlinuz-7.3");
	assert_true(m.started_ns == T0 && m.marked_ns == T0 + 5);
	/* "off" was never prepared: it has no session to report. */
	assert_int_equal(m.nr_vms, 2);
	assert_string_equal(m.vms[1].name, "db.2");
	assert_string_equal(m.vms[1].session, "kvmlu/vm/db.2");
	assert_string_equal(m.vms[1].control, "/run/kvmlu/vms/db.2.sock");
	assert_int_equal(kexec_marker_serialize(&m, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	memset(&back, 0, sizeof(back));
	assert_int_equal(kexec_marker_parse(text, len, &back, err, sizeof(err)), 0);
	assert_memory_equal(&back, &m, sizeof(m));
	free(text);
	free(j);
}

static const char GOOD_HEAD[] =
	"{\"kvmlu-kexec-marker\":1,\"update_id\":\"20261204T152735Z-77-0001\","
	"\"started_ns\":1,\"marked_ns\":2,\"kernel\":\"/boot/k\",\"vms\":";

/* Each is refused with a reason, and m is not touched. */
static void test_marker_refused_unless_whole_and_ours(void **state)
{
	static const char *const bad[] = {
		"",
		"{",
		"[]",
		"{\"kvmlu-kexec-marker\":1}",
		"{\"kvmlu-kexec-marker\":2,\"update_id\":\"20261204T152735Z-77-0001\",\"started_ns\":1,\"marked_ns\":2,\"kernel\":\"/boot/k\",\"vms\":[]}",
		"{\"kvmlu-kexec-marker\":1,\"update_id\":\"../../etc/x\",\"started_ns\":1,\"marked_ns\":2,\"kernel\":\"/boot/k\",\"vms\":[]}",
		"{\"kvmlu-kexec-marker\":1,\"update_id\":\"\",\"started_ns\":1,\"marked_ns\":2,\"kernel\":\"/boot/k\",\"vms\":[]}",
		"{\"kvmlu-kexec-marker\":1,\"update_id\":\"20261204T152735Z-77-0001\",\"started_ns\":-5,\"marked_ns\":2,\"kernel\":\"/boot/k\",\"vms\":[]}",
		"{\"kvmlu-kexec-marker\":1,\"update_id\":\"20261204T152735Z-77-0001\",\"started_ns\":\"1\",\"marked_ns\":2,\"kernel\":\"/boot/k\",\"vms\":[]}",
		"{\"kvmlu-kexec-marker\":1,\"update_id\":\"20261204T152735Z-77-0001\",\"started_ns\":1,\"marked_ns\":2,\"kernel\":\"/boot/k\",\"vms\":[],\"extra\":1}",
		"{\"kvmlu-kexec-marker\":1,\"update_id\":\"20261204T152735Z-77-0001\",\"started_ns\":1,\"marked_ns\":2,\"kernel\":\"/boot/k\",\"vms\":{}}",
	};
	static const char *const bad_vms[] = {
		"[1]}",
		"[{\"name\":\"vm1\",\"session\":\"kvmlu/vm/vm1\"}]}",
		"[{\"name\":\"vm1\",\"session\":\"kvmlu/vm/vm2\",\"control\":\"/run/vm1.sock\"}]}",
		"[{\"name\":\"../x\",\"session\":\"kvmlu/vm/../x\",\"control\":\"/run/x.sock\"}]}",
		"[{\"name\":\"vm1\",\"session\":\"kvmlu/vm/vm1\",\"control\":\"run/vm1.sock\"}]}",
		"[{\"name\":\"vm1\",\"session\":\"kvmlu/vm/vm1\",\"control\":\"/run/vm1.sock\",\"x\":1}]}",
		"[{\"name\":\"kvmlu-agent-journal\",\"session\":\"kvmlu/vm/kvmlu-agent-journal\",\"control\":\"/run/a.sock\"}]}",
		"[{\"name\":\"vm1\",\"session\":\"kvmlu/vm/vm1\",\"control\":\"/run/vm1.sock\"},"
		"{\"name\":\"vm1\",\"session\":\"kvmlu/vm/vm1\",\"control\":\"/run/vm1b.sock\"}]}",
		"[]} trailing",
		/* A key twice: json-c alone would keep the second VM list. */
		"[],\"vms\":[{\"name\":\"vm1\",\"session\":\"kvmlu/vm/vm1\",\"control\":\"/run/vm1.sock\"}]}",
		"[{\"name\":\"vm1\",\"name\":\"vm2\",\"session\":\"kvmlu/vm/vm2\",\"control\":\"/run/vm2.sock\"}]}",
	};
	struct kexec_marker m;
	char text[1024], err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]) + sizeof(bad_vms) / sizeof(bad_vms[0]); i++) {
		if (i < sizeof(bad) / sizeof(bad[0]))
			snprintf(text, sizeof(text), "%s", bad[i]);
		else
			snprintf(text, sizeof(text), "%s%s", GOOD_HEAD,
				 bad_vms[i - sizeof(bad) / sizeof(bad[0])]);
		memset(&m, 0x5a, sizeof(m));
		err[0] = 0;
		if (kexec_marker_parse(text, strlen(text), &m, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted: %s", text);
		assert_true(err[0]);
		assert_int_equal(m.update_id[0], 0x5a);
	}
	/* The same head with a good VM list is accepted: the refusals above are the faults. */
	snprintf(text, sizeof(text), "%s[{\"name\":\"vm1\",\"session\":\"kvmlu/vm/vm1\",\"control\":\"/run/vm1.sock\"}]}\n", GOOD_HEAD);
	assert_int_equal(kexec_marker_parse(text, strlen(text), &m, err, sizeof(err)), 0);
	assert_int_equal(m.nr_vms, 1);
}

static void test_marker_more_vms_than_a_journal_refused(void **state)
{
	size_t cap = 128 * (JOURNAL_MAX_VMS + 1) + 256, n;
	char *text = malloc(cap), err[256];
	struct kexec_marker m;

	(void)state;
	assert_non_null(text);
	n = (size_t)snprintf(text, cap, "%s[", GOOD_HEAD);
	for (int i = 0; i <= JOURNAL_MAX_VMS; i++)
		n += (size_t)snprintf(text + n, cap - n, "%s{\"name\":\"v%d\",\"session\":\"kvmlu/vm/v%d\",\"control\":\"/r/v%d\"}",
				      i ? "," : "", i, i, i);
	snprintf(text + n, cap - n, "]}");
	assert_int_equal(kexec_marker_parse(text, strlen(text), &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at most"));
	free(text);
}

static void test_marker_on_disk_written_read_removed_set_aside(void **state)
{
	char dir[] = "/tmp/kvmlu-marker-XXXXXX", path[128], err[256];
	struct journal *j = journal_with_vms();
	struct kexec_marker m, back;
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/" KEXEC_MARKER_FILE, dir);
	assert_int_equal(kexec_marker_read(dir, &back, err, sizeof(err)), -ENOENT);
	kexec_marker_from_journal(j, T0 + 5, &m);
	assert_int_equal(kexec_marker_write(dir, &m, err, sizeof(err)), 0);
	assert_int_equal(kexec_marker_read(dir, &back, err, sizeof(err)), 0);
	assert_memory_equal(&back, &m, sizeof(m));
	/* No temporary file left beside it. */
	snprintf(path, sizeof(path), "%s/" KEXEC_MARKER_FILE ".tmp", dir);
	assert_int_not_equal(stat(path, &st), 0);
	assert_int_equal(kexec_marker_remove(dir), 0);
	assert_int_equal(kexec_marker_read(dir, &back, err, sizeof(err)), -ENOENT);
	assert_int_equal(kexec_marker_remove(dir), 0);

	/* A marker cut short: an error naming the file, then kept aside. */
	snprintf(path, sizeof(path), "%s/" KEXEC_MARKER_FILE, dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"kvmlu-kexec-marker\":1,\"update_id\":\"2026", f);
	fclose(f);
	assert_int_equal(kexec_marker_read(dir, &back, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	assert_int_equal(kexec_marker_set_aside(dir), 0);
	assert_int_equal(kexec_marker_read(dir, &back, err, sizeof(err)), -ENOENT);
	snprintf(path, sizeof(path), "%s/" KEXEC_MARKER_FILE ".unreadable", dir);
	assert_int_equal(stat(path, &st), 0);
	unlink(path);

	/* A directory that is not there: write fails with a reason, no crash. */
	snprintf(path, sizeof(path), "%s/gone", dir);
	assert_int_equal(kexec_marker_write(path, &m, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "kexec marker"));
	assert_int_equal(rmdir(dir), 0);
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marker_names_the_prepared_vms_and_round_trips),
		cmocka_unit_test(test_marker_refused_unless_whole_and_ours),
		cmocka_unit_test(test_marker_more_vms_than_a_journal_refused),
		cmocka_unit_test(test_marker_on_disk_written_read_removed_set_aside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
