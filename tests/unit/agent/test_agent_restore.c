// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of `kvmlu-agent --restore`'s decision (agent/update/
 * restore_plan.c) and of agent_restore (agent/daemon/agent_restore.c) on
 * real directories with faked VM operations: journal yes/no/unreadable x
 * marker yes/no/corrupt, what reaches the history, what is restored, and
 * that the marker never outlives the restore.
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

#include "agent/daemon/agent_restore.h"
#include "agent/journal/journal_store.h"
#include "agent/journal/kexec_marker.h"
#include "agent/update/restore_plan.h"

#define T0 1764763200000000000LL
#define SUM "0123456789abcdef0123456789abcdef"

static void test_plan_for_each_journal_and_marker(void **state)
{
	(void)state;
	/* A journal restores, whatever the marker. */
	assert_int_equal(restore_plan_decide(0, 0), RESTORE_FROM_JOURNAL);
	assert_int_equal(restore_plan_decide(0, -ENOENT), RESTORE_FROM_JOURNAL);
	assert_int_equal(restore_plan_decide(0, -EINVAL), RESTORE_FROM_JOURNAL);
	/* Neither: no update came. */
	assert_int_equal(restore_plan_decide(-ENOENT, -ENOENT), RESTORE_NOTHING);
	/* A marker, readable or not, without a journal: an update was lost. */
	assert_int_equal(restore_plan_decide(-ENOENT, 0), RESTORE_REPORT_LOST);
	assert_int_equal(restore_plan_decide(-ENOENT, -EINVAL), RESTORE_REPORT_LOST);
	assert_int_equal(restore_plan_decide(-EBADMSG, 0), RESTORE_REPORT_LOST);
	assert_int_equal(restore_plan_decide(-EBADMSG, -EIO), RESTORE_REPORT_LOST);
	/* An unreadable journal and nothing naming the update: an error, as before. */
	assert_int_equal(restore_plan_decide(-EBADMSG, -ENOENT), RESTORE_JOURNAL_UNREADABLE);
}

/* ---- agent_restore with fake VM operations ---- */

struct fake {
	int64_t t;
	int restores, verifies, finishes;
	int restore_rc;		/* what vm_restore answers */
};

static int64_t f_now(void *ctx)
{
	return ((struct fake *)ctx)->t += 1000;
}

static int f_save(void *ctx, const struct journal *j)
{
	(void)ctx;
	(void)j;
	return 0;
}

static int f_restore(void *ctx, struct journal_vm *vm, char *err, size_t errlen)
{
	struct fake *f = ctx;

	f->restores++;
	if (f->restore_rc)
		snprintf(err, errlen, "session %s is not in this kernel", vm->session);
	return f->restore_rc;
}

static int f_verify(void *ctx, struct journal_vm *vm, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct fake *)ctx)->verifies++;
	memcpy(vm->checksum_after, vm->checksum, sizeof(vm->checksum_after));
	return 0;
}

static void f_finish(void *ctx)
{
	((struct fake *)ctx)->finishes++;
}

struct tcase {
	char dir[32], history[64], state_dir[64];
	struct agent_config cfg;
	struct fake f;
	struct update_ops ops;
	struct journal *j;		/* the journal "retrieved from LUO" */
	struct journal *hist;		/* the history read back */
	unsigned int nr_hist, bad_hist;
	FILE *out;
	char *out_text;
	size_t out_len;
};

static int setup(void **state)
{
	struct tcase *t = calloc(1, sizeof(*t));
	char err[256];

	assert_non_null(t);
	snprintf(t->dir, sizeof(t->dir), "/tmp/kvmlu-restore-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->history, sizeof(t->history), "%s/history", t->dir);
	snprintf(t->state_dir, sizeof(t->state_dir), "%s/state", t->dir);
	assert_int_equal(mkdir(t->history, 0700), 0);
	assert_int_equal(mkdir(t->state_dir, 0700), 0);
	agent_config_defaults(&t->cfg);
	snprintf(t->cfg.history_dir, sizeof(t->cfg.history_dir), "%s", t->history);
	snprintf(t->cfg.state_dir, sizeof(t->cfg.state_dir), "%s", t->state_dir);
	t->f.t = T0 + 1000000;
	t->ops = (struct update_ops){
		.ctx = &t->f, .cfg = &t->cfg, .now_ns = f_now, .journal_save = f_save,
		.vm_restore = f_restore, .vm_verify = f_verify, .journal_finish = f_finish,
	};
	/* The journal an agent preserved at the kexec: vm1 prepared. */
	t->j = calloc(1, sizeof(*t->j));
	t->hist = calloc(4, sizeof(*t->hist));
	assert_non_null(t->j);
	assert_non_null(t->hist);
	journal_init(t->j, T0);
	assert_int_equal(journal_add_vm(t->j, "vm1", "/run/kvmlu/vms/vm1.sock", err, sizeof(err)), 0);
	t->j->vms[0].state = JOURNAL_VM_PREPARED;
	snprintf(t->j->vms[0].session, sizeof(t->j->vms[0].session), "kvmlu/vm/vm1");
	memcpy(t->j->vms[0].checksum, SUM, sizeof(SUM));
	t->j->phase = UPDATE_KEXEC;
	t->j->phases[UPDATE_KEXEC].start_ns = T0 + 500;
	t->out = open_memstream(&t->out_text, &t->out_len);
	assert_non_null(t->out);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tcase *t = *state;
	char cmd[96];

	if (t->out)
		fclose(t->out);
	free(t->out_text);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	assert_int_equal(system(cmd), 0);
	free(t->j);
	free(t->hist);
	free(t);
	return 0;
}

static void write_marker_of(struct tcase *t, const struct journal *j)
{
	struct kexec_marker m;
	char err[256];

	kexec_marker_from_journal(j, T0 + 400, &m);
	assert_int_equal(kexec_marker_write(t->history, &m, err, sizeof(err)), 0);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static bool exists(const char *dir, const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !stat(path, &st);
}

static int run(struct tcase *t, int journal_rc, const char *why)
{
	int ret = agent_restore(&t->cfg, &t->ops, journal_rc, t->j, why, t->out);

	fflush(t->out);
	assert_int_equal(journal_store_history_list(t->history, t->hist, 4, &t->nr_hist,
						    &t->bad_hist), 0);
	assert_int_equal(t->bad_hist, 0);
	return ret;
}

static void test_no_journal_no_marker_nothing_to_restore(void **state)
{
	struct tcase *t = *state;

	assert_int_equal(run(t, -ENOENT, "no session"), 0);
	assert_non_null(strstr(t->out_text, "nothing to restore"));
	assert_int_equal(t->nr_hist, 0);
	assert_int_equal(t->f.restores, 0);
}

static void test_marker_without_journal_reported_failed_nothing_restored(void **state)
{
	struct tcase *t = *state;
	const struct journal *h = &t->hist[0];

	write_marker_of(t, t->j);
	/* A copy of the journal in state_dir, as on a disk: superseded by the report. */
	assert_int_equal(journal_store_save(t->state_dir, t->j), 0);
	assert_int_not_equal(run(t, -ENOENT, "no session kvmlu/vm/kvmlu-agent-journal"), 0);
	assert_int_equal(t->f.restores, 0);
	assert_int_equal(t->f.finishes, 0);
	assert_int_equal(t->nr_hist, 1);
	assert_string_equal(h->update_id, t->j->update_id);
	assert_int_equal(h->outcome, UPDATE_FAILED);
	assert_string_equal(h->failed_phase, "kexec");
	assert_non_null(strstr(h->error, "the journal did not survive the kexec"));
	assert_non_null(strstr(h->error, "no session kvmlu/vm/kvmlu-agent-journal"));
	assert_int_equal(h->nr_vms, 1);
	assert_string_equal(h->vms[0].name, "vm1");
	assert_int_equal(h->vms[0].state, JOURNAL_VM_UNRESTORED);
	assert_string_equal(h->vms[0].session, "kvmlu/vm/vm1");
	assert_non_null(strstr(h->vms[0].error,
			       "kvmlu-vmm restore --session kvmlu/vm/vm1 --control /run/kvmlu/vms/vm1.sock"));
	assert_true(h->phases[UPDATE_KEXEC].failed);
	assert_true(h->phases[UPDATE_KEXEC].start_ns == T0 + 400);
	assert_false(exists(t->history, KEXEC_MARKER_FILE));
	assert_false(exists(t->state_dir, "journal.json"));
	assert_non_null(strstr(t->out_text, "vm1"));
	assert_non_null(strstr(t->out_text, "unrestored"));
	assert_non_null(strstr(t->out_text, "until retrieved or the next reboot"));
}

static void test_marker_with_journal_unreadable_reported_failed(void **state)
{
	struct tcase *t = *state;

	write_marker_of(t, t->j);
	assert_int_not_equal(run(t, -EBADMSG, "journal: checksum mismatch"), 0);
	assert_int_equal(t->f.restores, 0);
	assert_int_equal(t->nr_hist, 1);
	assert_int_equal(t->hist[0].outcome, UPDATE_FAILED);
	assert_non_null(strstr(t->hist[0].error, "checksum mismatch"));
	assert_false(exists(t->history, KEXEC_MARKER_FILE));
}

static void test_corrupt_marker_without_journal_reported_and_set_aside(void **state)
{
	struct tcase *t = *state;

	write_file(t->history, KEXEC_MARKER_FILE, "{\"kvmlu-kexec-marker\":1,\"upd");
	assert_int_not_equal(run(t, -ENOENT, "no session"), 0);
	assert_int_equal(t->f.restores, 0);
	assert_int_equal(t->nr_hist, 1);
	assert_int_equal(t->hist[0].outcome, UPDATE_FAILED);
	assert_int_equal(t->hist[0].nr_vms, 0);
	assert_non_null(strstr(t->hist[0].error, "kexec marker is unreadable"));
	assert_false(exists(t->history, KEXEC_MARKER_FILE));
	assert_true(exists(t->history, KEXEC_MARKER_FILE ".unreadable"));
	/* Reported once: the next boot has nothing to restore. */
	rewind(t->out);
	assert_int_equal(run(t, -ENOENT, "no session"), 0);
	assert_int_equal(t->nr_hist, 1);
}

static void test_journal_unreadable_without_marker_error_no_history(void **state)
{
	struct tcase *t = *state;

	assert_int_not_equal(run(t, -EBADMSG, "journal: checksum mismatch"), 0);
	assert_int_equal(t->f.restores, 0);
	assert_int_equal(t->nr_hist, 0);
}

static void test_journal_without_marker_restored_as_before(void **state)
{
	struct tcase *t = *state;

	assert_int_equal(run(t, 0, ""), 0);
	assert_int_equal(t->f.restores, 1);
	assert_int_equal(t->f.finishes, 1);
	assert_int_equal(t->nr_hist, 1);
	assert_int_equal(t->hist[0].outcome, UPDATE_DONE);
	assert_int_equal(t->hist[0].vms[0].state, JOURNAL_VM_VERIFIED);
}

static void test_journal_and_marker_restored_marker_removed(void **state)
{
	struct tcase *t = *state;

	write_marker_of(t, t->j);
	assert_int_equal(run(t, 0, ""), 0);
	assert_int_equal(t->f.restores, 1);
	assert_int_equal(t->hist[0].outcome, UPDATE_DONE);
	assert_int_equal(t->hist[0].nr_notes, 0);
	assert_false(exists(t->history, KEXEC_MARKER_FILE));
}

/* Whatever the outcome: a restore that leaves a VM missing removes it too. */
static void test_journal_and_marker_partial_marker_removed(void **state)
{
	struct tcase *t = *state;

	write_marker_of(t, t->j);
	t->f.restore_rc = UPDATE_VM_MISSING;
	assert_int_not_equal(run(t, 0, ""), 0);
	assert_int_equal(t->hist[0].outcome, UPDATE_PARTIAL);
	assert_int_equal(t->hist[0].vms[0].state, JOURNAL_VM_MISSING);
	assert_false(exists(t->history, KEXEC_MARKER_FILE));
}

static void test_journal_and_corrupt_marker_restored_marker_set_aside(void **state)
{
	struct tcase *t = *state;

	write_file(t->history, KEXEC_MARKER_FILE, "not json");
	assert_int_equal(run(t, 0, ""), 0);
	assert_int_equal(t->f.restores, 1);
	assert_int_equal(t->hist[0].outcome, UPDATE_DONE);
	assert_int_equal(t->hist[0].nr_notes, 1);
	assert_non_null(strstr(t->hist[0].notes[0], "kexec marker was unreadable"));
	assert_false(exists(t->history, KEXEC_MARKER_FILE));
	assert_true(exists(t->history, KEXEC_MARKER_FILE ".unreadable"));
}

static void test_journal_and_marker_of_another_update_noted(void **state)
{
	struct tcase *t = *state;
	struct journal *other = calloc(1, sizeof(*other));

	assert_non_null(other);
	journal_init(other, T0 - 1000000000LL);
	write_marker_of(t, other);
	assert_int_equal(run(t, 0, ""), 0);
	assert_int_equal(t->hist[0].outcome, UPDATE_DONE);
	assert_int_equal(t->hist[0].nr_notes, 1);
	assert_non_null(strstr(t->hist[0].notes[0], other->update_id));
	assert_false(exists(t->history, KEXEC_MARKER_FILE));
	free(other);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_for_each_journal_and_marker),
		T(test_no_journal_no_marker_nothing_to_restore),
		T(test_marker_without_journal_reported_failed_nothing_restored),
		T(test_marker_with_journal_unreadable_reported_failed),
		T(test_corrupt_marker_without_journal_reported_and_set_aside),
		T(test_journal_unreadable_without_marker_error_no_history),
		T(test_journal_without_marker_restored_as_before),
		T(test_journal_and_marker_restored_marker_removed),
		T(test_journal_and_marker_partial_marker_removed),
		T(test_journal_and_corrupt_marker_restored_marker_set_aside),
		T(test_journal_and_marker_of_another_update_noted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
