// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of `kvmlu-agent --restore`'s decision (agent/update/
 * restore_plan.c) and of agent_restore (agent/daemon/agent_restore.c) on
 * real directories with faked VM operations: journal yes/no/unreadable x
 * marker yes/no/corrupt, what reaches the history, what is restored, and
 * that the marker never outlives the restore. Then the libvirt domains:
 * `--restore` (before libvirtd) leaves them pending and never calls the
 * domains provider's restore; the daemon's start (agent_restore_domains,
 * through update_ops_host with a fake provider) restores them and amends
 * the same update's history entry.
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
#include "agent/update/update_ops_host.h"

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
	int domain_restores;	/* ops->domains_restore called */
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

static int f_domains_restore(void *dctx, struct journal *j, char *err, size_t errlen)
{
	(void)j;
	((struct fake *)dctx)->domain_restores++;
	snprintf(err, errlen, "libvirtd is not running");
	return -ECONNREFUSED;
}

static bool f_domains_pending(void *dctx)
{
	(void)dctx;
	return true;
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
		/* As kvmlu-agent had them before --restore stopped registering the provider. */
		.domains_ctx = &t->f, .domains_restore = f_domains_restore,
		.domains_pending = f_domains_pending,
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
	update_ops_host_set_domains(NULL);
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


/* ---- libvirt domains: pending after --restore, restored by the daemon ---- */

#define WEB1_UUID "3f1c0b2a-1111-4222-8333-944455556666"

/* web1, managed-saved before the kexec, as the journal in LUO lists it. */
static void add_saved_domain(struct tcase *t)
{
	struct libvirt_domain_report d;

	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "web1");
	snprintf(d.uuid, sizeof(d.uuid), WEB1_UUID);
	d.state = LIBVIRT_DOMAIN_SAVED;
	d.suspended_ns = T0 + 100;
	d.saved_ns = T0 + 200;
	journal_set_domains(t->j, &d, 1);
}

static bool has_note(const struct journal *j, const char *text)
{
	for (unsigned int i = 0; i < j->nr_notes; i++)
		if (strstr(j->notes[i], text))
			return true;
	return false;
}

static void test_restore_leaves_libvirt_domains_pending_without_calling_them(void **state)
{
	struct tcase *t = *state;
	const struct journal *h = &t->hist[0];

	add_saved_domain(t);
	write_marker_of(t, t->j);
	/* The kvmlu-vmm VMs are back: exit 0, the oneshot succeeds. */
	assert_int_equal(run(t, 0, ""), 0);
	assert_int_equal(t->f.restores, 1);
	/* libvirtd cannot run yet: its domains are not asked for. */
	assert_int_equal(t->f.domain_restores, 0);
	assert_int_equal(t->nr_hist, 1);
	assert_int_equal(h->vms[0].state, JOURNAL_VM_VERIFIED);
	assert_int_equal(h->nr_domains, 1);
	assert_int_equal(h->domains[0].state, LIBVIRT_DOMAIN_SAVED);
	assert_string_equal(libvirt_domain_result(&h->domains[0]), "pending");
	/* Not finished, not failed: the daemon finishes it once libvirtd runs. */
	assert_int_equal(h->outcome, UPDATE_RUNNING);
	assert_string_equal(h->failed_phase, "");
	assert_int_equal(h->finished_ns, 0);
	assert_true(has_note(h, "1 libvirt domain(s) pending"));
	assert_true(has_note(h, "kvmlu-agent.service"));
	assert_non_null(strstr(t->out_text, "web1"));
	assert_non_null(strstr(t->out_text, "pending"));
	assert_false(exists(t->history, KEXEC_MARKER_FILE));
	assert_false(exists(t->state_dir, "journal.json"));
}

/* A VM not back: partial at once, the domains still pending. */
static void test_restore_partial_vm_with_libvirt_domains_pending(void **state)
{
	struct tcase *t = *state;

	add_saved_domain(t);
	t->f.restore_rc = UPDATE_VM_MISSING;
	assert_int_not_equal(run(t, 0, ""), 0);
	assert_int_equal(t->f.domain_restores, 0);
	assert_int_equal(t->hist[0].outcome, UPDATE_PARTIAL);
	assert_string_equal(libvirt_domain_result(&t->hist[0].domains[0]), "pending");
	assert_true(has_note(&t->hist[0], "pending"));
}

/* The domains provider kvmlu-agent registers, faked: libvirt's side of it. */
static struct {
	bool pending;		/* the state file is there */
	int restores;
	int rc;			/* -errno: libvirtd does not answer */
	bool domain_fails;	/* virDomainCreate fails */
} lv;

static int lv_init(void *dctx, const struct agent_config *cfg)
{
	(void)dctx;
	(void)cfg;
	return 0;
}

static int lv_unused(void *dctx, struct journal *j, char *err, size_t errlen)
{
	(void)dctx, (void)j, (void)err, (void)errlen;
	fail_msg("only restore is called at the daemon's start");
	return -EINVAL;
}

static bool lv_pending(void *dctx)
{
	(void)dctx;
	return lv.pending;
}

static int lv_restore(void *dctx, struct journal *j, char *err, size_t errlen)
{
	(void)dctx;
	lv.restores++;
	if (lv.rc) {
		/* The state file is kept: the domains are untouched. */
		snprintf(err, errlen, "libvirt qemu:///system: connection refused (after 60000 ms)");
		return lv.rc;
	}
	for (unsigned int i = 0; i < j->nr_domains; i++) {
		struct libvirt_domain_report *d = &j->domains[i];

		if (d->state != LIBVIRT_DOMAIN_SAVED)
			continue;
		if (lv.domain_fails) {
			d->state = LIBVIRT_DOMAIN_FAILED;
			snprintf(d->error, sizeof(d->error),
				 "virDomainCreate from managed save: internal error: bad image");
			snprintf(err, errlen, "libvirt domain %s: %s", d->name, d->error);
		} else {
			d->state = LIBVIRT_DOMAIN_RESTORED;
			d->resumed_ns = T0 + 3000000000LL;
		}
	}
	lv.pending = false;	/* every domain was tried: the state file is gone */
	return lv.domain_fails ? -EIO : 0;
}

static const struct update_domains_provider lv_provider = {
	.ctx_size = 16, .init = lv_init, .prepare = lv_unused, .rollback = lv_unused,
	.restore = lv_restore, .pending = lv_pending,
};

/* kvmlu-agent.service's start: the host's ops, with the provider registered. */
static int daemon_start(struct tcase *t)
{
	struct update_host_ctx ctx;
	struct update_ops ops;
	int ret;

	update_ops_host_set_domains(&lv_provider);
	update_ops_host_init(&ops, &ctx, &t->cfg);
	assert_non_null(ops.domains_pending);
	rewind(t->out);
	ret = agent_restore_domains(&t->cfg, &ops, t->out);
	update_ops_host_fini(&ctx);
	fflush(t->out);
	assert_int_equal(journal_store_history_list(t->history, t->hist, 4, &t->nr_hist,
						    &t->bad_hist), 0);
	assert_int_equal(t->bad_hist, 0);
	return ret;
}

/* --restore, then the daemon with the state file there. */
static void restore_then_pending(struct tcase *t)
{
	add_saved_domain(t);
	assert_int_equal(run(t, 0, ""), 0);
	assert_int_equal(t->hist[0].outcome, UPDATE_RUNNING);
	memset(&lv, 0, sizeof(lv));
	lv.pending = true;
}

static void test_daemon_start_restores_pending_domains_and_amends_report(void **state)
{
	struct tcase *t = *state;
	const struct journal *h = &t->hist[0];

	restore_then_pending(t);
	assert_int_equal(daemon_start(t), 0);
	assert_int_equal(lv.restores, 1);
	/* The same update's entry, amended in place. */
	assert_int_equal(t->nr_hist, 1);
	assert_string_equal(h->update_id, t->j->update_id);
	assert_int_equal(h->outcome, UPDATE_DONE);
	assert_string_equal(h->failed_phase, "");
	assert_true(h->finished_ns > 0);
	assert_int_equal(h->vms[0].state, JOURNAL_VM_VERIFIED);
	assert_int_equal(h->domains[0].state, LIBVIRT_DOMAIN_RESTORED);
	assert_string_equal(libvirt_domain_result(&h->domains[0]), "ok");
	assert_true(libvirt_domain_downtime_ns(&h->domains[0]) == 3000000000LL - 100);
	assert_non_null(strstr(t->out_text, "0 pending, 0 failed"));
	assert_true(has_note(h, "1 libvirt domain(s) started from their managed save"));
	/* Nothing pending any more: the next start does nothing. */
	assert_int_equal(daemon_start(t), 0);
	assert_int_equal(lv.restores, 1);
	assert_int_equal(t->hist[0].outcome, UPDATE_DONE);
}

/*
 * A domain whose RAM stayed in place: libvirtd absent, it stays pending
 * and the note says its RAM waits in its session for an agent restart,
 * not for virsh start; then restored, the note counts it.
 */
static void test_daemon_start_in_place_domain_pending_then_restored(void **state)
{
	struct tcase *t = *state;
	const struct journal *h = &t->hist[0];
	struct libvirt_domain_report d;

	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "web1");
	snprintf(d.uuid, sizeof(d.uuid), WEB1_UUID);
	d.state = LIBVIRT_DOMAIN_SAVED;
	d.suspended_ns = T0 + 100;
	d.saved_ns = T0 + 200;
	d.in_place = true;
	snprintf(d.session, sizeof(d.session), "kvmlu/lv/" WEB1_UUID);
	snprintf(d.checksum, sizeof(d.checksum), "0123456789abcdef0123456789abcdef");
	snprintf(d.image_xxh64, sizeof(d.image_xxh64), "0123456789abcdef");
	snprintf(d.image_path, sizeof(d.image_path), "/var/lib/libvirt/qemu/save/web1.save");
	d.memory_bytes = 1ULL << 30;
	d.image_bytes = 300000;
	journal_set_domains(t->j, &d, 1);
	assert_int_equal(run(t, 0, ""), 0);
	memset(&lv, 0, sizeof(lv));
	lv.pending = true;
	lv.rc = -ECONNREFUSED;
	assert_int_not_equal(daemon_start(t), 0);
	assert_int_equal(h->domains[0].state, LIBVIRT_DOMAIN_SAVED);
	assert_true(h->domains[0].in_place);
	assert_string_equal(libvirt_domain_action(&h->domains[0]), "ram-in-place");
	assert_true(has_note(h, "1 of them kept their RAM in place: it waits in LUO session "
			     "kvmlu/lv/<uuid>, untaken until libvirtd answers; restart "
			     "kvmlu-agent.service once libvirtd runs (not `virsh start`"));
	lv.rc = 0;
	assert_int_equal(daemon_start(t), 0);
	assert_int_equal(h->outcome, UPDATE_DONE);
	assert_int_equal(h->domains[0].state, LIBVIRT_DOMAIN_RESTORED);
	assert_true(has_note(h, "1 libvirt domain(s) started from their managed save by "
			     "kvmlu-agent.service, libvirtd running (1 with their RAM kept in place)"));
}

static void test_daemon_start_without_pending_state_touches_nothing(void **state)
{
	struct tcase *t = *state;

	restore_then_pending(t);
	lv.pending = false;
	assert_int_equal(daemon_start(t), 0);
	assert_int_equal(lv.restores, 0);
	assert_int_equal(t->hist[0].outcome, UPDATE_RUNNING);
}

static void test_daemon_start_libvirtd_absent_domains_stay_pending(void **state)
{
	struct tcase *t = *state;
	const struct journal *h = &t->hist[0];

	restore_then_pending(t);
	lv.rc = -ECONNREFUSED;
	assert_int_not_equal(daemon_start(t), 0);
	assert_int_equal(lv.restores, 1);
	assert_int_equal(t->nr_hist, 1);
	/* Not cold-booted, not called failed: pending, with how to bring it back. */
	assert_int_equal(h->domains[0].state, LIBVIRT_DOMAIN_SAVED);
	assert_string_equal(libvirt_domain_result(&h->domains[0]), "pending");
	assert_int_equal(h->outcome, UPDATE_PARTIAL);
	assert_string_equal(h->failed_phase, "restore");
	assert_non_null(strstr(h->error, "1 pending, 0 failed"));
	assert_non_null(strstr(h->error, "connection refused"));
	assert_true(has_note(h, "virsh start NAME"));
	assert_true(has_note(h, "managed save images are kept"));
	/* libvirtd runs at the next start: restored, the update done after all. */
	lv.rc = 0;
	assert_int_equal(daemon_start(t), 0);
	assert_int_equal(lv.restores, 2);
	assert_int_equal(t->nr_hist, 1);
	assert_int_equal(h->outcome, UPDATE_DONE);
	assert_string_equal(h->failed_phase, "");
	assert_string_equal(h->error, "");
	assert_int_equal(h->domains[0].state, LIBVIRT_DOMAIN_RESTORED);
}

static void test_daemon_start_failed_domain_reported_with_reason(void **state)
{
	struct tcase *t = *state;
	const struct journal *h = &t->hist[0];

	restore_then_pending(t);
	lv.domain_fails = true;
	assert_int_not_equal(daemon_start(t), 0);
	assert_int_equal(h->outcome, UPDATE_PARTIAL);
	assert_string_equal(h->failed_phase, "restore");
	assert_int_equal(h->domains[0].state, LIBVIRT_DOMAIN_FAILED);
	assert_string_equal(libvirt_domain_result(&h->domains[0]), "failed");
	assert_non_null(strstr(h->domains[0].error, "bad image"));
	assert_non_null(strstr(h->error, "0 pending, 1 failed"));
	assert_true(has_note(h, "virsh start NAME"));
	assert_non_null(strstr(t->out_text, "bad image"));
}

/* A VM not back keeps the update partial for it, whatever the domains do. */
static void test_daemon_start_keeps_partial_of_a_vm(void **state)
{
	struct tcase *t = *state;
	const struct journal *h = &t->hist[0];
	char vm_error[sizeof(h->error)];

	add_saved_domain(t);
	t->f.restore_rc = UPDATE_VM_MISSING;
	assert_int_not_equal(run(t, 0, ""), 0);
	memcpy(vm_error, h->error, sizeof(vm_error));
	memset(&lv, 0, sizeof(lv));
	lv.pending = true;
	assert_int_equal(daemon_start(t), 0);
	assert_int_equal(h->outcome, UPDATE_PARTIAL);
	assert_string_equal(h->error, vm_error);
	assert_int_equal(h->domains[0].state, LIBVIRT_DOMAIN_RESTORED);
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
		T(test_restore_leaves_libvirt_domains_pending_without_calling_them),
		T(test_restore_partial_vm_with_libvirt_domains_pending),
		T(test_daemon_start_restores_pending_domains_and_amends_report),
		T(test_daemon_start_in_place_domain_pending_then_restored),
		T(test_daemon_start_without_pending_state_touches_nothing),
		T(test_daemon_start_libvirtd_absent_domains_stay_pending),
		T(test_daemon_start_failed_domain_reported_with_reason),
		T(test_daemon_start_keeps_partial_of_a_vm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
