// SPDX-License-Identifier: GPL-2.0
/*
 * A libvirt domain's RAM in place across a host update
 * (agent/libvirt/lvram_inplace.c), every branch without libvirtd or
 * /dev/liveupdate: the domain's QEMU steps (domain-replace-qemu's halves)
 * and LUO are faked through struct lvram_inplace_ops. The fake kernel
 * keeps each preserved file (a dup of the very fd) under its session and
 * token; fake_kexec keeps the sessions that are open, as the kernel keeps
 * those whose fd is open at the reboot, and forgets the agent's held RAM,
 * as a new agent process has none. What is checked: the journal fields
 * prepare writes and that they survive the journal's JSON, the files in
 * the session (the held RAM itself, the image's bytes, sealed), the
 * rollback (session unpreserved, restarted from the held RAM), and after
 * the kexec the restore (image written back as it was, RAM held for the
 * wrapper, started with no second hash) and its refusals (RAM changed,
 * session missing, image changed, start failed), none of which runs the
 * guest on RAM that is not verified.
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
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "agent/journal/domain_report.h"
#include "agent/libvirt/lvram_inplace.h"
#include "agent/libvirt/lvram_store.h"
#include "agent/libvirt/lvram_sum.h"
#include "common/clock.h"

#define UUID	"6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a21"
#define NAME	"web1"
#define MIB	(1ULL << 20)
#define RAM	(4 * MIB)
#define IMAGE	(96 * 1024 + 17)

/* ---- the fake kernel: preserved files by session and token ---- */

#define MAX_SESS 4
struct fake_sess {
	bool used, kept, retrieved, finished;
	char name[LUO_SESSION_NAME_SIZE];
	int ram_fd, image_fd;
};

static struct {
	struct fake_sess s[MAX_SESS];
	int fail_create, fail_preserve;
	/* domain steps */
	int save_rc, restart_rc;
	bool save_writes_image;
	uint64_t image_size;
	unsigned int saves, restarts;
	int preserved_before_suspend;
	bool session_before_suspend;
	bool restart_verified, restart_saw_held;
	char save_dir[64];
} F;

static struct fake_sess *find(const char *name)
{
	for (int i = 0; i < MAX_SESS; i++)
		if (F.s[i].used && !strcmp(F.s[i].name, name))
			return &F.s[i];
	return NULL;
}

static struct fake_sess *of(const struct luo_session *s)
{
	return find(s->name);
}

static void drop(struct fake_sess *f)
{
	if (f->ram_fd >= 0)
		close(f->ram_fd);
	if (f->image_fd >= 0)
		close(f->image_fd);
	memset(f, 0, sizeof(*f));
}

static int f_create(struct luo_session *s, const char *name, char *err, size_t errlen)
{
	if (F.fail_create) {
		snprintf(err, errlen, "CREATE_SESSION: fake refusal");
		return F.fail_create;
	}
	assert_true(luo_session_is_domain_name(name));
	assert_null(find(name));
	for (int i = 0; i < MAX_SESS; i++)
		if (!F.s[i].used) {
			F.s[i].used = true;
			F.s[i].ram_fd = F.s[i].image_fd = -1;
			snprintf(F.s[i].name, sizeof(F.s[i].name), "%s", name);
			s->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			snprintf(s->name, sizeof(s->name), "%s", name);
			return 0;
		}
	return -ENOSPC;
}

static int f_retrieve(struct luo_session *s, const char *name, char *err, size_t errlen)
{
	struct fake_sess *f = find(name);

	if (!f || !f->kept || f->retrieved) {
		snprintf(err, errlen, "RETRIEVE_SESSION: no session '%s' in this kernel", name);
		return -ENOENT;
	}
	f->retrieved = true;
	s->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	s->incoming = true;
	snprintf(s->name, sizeof(s->name), "%s", name);
	return 0;
}

static int f_preserve(struct luo_session *s, int fd, uint64_t token, const char *what,
		      char *err, size_t errlen)
{
	struct fake_sess *f = of(s);

	(void)what;
	assert_non_null(f);
	if (F.fail_preserve && token == LVRAM_TOKEN_IMAGE) {
		snprintf(err, errlen, "PRESERVE_FD: fake refusal");
		return F.fail_preserve;
	}
	if (token == LVRAM_TOKEN_RAM)
		f->ram_fd = dup(fd);
	else if (token == LVRAM_TOKEN_IMAGE)
		f->image_fd = dup(fd);
	else
		fail_msg("unexpected token %" PRIx64, token);
	return 0;
}

static int f_retrieve_fd(struct luo_session *s, uint64_t token, const char *what, int *fd,
			 char *err, size_t errlen)
{
	struct fake_sess *f = of(s);
	int have;

	(void)what;
	assert_non_null(f);
	assert_true(f->retrieved);
	have = token == LVRAM_TOKEN_RAM ? f->ram_fd : token == LVRAM_TOKEN_IMAGE ? f->image_fd : -1;
	if (have < 0) {
		snprintf(err, errlen, "RETRIEVE_FD: no token");
		return -ENOENT;
	}
	*fd = fcntl(have, F_DUPFD_CLOEXEC, 3);
	return 0;
}

static int f_finish(struct luo_session *s, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	of(s)->finished = true;
	return 0;
}

static void f_close(struct luo_session *s)
{
	struct fake_sess *f = of(s);

	/* Outgoing before the kexec: unpreserved. Incoming: finished, let go. */
	if (f && (!f->kept || f->retrieved))
		drop(f);
	if (s->fd >= 0)
		close(s->fd);
	luo_session_init(s);
}

/* The kexec: open outgoing sessions are kept; the agent's held RAM is gone. */
static void fake_kexec(struct luo_session *sess)
{
	struct fake_sess *f = sess->fd >= 0 ? of(sess) : NULL;

	if (f)
		f->kept = true;
	if (sess->fd >= 0)
		close(sess->fd);
	luo_session_init(sess);
	lvram_store_release(UUID);
}

/* ---- the fake domain steps ---- */

static int memfd_pattern(uint64_t size, unsigned char seed)
{
	int fd = memfd_create("test-ram", MFD_CLOEXEC);
	unsigned char *p;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	for (uint64_t i = 0; i < size; i += 4096)
		p[i] = (unsigned char)(seed + i / 4096);
	munmap(p, size);
	return fd;
}

static void image_path(char *buf, size_t len)
{
	assert_int_equal(lvram_inplace_image_path(F.save_dir, NAME, buf, len), 0);
}

static int f_save(struct qemu_replace_job *job)
{
	char err[512], path[128];
	int fd;

	F.saves++;
	assert_null(job->dom);
	assert_string_equal(job->uuid, UUID);
	assert_string_equal(job->qmp_dir, "/run/kvmlu/lv");
	fd = memfd_pattern(RAM, 7);
	/* What qemu_replace_save_and_hold does before the suspend. */
	assert_non_null(job->before_suspend);
	F.preserved_before_suspend = job->before_suspend(job, fd, err, sizeof(err));
	if (F.preserved_before_suspend) {
		snprintf(job->err, sizeof(job->err), "domain %.200s: %.300s (nothing suspended)", job->name,
			 err);
		close(fd);
		return F.preserved_before_suspend;
	}
	F.session_before_suspend = find("kvmlu/lv/" UUID) && find("kvmlu/lv/" UUID)->ram_fd >= 0;
	if (F.save_rc) {
		snprintf(job->err, sizeof(job->err), "domain %s: virDomainManagedSave: fake; it "
			 "runs on its old QEMU", job->name);
		close(fd);
		return F.save_rc;
	}
	assert_int_equal(lvram_sum(fd, job->sum, err, sizeof(err)), 0);
	job->size = RAM;
	job->qemu_uid = 64055;
	job->image_bytes = 123456;
	assert_int_equal(lvram_store_hold(UUID, fd, RAM, 64055, job->sum), 0);
	if (F.save_writes_image) {
		int img;
		char *buf = calloc(1, F.image_size);

		image_path(path, sizeof(path));
		for (uint64_t i = 0; i < F.image_size; i++)
			buf[i] = (char)(i * 31 + 5);
		img = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
		assert_true(img >= 0);
		assert_int_equal(write(img, buf, F.image_size), (ssize_t)F.image_size);
		close(img);
		free(buf);
	}
	return 0;
}

static int f_restart(struct qemu_replace_job *job)
{
	F.restarts++;
	F.restart_verified = job->verified;
	F.restart_saw_held = lvram_store_held(job->uuid);
	if (F.restart_rc) {
		snprintf(job->err, sizeof(job->err), "domain %s: the start on a new QEMU failed: "
			 "fake; run `kvmlu domain-replace-qemu %s` again", job->name, job->name);
		return F.restart_rc;
	}
	/* What restart_and_verify does once the new QEMU maps it. */
	lvram_store_release(job->uuid);
	return 0;
}

static const struct lvram_inplace_ops fake_ops = {
	.save_and_hold = f_save,
	.restart = f_restart,
	.create = f_create,
	.retrieve = f_retrieve,
	.preserve_fd = f_preserve,
	.retrieve_fd = f_retrieve_fd,
	.finish = f_finish,
	.close = f_close,
};

static struct libvirt_domain_report D;
static struct luo_session S;

static void remove_save_dir(void)
{
	char path[128];

	if (!F.save_dir[0])
		return;
	image_path(path, sizeof(path));
	unlink(path);
	rmdir(F.save_dir);
}

static int setup(void **state)
{
	(void)state;
	remove_save_dir();
	for (int i = 0; i < MAX_SESS; i++)
		if (F.s[i].used)
			drop(&F.s[i]);
	lvram_store_release(UUID);
	memset(&F, 0, sizeof(F));
	F.save_writes_image = true;
	F.image_size = IMAGE;
	snprintf(F.save_dir, sizeof(F.save_dir), "/tmp/kvmlu-lvip-XXXXXX");
	assert_non_null(mkdtemp(F.save_dir));
	lvram_inplace_set_ops(&fake_ops);
	memset(&D, 0, sizeof(D));
	snprintf(D.name, sizeof(D.name), NAME);
	snprintf(D.uuid, sizeof(D.uuid), UUID);
	D.state = LIBVIRT_DOMAIN_LISTED;
	luo_session_init(&S);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (S.fd >= 0)
		close(S.fd);
	luo_session_init(&S);
	remove_save_dir();
	F.save_dir[0] = '\0';
	lvram_inplace_set_ops(NULL);
	lvram_store_release(UUID);
	return 0;
}

static int prepare(char *err, size_t n)
{
	return lvram_inplace_prepare(NULL, &D, "/run/kvmlu/lv", F.save_dir, &S, err, n);
}

static void file_xxh(int fd, uint64_t size, char hex[17])
{
	char *buf = malloc(size);

	assert_int_equal(pread(fd, buf, size, 0), (ssize_t)size);
	snprintf(hex, 17, "%016" PRIx64, (uint64_t)XXH64(buf, size, 0));
	free(buf);
}

static void prepare_keeps_ram_and_image_in_the_session(void **state)
{
	struct lvram_held_info info;
	struct stat a, b;
	struct fake_sess *f;
	char err[1024], sum[33], hex[17];
	int held;

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	assert_int_equal(D.state, LIBVIRT_DOMAIN_SAVED);
	assert_true(D.in_place);
	assert_string_equal(libvirt_domain_action(&D), "ram-in-place");
	assert_string_equal(libvirt_domain_result(&D), "pending");
	assert_string_equal(D.session, "kvmlu/lv/" UUID);
	assert_true(S.fd >= 0);
	assert_int_equal(D.memory_bytes, RAM);
	assert_int_equal(D.image_bytes, IMAGE);
	assert_int_equal(D.qemu_uid, 64055);
	assert_int_equal(D.image_mode, 0640);
	assert_int_equal(D.image_uid, getuid());
	assert_non_null(strstr(D.image_path, "/web1.save"));
	/* The RAM was in its session before the guest was paused. */
	assert_true(F.session_before_suspend);
	assert_true(D.suspended_ns > 0 && D.saved_ns >= D.suspended_ns);
	assert_non_null(strstr(D.ram, "in place: 4194304 bytes of RAM kept in LUO session "
			       "kvmlu/lv/" UUID ", not written to disk; managed-save image "
			       "98321 bytes"));
	/* The session's RAM is the held memfd itself, and its sum the journal's. */
	f = find(D.session);
	assert_non_null(f);
	assert_int_equal(lvram_store_get(UUID, &held, &info), 0);
	assert_int_equal(fstat(held, &a), 0);
	assert_int_equal(fstat(f->ram_fd, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_dev, b.st_dev);
	close(held);
	assert_int_equal(lvram_sum(f->ram_fd, sum, err, sizeof(err)), 0);
	assert_string_equal(sum, D.checksum);
	assert_string_equal(info.sum, D.checksum);
	/* The image: the file's bytes, sealed against writes. */
	assert_int_equal(fstat(f->image_fd, &b), 0);
	assert_int_equal(b.st_size, IMAGE);
	file_xxh(f->image_fd, IMAGE, hex);
	assert_string_equal(hex, D.image_xxh64);
	assert_int_equal(pwrite(f->image_fd, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
}

/* What crosses the kexec is the journal's JSON: the fields come back equal. */
static void in_place_fields_survive_the_journal(void **state)
{
	struct libvirt_domain_report back[2];
	struct json_object *arr;
	char err[1024];
	unsigned int nr = 0;

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	arr = libvirt_domain_reports_to_json(&D, 1);
	assert_int_equal(libvirt_domain_reports_from_json(arr, back, &nr, err, sizeof(err)), 0);
	json_object_put(arr);
	assert_int_equal(nr, 1);
	assert_true(back[0].in_place);
	assert_string_equal(back[0].session, D.session);
	assert_string_equal(back[0].checksum, D.checksum);
	assert_string_equal(back[0].image_xxh64, D.image_xxh64);
	assert_string_equal(back[0].image_path, D.image_path);
	assert_int_equal(back[0].memory_bytes, D.memory_bytes);
	assert_int_equal(back[0].image_bytes, D.image_bytes);
	assert_int_equal(back[0].qemu_uid, D.qemu_uid);
	assert_int_equal(back[0].image_mode, D.image_mode);
	assert_string_equal(libvirt_domain_action(&back[0]), "ram-in-place");
}

static void expect_entry_refused(const char *from, const char *to, const char *want)
{
	struct libvirt_domain_report back[2];
	struct json_object *arr;
	char text[8192], err[512];
	const char *s;
	unsigned int nr = 0;
	char *at;

	arr = libvirt_domain_reports_to_json(&D, 1);
	s = json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	at = strstr(s, from);
	assert_non_null(at);
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
	json_object_put(arr);
	arr = json_tokener_parse(text);
	assert_non_null(arr);
	assert_int_equal(libvirt_domain_reports_from_json(arr, back, &nr, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(nr, 0);
	json_object_put(arr);
	if (!strstr(err, want))
		fail_msg("refused with \"%s\", not \"%s\"", err, want);
}

static void journal_refuses_bad_in_place_fields(void **state)
{
	char err[1024], from[1100], to[1100];

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	expect_entry_refused("\"session\":\"kvmlu/lv/6f1b", "\"session\":\"kvmlu/lv/7f1b",
			     "is not kvmlu/lv/<its uuid>");
	expect_entry_refused("\"session\":\"kvmlu/lv/", "\"session\":\"kvmlu/vm/", "kvmlu/lv/");
	snprintf(from, sizeof(from), "\"checksum\":\"%s\"", D.checksum);
	snprintf(to, sizeof(to), "\"checksum\":\"Z%s\"", D.checksum + 1);
	expect_entry_refused(from, to, "hex");
	snprintf(from, sizeof(from), "\"image_xxh64\":\"%s\"", D.image_xxh64);
	snprintf(to, sizeof(to), "\"image_xxh64\":\"%.15s\"", D.image_xxh64);
	expect_entry_refused(from, to, "hex");
	expect_entry_refused("\"in_place\":true", "\"in_place\":false", "in_place not true");
	expect_entry_refused("\"in_place\":true,", "", "without in_place");
	expect_entry_refused("\"memory_bytes\":4194304", "\"memory_bytes\":4194305",
			     "out of range");
	expect_entry_refused("\"image_path\":\"/", "\"image_path\":\"", "out of range");
	expect_entry_refused("\"qemu_uid\":64055", "\"qemu_uid\":4294967296", "too big");
	expect_entry_refused("\"image_bytes\":98321", "\"image_bytes\":\"98321\"", "not a time");
	/* Saved in place, the next kernel restores from it: nothing may be missing. */
	snprintf(from, sizeof(from), "\"image_xxh64\":\"%s\",", D.image_xxh64);
	expect_entry_refused(from, "", "saved in place without its session, checksum");
	expect_entry_refused("\"memory_bytes\":4194304,", "", "saved in place without");
}

/* A prepare that failed midway and was rolled back still reads back, in place. */
static void partial_in_place_entry_reads_back(void **state)
{
	struct libvirt_domain_report back[2];
	struct json_object *arr;
	char err[1024];
	unsigned int nr = 0;

	(void)state;
	F.save_writes_image = false;
	assert_int_equal(prepare(err, sizeof(err)), -ENOENT);
	assert_int_equal(lvram_inplace_rollback(NULL, &D, "/run/kvmlu/lv", &S, err, sizeof(err)), 0);
	arr = libvirt_domain_reports_to_json(&D, 1);
	if (libvirt_domain_reports_from_json(arr, back, &nr, err, sizeof(err)))
		fail_msg("refused: %s", err);
	json_object_put(arr);
	assert_true(back[0].in_place);
	assert_int_equal(back[0].state, LIBVIRT_DOMAIN_RESUMED);
	assert_string_equal(libvirt_domain_action(&back[0]), "ram-in-place");
	assert_string_equal(back[0].image_xxh64, "");
	assert_non_null(strstr(back[0].error, "libvirt_save_dir"));
}

static void prepare_save_failing_leaves_nothing_held(void **state)
{
	char err[1024];

	(void)state;
	F.save_rc = -EIO;
	assert_int_equal(prepare(err, sizeof(err)), -EIO);
	assert_int_equal(D.state, LIBVIRT_DOMAIN_FAILED);
	assert_false(D.in_place);
	assert_non_null(strstr(D.error, "virDomainManagedSave: fake; it runs on its old QEMU"));
	assert_non_null(strstr(err, "libvirt domain web1: "));
	/* Running on its old QEMU: the session that had its RAM is let go. */
	assert_true(F.session_before_suspend);
	assert_true(S.fd < 0);
	assert_null(find("kvmlu/lv/" UUID));
	assert_string_equal(D.session, "");
	/* LUO refusing the RAM: nothing suspended, nothing held, nothing kept. */
	setup(NULL);
	F.fail_create = -ENODEV;
	assert_int_equal(prepare(err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(D.error, "CREATE_SESSION: fake refusal (nothing suspended)"));
	assert_int_equal(D.state, LIBVIRT_DOMAIN_FAILED);
	assert_false(lvram_store_held(UUID));
	assert_null(find("kvmlu/lv/" UUID));
}

/* After the save every failure leaves it saved in place: the rollback restarts it. */
static void prepare_failing_after_the_save_is_rolled_back(void **state)
{
	char err[1024];

	(void)state;
	F.save_writes_image = false;
	assert_int_equal(prepare(err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "web1.save"));
	assert_non_null(strstr(err, "libvirt_save_dir"));
	assert_int_equal(D.state, LIBVIRT_DOMAIN_SAVED);
	assert_true(D.in_place);
	assert_true(S.fd < 0);
	assert_true(lvram_store_held(UUID));
	assert_int_equal(lvram_inplace_rollback(NULL, &D, "/run/kvmlu/lv", &S, err, sizeof(err)), 0);
	assert_int_equal(F.restarts, 1);
	assert_true(F.restart_saw_held);
	assert_int_equal(D.state, LIBVIRT_DOMAIN_RESUMED);
	assert_string_equal(libvirt_domain_result(&D), "ok");
	assert_true(libvirt_domain_downtime_ns(&D) >= 0);
}

static void prepare_refuses_an_image_with_the_ram(void **state)
{
	char err[1024];

	(void)state;
	F.image_size = RAM;
	assert_int_equal(prepare(err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "the RAM went to disk"));
	assert_int_equal(D.state, LIBVIRT_DOMAIN_SAVED);
	assert_null(find("kvmlu/lv/" UUID));
}

static void prepare_luo_refusing_unpreserves(void **state)
{
	char err[1024];

	(void)state;
	F.fail_preserve = -ENOENT;
	assert_int_equal(prepare(err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "PRESERVE_FD: fake refusal"));
	/* Closed before the kexec: the kernel let go of the RAM it had taken. */
	assert_true(F.session_before_suspend);
	assert_true(S.fd < 0);
	assert_null(find("kvmlu/lv/" UUID));
	/* Saved in place with its RAM held: the rollback runs it again. */
	assert_int_equal(D.state, LIBVIRT_DOMAIN_SAVED);
	assert_true(lvram_store_held(UUID));
	assert_int_equal(lvram_inplace_rollback(NULL, &D, "/run/kvmlu/lv", &S, err, sizeof(err)), 0);
	assert_int_equal(D.state, LIBVIRT_DOMAIN_RESUMED);
	assert_int_equal(F.restarts, 1);
}

static void rollback_unpreserves_and_restarts_from_held_ram(void **state)
{
	char err[1024];

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	assert_non_null(find(D.session));
	assert_int_equal(lvram_inplace_rollback(NULL, &D, "/run/kvmlu/lv", &S, err, sizeof(err)), 0);
	assert_null(find(D.session));
	assert_true(S.fd < 0);
	assert_int_equal(F.restarts, 1);
	assert_true(F.restart_saw_held);
	assert_false(F.restart_verified);	/* same kernel: restart_and_verify hashes again */
	assert_int_equal(D.state, LIBVIRT_DOMAIN_RESUMED);
	/* A restart that fails: failed, with its words. */
	setup(NULL);
	assert_int_equal(prepare(err, sizeof(err)), 0);
	F.restart_rc = -EIO;
	assert_int_equal(lvram_inplace_rollback(NULL, &D, "/run/kvmlu/lv", &S, err, sizeof(err)),
			 -EIO);
	assert_int_equal(D.state, LIBVIRT_DOMAIN_FAILED);
	assert_non_null(strstr(D.error, "kvmlu domain-replace-qemu web1"));
}

static void restore_brings_it_back_from_the_session(void **state)
{
	struct stat st;
	char err[1024], path[128], hex[17];
	int fd;

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	fake_kexec(&S);
	/* The file system of the image did not survive. */
	image_path(path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	assert_false(lvram_store_held(UUID));
	assert_int_equal(lvram_inplace_restore(NULL, &D, "/run/kvmlu/lv", err, sizeof(err)), 0);
	assert_int_equal(D.state, LIBVIRT_DOMAIN_RESTORED);
	assert_string_equal(libvirt_domain_result(&D), "ok");
	assert_string_equal(D.checksum_after, D.checksum);
	assert_int_equal(F.restarts, 1);
	assert_true(F.restart_verified);	/* hashed before the start: not again */
	assert_true(F.restart_saw_held);	/* the wrapper gets it from the store */
	assert_null(find(D.session));		/* finished and closed */
	assert_non_null(strstr(D.ram, "in place: 4194304 bytes of RAM kept across the kexec in "
			       "LUO session kvmlu/lv/" UUID));
	assert_non_null(strstr(D.ram, "equal before the guest ran"));
	/* The image is back where libvirt reads it, as it was. */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, IMAGE);
	assert_int_equal(st.st_mode & 07777, 0640);
	file_xxh(fd, IMAGE, hex);
	close(fd);
	assert_string_equal(hex, D.image_xxh64);
}

/* wall_ns of the next "kvmlu-agent: web1: phase WHAT wall_ns=" from *from on; 0 if none. */
static uint64_t phase_at(const char *what, const char **from)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "kvmlu-agent: web1: phase %s wall_ns=", what);
	p = strstr(*from, key);
	if (!p)
		return 0;
	*from = p + strlen(key);
	return strtoull(*from, NULL, 10);
}

/*
 * The restore's phase lines, which tests/bench/bench_libvirt_ram.sh reads
 * for where the blackout went: in order, each between the clock before
 * and after.
 */
static void restore_logs_its_phases_in_order(void **state)
{
	char err[1024], path[128], log[4096];
	const char *at = log;
	uint64_t t0, t1, r, rd, h;
	int saved_err;
	FILE *cap;
	ssize_t n;

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	fake_kexec(&S);
	image_path(path, sizeof(path));
	unlink(path);
	cap = tmpfile();
	assert_non_null(cap);
	fflush(stderr);
	saved_err = dup(2);
	assert_true(saved_err >= 0);
	assert_int_equal(dup2(fileno(cap), 2), 2);
	t0 = kvmlu_wall_ns();
	assert_int_equal(lvram_inplace_restore(NULL, &D, "/run/kvmlu/lv", err, sizeof(err)), 0);
	t1 = kvmlu_wall_ns();
	fflush(stderr);
	assert_int_equal(dup2(saved_err, 2), 2);
	close(saved_err);
	n = pread(fileno(cap), log, sizeof(log) - 1, 0);
	fclose(cap);
	assert_true(n > 0);
	log[n] = '\0';
	r = phase_at("retrieve", &at);
	rd = phase_at("retrieved", &at);
	h = phase_at("hashed", &at);
	assert_true(r >= t0 && r <= rd && rd <= h && h <= t1);
}

static void restore_never_runs_changed_ram(void **state)
{
	struct fake_sess *f;
	char err[1024], path[128];
	unsigned char b;

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	fake_kexec(&S);
	image_path(path, sizeof(path));
	unlink(path);
	f = find(D.session);
	assert_int_equal(pread(f->ram_fd, &b, 1, 3 * MIB + 5), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(f->ram_fd, &b, 1, 3 * MIB + 5), 1);
	assert_int_equal(lvram_inplace_restore(NULL, &D, "/run/kvmlu/lv", err, sizeof(err)), -EIO);
	assert_int_equal(D.state, LIBVIRT_DOMAIN_FAILED);
	assert_int_equal(F.restarts, 0);
	assert_false(lvram_store_held(UUID));
	assert_string_not_equal(D.checksum_after, D.checksum);
	assert_non_null(strstr(D.error, "its RAM differs from the pause (checksum "));
	assert_non_null(strstr(D.error, D.checksum));
	assert_non_null(strstr(D.error, D.checksum_after));
	assert_non_null(strstr(D.error, "Not started, never run on RAM that is not verified, "
			       "nothing cold-booted; virsh managedsave-remove web1, then virsh "
			       "start web1 boots it afresh"));
	/* Nothing written back for libvirt to restore from. */
	assert_int_equal(access(path, F_OK), -1);
}

static void restore_without_session_starts_nothing(void **state)
{
	char err[1024];

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	/* The agent's session closed before the kexec: the kernel kept nothing. */
	f_close(&S);
	fake_kexec(&S);
	assert_int_equal(lvram_inplace_restore(NULL, &D, "/run/kvmlu/lv", err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(D.state, LIBVIRT_DOMAIN_FAILED);
	assert_int_equal(F.restarts, 0);
	assert_non_null(strstr(D.error, "its LUO session kvmlu/lv/" UUID ": RETRIEVE_SESSION"));
	assert_non_null(strstr(D.error, "Not started, nothing cold-booted"));
	assert_non_null(strstr(err, "libvirt domain web1: "));
}

static void restore_refuses_another_image(void **state)
{
	struct fake_sess *f;
	char err[1024];
	int other;

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	fake_kexec(&S);
	f = find(D.session);
	other = memfd_pattern(IMAGE, 1);
	close(f->image_fd);
	f->image_fd = other;
	assert_int_equal(lvram_inplace_restore(NULL, &D, "/run/kvmlu/lv", err, sizeof(err)), -EIO);
	assert_non_null(strstr(D.error, "its image from the session differs from the one saved"));
	assert_int_equal(F.restarts, 0);
	/* A RAM of the wrong size is refused the same way. */
	setup(NULL);
	assert_int_equal(prepare(err, sizeof(err)), 0);
	fake_kexec(&S);
	f = find(D.session);
	assert_int_equal(ftruncate(f->ram_fd, RAM + 4096), 0);
	assert_int_equal(lvram_inplace_restore(NULL, &D, "/run/kvmlu/lv", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(D.error, "its RAM from the session has 4198400 bytes"));
	assert_int_equal(F.restarts, 0);
}

/* A start that fails keeps the RAM held: domain-replace-qemu retries it. */
static void restore_start_failing_keeps_ram_held(void **state)
{
	char err[1024];

	(void)state;
	assert_int_equal(prepare(err, sizeof(err)), 0);
	fake_kexec(&S);
	F.restart_rc = -EIO;
	assert_int_equal(lvram_inplace_restore(NULL, &D, "/run/kvmlu/lv", err, sizeof(err)), -EIO);
	assert_int_equal(D.state, LIBVIRT_DOMAIN_FAILED);
	assert_true(lvram_store_held(UUID));
	assert_non_null(strstr(D.error, "kvmlu domain-replace-qemu web1"));
	/* Someone started it afresh meanwhile: the RAM is let go. */
	setup(NULL);
	assert_int_equal(prepare(err, sizeof(err)), 0);
	fake_kexec(&S);
	F.restart_rc = -EEXIST;
	assert_int_equal(lvram_inplace_restore(NULL, &D, "/run/kvmlu/lv", err, sizeof(err)),
			 -EEXIST);
	assert_false(lvram_store_held(UUID));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(prepare_keeps_ram_and_image_in_the_session, setup,
						teardown),
		cmocka_unit_test_setup_teardown(in_place_fields_survive_the_journal, setup,
						teardown),
		cmocka_unit_test_setup_teardown(journal_refuses_bad_in_place_fields, setup,
						teardown),
		cmocka_unit_test_setup_teardown(partial_in_place_entry_reads_back, setup, teardown),
		cmocka_unit_test_setup_teardown(prepare_save_failing_leaves_nothing_held, setup,
						teardown),
		cmocka_unit_test_setup_teardown(prepare_failing_after_the_save_is_rolled_back,
						setup, teardown),
		cmocka_unit_test_setup_teardown(prepare_refuses_an_image_with_the_ram, setup,
						teardown),
		cmocka_unit_test_setup_teardown(prepare_luo_refusing_unpreserves, setup, teardown),
		cmocka_unit_test_setup_teardown(rollback_unpreserves_and_restarts_from_held_ram,
						setup, teardown),
		cmocka_unit_test_setup_teardown(restore_brings_it_back_from_the_session, setup,
						teardown),
		cmocka_unit_test_setup_teardown(restore_logs_its_phases_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(restore_never_runs_changed_ram, setup, teardown),
		cmocka_unit_test_setup_teardown(restore_without_session_starts_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(restore_refuses_another_image, setup, teardown),
		cmocka_unit_test_setup_teardown(restore_start_failing_keeps_ram_held, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
