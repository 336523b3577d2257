// SPDX-License-Identifier: GPL-2.0
/*
 * agent/libvirt/libvirt_domains.c and the hook against a REAL libvirt daemon: the
 * test starts its own libvirtd in session mode (as nobody when run as
 * root) with every directory in a temp dir, so neither the system daemon
 * nor its socket is touched, and runs a tiny QEMU/TCG domain (32 MiB, no
 * disk: SeaBIOS finds nothing to boot and waits, which is all it needs).
 * The hook is installed into that daemon's hooks dir and talks to a fake
 * agent socket served by a thread here.
 *
 * Without libvirtd or QEMU, or if the daemon does not come up, the live
 * cases are skipped with the reason; the JSON round trip always runs.
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
#include <grp.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/daemon/agent_restore.h"
#include "agent/journal/journal_store.h"
#include "agent/libvirt/libvirt_domains.h"
#include "agent/libvirt/libvirt_metadata.h"
#include "agent/libvirt/libvirt_update.h"
#include "agent/libvirt/lvram_inplace.h"
#include "agent/libvirt/lvram_server.h"
#include "agent/libvirt/lvram_store.h"
#include "agent/libvirt/qemu_ram_fd.h"
#include "agent/update/update_machine.h"

#define LIBVIRTD	"/usr/sbin/libvirtd"
#define QEMU		"/usr/bin/qemu-system-x86_64"
#define HOOK_BIN	"build/san/bin/kvmlu-libvirt-hook"
#define WRAPPER_BIN	"build/san/bin/kvmlu-qemu"
#define IP_NAME		"kvmlu-lv-inplace"
#define NOBODY		65534
#define DOM_NAME	"kvmlu-lv-test"
#define WAIT_STEPS	600	/* of 50 ms: how long the daemon may take to appear */
#define MAX_EVENTS	256

struct live {
	char dir[64];
	char sock[PATH_MAX], uri[PATH_MAX + 64];
	char agent_sock[108];
	pid_t daemon;
	bool hook_installed;
	bool hooks_bound;		/* the daemon sees dir/hooks as /etc/libvirt/hooks */
	const char *skip;		/* why the live cases cannot run */
	/* fake agent */
	int listen_fd;
	pthread_t thread;
	volatile bool stop;
	pthread_mutex_t lock;
	unsigned int nr_events;
	char events[MAX_EVENTS][160];	/* "op sub domain uuid" */
};

static struct live L = { .lock = PTHREAD_MUTEX_INITIALIZER, .listen_fd = -1 };
/* Static: a failed assertion longjmps out of the case, past any free(). */
static struct libvirt_domains set_a, set_b;

static struct libvirt_domains *fresh(struct libvirt_domains *s)
{
	libvirt_domains_close(s);
	memset(s, 0, sizeof(*s));
	return s;
}

static void quiet(void *arg, virErrorPtr e)
{
	(void)arg;
	(void)e;
}

/* ---- fake agent: records every libvirt-event line's args, answers ok ---- */

static void record(const char *line)
{
	struct json_object *o = json_tokener_parse(line), *v, *args = NULL;
	const char *f[4] = { "?", "?", "?", "?" };
	static const char *const keys[4] = { "op", "sub", "domain", "uuid" };

	if (!o)
		return;
	json_object_object_get_ex(o, "args", &args);
	for (int i = 0; i < 4; i++)
		if (args && json_object_object_get_ex(args, keys[i], &v))
			f[i] = json_object_get_string(v);
	pthread_mutex_lock(&L.lock);
	if (L.nr_events < MAX_EVENTS)
		snprintf(L.events[L.nr_events++], sizeof(L.events[0]), "%s %s %s %s", f[0], f[1],
			 f[2], f[3]);
	pthread_mutex_unlock(&L.lock);
	json_object_put(o);
}

static void *agent_thread(void *arg)
{
	static const char reply[] = "{\"ok\":true,\"return\":{},\"id\":1}\n";

	(void)arg;
	while (!L.stop) {
		struct pollfd p = { .fd = L.listen_fd, .events = POLLIN };
		char buf[8192];
		size_t have = 0;
		int c;

		if (poll(&p, 1, 100) <= 0)
			continue;
		c = accept(L.listen_fd, NULL, NULL);
		if (c < 0)
			continue;
		for (;;) {
			struct pollfd q = { .fd = c, .events = POLLIN };
			ssize_t n;

			if (poll(&q, 1, 2000) <= 0)
				break;
			n = read(c, buf + have, sizeof(buf) - 1 - have);
			if (n <= 0)
				break;
			have += (size_t)n;
			buf[have] = '\0';
			if (strchr(buf, '\n') || have == sizeof(buf) - 1)
				break;
		}
		if (have) {
			record(buf);
			if (write(c, reply, sizeof(reply) - 1) < 0)
				break;
		}
		close(c);
	}
	return NULL;
}

static int count_events(const char *op, const char *sub)
{
	char want[64];
	int n = 0;

	snprintf(want, sizeof(want), "%s %s " DOM_NAME " ", op, sub);
	pthread_mutex_lock(&L.lock);
	for (unsigned int i = 0; i < L.nr_events; i++)
		n += !strncmp(L.events[i], want, strlen(want));
	pthread_mutex_unlock(&L.lock);
	return n;
}

/* Hooks run after libvirt's call returns or just before: allow them a moment. */
static bool wait_event(const char *op, const char *sub, int at_least)
{
	for (int i = 0; i < 200; i++) {
		if (count_events(op, sub) >= at_least)
			return true;
		usleep(50000);
	}
	return false;
}

static int agent_start(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(L.agent_sock, sizeof(L.agent_sock), "%s/agent.sock", L.dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", L.agent_sock);
	L.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (L.listen_fd < 0 || bind(L.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(L.listen_fd, 16))
		return -errno;
	/* The hook runs as the daemon's user. */
	chmod(L.agent_sock, 0777);
	return pthread_create(&L.thread, NULL, agent_thread, NULL) ? -EAGAIN : 0;
}

/* ---- the private daemon ---- */

static int write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
	return 0;
}

static void mkdirs(const char *sub)
{
	char p[PATH_MAX], *s;

	snprintf(p, sizeof(p), "%s/%s", L.dir, sub);
	for (s = p + strlen(L.dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

static void chown_tree(const char *path)
{
	char cmd[PATH_MAX + 64];

	/* Test setup only: the daemon's user must own its directories. */
	snprintf(cmd, sizeof(cmd), "chown -R %d:%d '%s'", NOBODY, NOBODY, path);
	if (system(cmd))
		fprintf(stderr, "chown of %s failed\n", path);
}

static int install_hook(void)
{
	char bin[PATH_MAX], path[PATH_MAX], cfg[PATH_MAX], text[3 * PATH_MAX];

	if (!realpath(HOOK_BIN, bin))
		return -errno;
	snprintf(cfg, sizeof(cfg), "%s/agent.json", L.dir);
	snprintf(text, sizeof(text), "{\"socket\":\"%s\"}\n", L.agent_sock);
	if (write_file(cfg, text, 0644))
		return -EIO;
	/* libvirt clears the environment of hooks: the wrapper sets the config. */
	snprintf(path, sizeof(path), "%s/hooks/qemu.d/kvmlu", L.dir);
	snprintf(text, sizeof(text),
		 "#!/bin/sh\nKVMLU_AGENT_CONFIG=%s ASAN_OPTIONS=detect_leaks=1 exec %s \"$@\" 2>>%s/hook.log\n",
		 cfg, bin, L.dir);
	return write_file(path, text, 0755);
}

static void daemon_child(void)
{
	char buf[PATH_MAX];
	int fd;

	snprintf(buf, sizeof(buf), "%s/daemon.log", L.dir);
	fd = open(buf, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	/*
	 * libvirt's hooks dir is fixed at /etc/libvirt/hooks: in a mount
	 * namespace of its own this daemon sees the test's dir there, and the
	 * host's /etc stays untouched.
	 */
	if (geteuid() == 0) {
		char hooks[PATH_MAX], mark[PATH_MAX];

		snprintf(hooks, sizeof(hooks), "%s/hooks", L.dir);
		snprintf(mark, sizeof(mark), "%s/hooks-bound", L.dir);
		if (!unshare(CLONE_NEWNS) && !mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) &&
		    !mount(hooks, "/etc/libvirt/hooks", NULL, MS_BIND, NULL))
			close(open(mark, O_WRONLY | O_CREAT, 0644));
		else
			fprintf(stderr, "hooks dir not bound: %s\n", strerror(errno));
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(126);
	}
	clearenv();
	setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
	setenv("HOME", L.dir, 1);
	snprintf(buf, sizeof(buf), "%s/run", L.dir);
	setenv("XDG_RUNTIME_DIR", buf, 1);
	snprintf(buf, sizeof(buf), "%s/config", L.dir);
	setenv("XDG_CONFIG_HOME", buf, 1);
	snprintf(buf, sizeof(buf), "%s/cache", L.dir);
	setenv("XDG_CACHE_HOME", buf, 1);
	execl(LIBVIRTD, "libvirtd", (char *)NULL);
	_exit(127);
}

static int daemon_start(void)
{
	virConnectPtr c = NULL;
	char mark[PATH_MAX];

	L.daemon = fork();
	if (L.daemon < 0)
		return -errno;
	if (L.daemon == 0)
		daemon_child();
	for (int i = 0; i < WAIT_STEPS && !c; i++) {
		int st;

		if (waitpid(L.daemon, &st, WNOHANG) == L.daemon) {
			L.daemon = 0;
			return -ECHILD;
		}
		if (!access(L.sock, F_OK))
			c = virConnectOpen(L.uri);
		if (!c)
			usleep(50000);
	}
	if (!c)
		return -ETIMEDOUT;
	virConnectClose(c);
	snprintf(mark, sizeof(mark), "%s/hooks-bound", L.dir);
	L.hooks_bound = !access(mark, F_OK);
	return 0;
}

static void daemon_stop(void)
{
	if (L.daemon <= 0)
		return;
	kill(L.daemon, SIGTERM);
	waitpid(L.daemon, NULL, 0);
	L.daemon = 0;
}

static const char dom_xml[] =
	"<domain type='qemu'><name>" DOM_NAME "</name>"
	"<memory unit='MiB'>32</memory><vcpu>1</vcpu>"
	"<os><type arch='x86_64' machine='pc'>hvm</type></os>"
	"<devices><emulator>" QEMU "</emulator>"
	"<video><model type='none'/></video><memballoon model='none'/></devices></domain>";

static virConnectPtr conn(void)
{
	virConnectPtr c = virConnectOpen(L.uri);

	assert_non_null(c);
	return c;
}

static int dom_state(virConnectPtr c, char uuid[VIR_UUID_STRING_BUFLEN])
{
	virDomainPtr d = virDomainLookupByName(c, DOM_NAME);
	int st = -1, reason;

	assert_non_null(d);
	assert_int_equal(virDomainGetState(d, &st, &reason, 0), 0);
	if (uuid)
		assert_int_equal(virDomainGetUUIDString(d, uuid), 0);
	virDomainFree(d);
	return st;
}

static int has_managed_save(virConnectPtr c)
{
	virDomainPtr d = virDomainLookupByName(c, DOM_NAME);
	int has;

	assert_non_null(d);
	has = virDomainHasManagedSaveImage(d, 0);
	virDomainFree(d);
	return has;
}

static int group_setup(void **state)
{
	virConnectPtr c;
	virDomainPtr d;
	int ret;

	(void)state;
	virSetErrorFunc(NULL, quiet);
	if (access(LIBVIRTD, X_OK)) {
		L.skip = "no " LIBVIRTD " (libvirt-daemon-system not installed)";
		return 0;
	}
	if (access(QEMU, X_OK)) {
		L.skip = "no " QEMU;
		return 0;
	}
	snprintf(L.dir, sizeof(L.dir), "/tmp/kvmlu-libvirt-XXXXXX");
	if (!mkdtemp(L.dir)) {
		L.skip = "mkdtemp failed";
		return 0;
	}
	chmod(L.dir, 0755);
	mkdirs("config/libvirt");
	mkdirs("hooks/qemu.d");
	mkdirs("run");
	mkdirs("cache");
	snprintf(L.sock, sizeof(L.sock), "%s/run/libvirt/libvirt-sock", L.dir);
	snprintf(L.uri, sizeof(L.uri), "qemu+unix:///session?socket=%s", L.sock);
	if (agent_start()) {
		L.skip = "fake agent socket could not be set up";
		return 0;
	}
	/* QEMU's output to a file: no virtlogd left behind by the test. */
	snprintf(L.sock, sizeof(L.sock), "%s/config/libvirt/qemu.conf", L.dir);
	write_file(L.sock, "stdio_handler = \"file\"\n", 0644);
	snprintf(L.sock, sizeof(L.sock), "%s/run/libvirt/libvirt-sock", L.dir);
	L.hook_installed = !install_hook();
	if (geteuid() == 0)
		chown_tree(L.dir);
	chmod(L.dir, 0755);
	ret = daemon_start();
	if (ret) {
		fprintf(stderr, "libvirtd did not come up: %s, see %s/daemon.log\n", strerror(-ret),
			L.dir);
		L.skip = "the private libvirtd did not start (see its daemon.log)";
		return 0;
	}
	c = conn();
	d = virDomainDefineXML(c, dom_xml);
	if (!d || virDomainCreate(d) < 0) {
		fprintf(stderr, "domain start: %s\n", virGetLastErrorMessage());
		L.skip = "the QEMU/TCG test domain does not start under the private libvirtd";
	}
	if (d)
		virDomainFree(d);
	virConnectClose(c);
	return 0;
}

static int group_teardown(void **state)
{
	virConnectPtr c;
	char cmd[128];

	(void)state;
	if (L.daemon > 0 && (c = virConnectOpen(L.uri))) {
		virDomainPtr d = virDomainLookupByName(c, DOM_NAME);

		if (d) {
			virDomainDestroy(d);
			virDomainUndefineFlags(d, VIR_DOMAIN_UNDEFINE_MANAGED_SAVE);
			virDomainFree(d);
		}
		virConnectClose(c);
	}
	daemon_stop();
	L.stop = true;
	if (L.listen_fd >= 0) {
		pthread_join(L.thread, NULL);
		close(L.listen_fd);
	}
	if (L.dir[0] && !getenv("KVMLU_KEEP_TMP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", L.dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", L.dir);
	}
	return 0;
}

#define NEED_LIVE()							\
	do {								\
		if (L.skip) {						\
			fprintf(stderr, "SKIP: %s\n", L.skip);		\
			skip();						\
		}							\
	} while (0)

static void prepare_ok(struct libvirt_domains *s, bool dry_run, char *err, size_t len)
{
	int ret = libvirt_domains_prepare(s, dry_run, err, len);

	if (ret)
		fail_msg("libvirt_domains_prepare: %d %s", ret, err);
}

static struct libvirt_domain_report *find(struct libvirt_domains *s)
{
	for (unsigned int i = 0; i < s->nr; i++)
		if (!strcmp(s->d[i].name, DOM_NAME))
			return &s->d[i];
	fail_msg("domain %s not in the set", DOM_NAME);
	return NULL;
}

static void test_libvirt_hook_hears_a_real_domain_start_and_reconnect(void **state)
{
	char uuid[VIR_UUID_STRING_BUFLEN], want[128];
	virConnectPtr c;
	bool seen = false;

	(void)state;
	NEED_LIVE();
	if (!L.hook_installed) {
		fprintf(stderr, "SKIP: %s not built\n", HOOK_BIN);
		skip();
	}
	if (!L.hooks_bound) {
		fprintf(stderr, "SKIP: no mount namespace to show the daemon the test's hooks dir (needs root)\n");
		skip();
	}
	c = conn();
	assert_int_equal(dom_state(c, uuid), VIR_DOMAIN_RUNNING);
	virConnectClose(c);
	assert_true(wait_event("start", "begin", 1));
	assert_true(wait_event("started", "begin", 1));
	/* prepare is not reported: nothing runs yet then. */
	assert_int_equal(count_events("prepare", "begin"), 0);
	snprintf(want, sizeof(want), "started begin " DOM_NAME " %s", uuid);
	pthread_mutex_lock(&L.lock);
	for (unsigned int i = 0; i < L.nr_events; i++)
		seen |= !strcmp(L.events[i], want);
	pthread_mutex_unlock(&L.lock);
	assert_true(seen);

	/* A daemon restarted under a running domain reconnects to it. */
	daemon_stop();
	assert_int_equal(daemon_start(), 0);
	assert_true(wait_event("reconnect", "begin", 1));
	c = conn();
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_RUNNING);
	virConnectClose(c);
}

static void test_libvirt_dry_run_suspends_and_resumes_the_domain(void **state)
{
	struct libvirt_domains *s = fresh(&set_a);
	struct libvirt_domain_report *d;
	virConnectPtr c;
	char err[512];

	(void)state;
	NEED_LIVE();
	assert_int_equal(libvirt_domains_open(s, L.uri, err, sizeof(err)), 0);
	prepare_ok(s, true, err, sizeof(err));
	d = find(s);
	assert_int_equal(d->state, LIBVIRT_DOMAIN_RESUMED);
	/* Judged on its live XML: a TCG domain without memfd, not the wrapper's. */
	if (strncmp(d->ram, "managed save, RAM would go to disk: no shared memfd backing", 59) ||
	    !strstr(d->ram, "kvmlu-qemu") || !strstr(d->ram, "not a KVM domain"))
		fail_msg("ram verdict \"%s\"", d->ram);
	assert_true(d->suspended_ns > 0);
	assert_true(libvirt_domain_downtime_ns(d) >= 0);
	assert_int_equal(d->saved_ns, 0);
	libvirt_domains_close(s);
	c = conn();
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_RUNNING);
	assert_int_equal(has_managed_save(c), 0);
	virConnectClose(c);
}

static void test_libvirt_failed_save_resumes_the_domain_and_stops(void **state)
{
	struct libvirt_domains *s = fresh(&set_a);
	struct libvirt_domain_report *d;
	char err[512], save_dir[PATH_MAX];
	virConnectPtr c;
	int ret;

	(void)state;
	NEED_LIVE();
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: needs root to make the daemon's save dir unwritable\n");
		skip();
	}
	/* The daemon (nobody) cannot write its managed save: virDomainManagedSave fails. */
	snprintf(save_dir, sizeof(save_dir), "%s/config/libvirt/qemu/save", L.dir);
	assert_int_equal(chown(save_dir, 0, 0), 0);
	assert_int_equal(chmod(save_dir, 0755), 0);
	assert_int_equal(libvirt_domains_open(s, L.uri, err, sizeof(err)), 0);
	ret = libvirt_domains_prepare(s, false, err, sizeof(err));
	assert_int_equal(chown(save_dir, NOBODY, NOBODY), 0);
	assert_int_not_equal(ret, 0);
	assert_non_null(strstr(err, DOM_NAME));
	assert_non_null(strstr(err, "virDomainManagedSave"));
	d = find(s);
	assert_int_equal(d->state, LIBVIRT_DOMAIN_FAILED);
	if (d->resumed_ns < d->suspended_ns)
		fail_msg("not resumed after the failed save: %s", d->error);
	libvirt_domains_close(s);
	c = conn();
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_RUNNING);
	assert_int_equal(has_managed_save(c), 0);
	virConnectClose(c);
}

static void test_libvirt_optout_domain_is_left_alone(void **state)
{
	struct libvirt_domains *s = fresh(&set_a);
	virConnectPtr c;
	virDomainPtr dom;
	char err[512];

	(void)state;
	NEED_LIVE();
	c = conn();
	dom = virDomainLookupByName(c, DOM_NAME);
	assert_non_null(dom);
	assert_int_equal(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT,
					      "<config optout='yes'/>", LIBVIRT_METADATA_PREFIX,
					      LIBVIRT_METADATA_NS, VIR_DOMAIN_AFFECT_LIVE), 0);
	assert_int_equal(libvirt_domains_open(s, L.uri, err, sizeof(err)), 0);
	prepare_ok(s, false, err, sizeof(err));
	assert_int_equal(find(s)->state, LIBVIRT_DOMAIN_OPTED_OUT);
	assert_int_equal(find(s)->suspended_ns, 0);
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_RUNNING);
	assert_int_equal(has_managed_save(c), 0);
	/* Back to managed for the next case. */
	assert_int_equal(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, NULL, NULL,
					      LIBVIRT_METADATA_NS, VIR_DOMAIN_AFFECT_LIVE), 0);
	virDomainFree(dom);
	virConnectClose(c);
	libvirt_domains_close(s);
}

static void test_libvirt_update_brings_the_domain_back_after_a_daemon_restart(void **state)
{
	struct libvirt_domains *s = fresh(&set_a), *next = fresh(&set_b);
	char uuid_before[VIR_UUID_STRING_BUFLEN], uuid_after[VIR_UUID_STRING_BUFLEN];
	struct libvirt_domain_report *d;
	struct json_object *journal;
	const char *text;
	char *journal_text;
	virConnectPtr c;
	char err[512];
	int stopped_before;

	(void)state;
	NEED_LIVE();
	c = conn();
	assert_int_equal(dom_state(c, uuid_before), VIR_DOMAIN_RUNNING);
	virConnectClose(c);
	stopped_before = count_events("stopped", "end");

	/* Before the "kexec": suspend + managed save. */
	assert_int_equal(libvirt_domains_open(s, L.uri, err, sizeof(err)), 0);
	prepare_ok(s, false, err, sizeof(err));
	d = find(s);
	assert_int_equal(d->state, LIBVIRT_DOMAIN_SAVED);
	assert_true(d->saved_ns >= d->suspended_ns);
	c = conn();
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_SHUTOFF);
	assert_int_equal(has_managed_save(c), 1);
	virConnectClose(c);
	/* What the journal would carry across. */
	journal = libvirt_domains_to_json(s);
	assert_non_null(journal);
	text = json_object_to_json_string(journal);
	journal_text = strdup(text);
	json_object_put(journal);
	journal = json_tokener_parse(journal_text);
	free(journal_text);
	assert_non_null(journal);
	libvirt_domains_close(s);

	/* The daemon goes away with the old kernel and comes back with the new. */
	daemon_stop();
	assert_int_equal(daemon_start(), 0);

	assert_int_equal(libvirt_domains_open(next, L.uri, err, sizeof(err)), 0);
	assert_int_equal(libvirt_domains_from_json(journal, next, err, sizeof(err)), 0);
	assert_int_equal(libvirt_domains_restore(next, err, sizeof(err)), 0);
	d = find(next);
	assert_int_equal(d->state, LIBVIRT_DOMAIN_RESTORED);
	assert_string_equal(d->uuid, uuid_before);
	assert_true(libvirt_domain_downtime_ns(d) > 0);
	fprintf(stderr, "libvirt domain downtime %.3f s\n", libvirt_domain_downtime_ns(d) / 1e9);
	c = conn();
	assert_int_equal(dom_state(c, uuid_after), VIR_DOMAIN_RUNNING);
	assert_string_equal(uuid_after, uuid_before);
	/* Started from the image, which is consumed. */
	assert_int_equal(has_managed_save(c), 0);
	virConnectClose(c);
	if (L.hook_installed && L.hooks_bound) {
		assert_true(wait_event("stopped", "end", stopped_before + 1));
		assert_true(wait_event("restore", "begin", 1));
	}
	/* Nothing left to restore: a second restore is a no-op. */
	assert_int_equal(libvirt_domains_restore(next, err, sizeof(err)), 0);
	json_object_put(journal);
	libvirt_domains_close(next);
}

/*
 * libvirtd starts before the agent now: a domain marked autostart comes
 * back from its managed save by libvirt's own hand. The agent finds it
 * running and counts it restored, not failed for a missing image; one
 * that was booted afresh instead is a failure that says the state is lost.
 */
static void test_libvirt_restore_accepts_a_domain_libvirt_restored_first(void **state)
{
	struct libvirt_domains *s = fresh(&set_a);
	struct libvirt_domain_report *d;
	virConnectPtr c;
	virDomainPtr dom;
	char err[512];

	(void)state;
	NEED_LIVE();
	assert_int_equal(libvirt_domains_open(s, L.uri, err, sizeof(err)), 0);
	prepare_ok(s, false, err, sizeof(err));
	d = find(s);
	assert_int_equal(d->state, LIBVIRT_DOMAIN_SAVED);
	/* What autostart does: start it from its managed save. */
	c = conn();
	assert_int_equal(has_managed_save(c), 1);
	dom = virDomainLookupByUUIDString(c, d->uuid);
	assert_non_null(dom);
	assert_int_equal(virDomainCreate(dom), 0);
	virDomainFree(dom);
	assert_int_equal(has_managed_save(c), 0);
	virConnectClose(c);
	assert_int_equal(libvirt_domains_restore(s, err, sizeof(err)), 0);
	assert_int_equal(d->state, LIBVIRT_DOMAIN_RESTORED);
	assert_true(d->resumed_ns > 0);

	libvirt_domains_close(s);

	/* Saved again, then booted afresh (image removed): that is no restore. */
	s = fresh(&set_b);
	assert_int_equal(libvirt_domains_open(s, L.uri, err, sizeof(err)), 0);
	prepare_ok(s, false, err, sizeof(err));
	d = find(s);
	assert_int_equal(d->state, LIBVIRT_DOMAIN_SAVED);
	c = conn();
	dom = virDomainLookupByUUIDString(c, d->uuid);
	assert_non_null(dom);
	assert_int_equal(virDomainManagedSaveRemove(dom, 0), 0);
	assert_int_equal(virDomainCreate(dom), 0);
	virDomainFree(dom);
	virConnectClose(c);
	assert_int_not_equal(libvirt_domains_restore(s, err, sizeof(err)), 0);
	assert_int_equal(d->state, LIBVIRT_DOMAIN_FAILED);
	assert_non_null(strstr(d->error, "not from its managed save"));
	libvirt_domains_close(s);
}

/* ---- through the host-update state machine, the host side faked ---- */

#define GIB (1ULL << 30)

static int64_t m_now(void *c)
{
	struct timespec ts;

	(void)c;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int m_facts(void *c, const struct journal *j, struct host_facts *h, char *err,
		   size_t len)
{
	(void)c, (void)j, (void)err, (void)len;
	h->liveupdate_dev = h->kho_enabled = true;
	h->scratch_bytes = 8 * GIB;
	h->mem_total = h->mem_available = 16 * GIB;
	h->kernel_bytes = 16 << 20;
	return 0;
}

static void m_vm_facts(void *c, const struct journal_vm *vm, struct vm_facts *vf)
{
	(void)c, (void)vm, (void)vf;
}

static int m_ok(void *c, char *err, size_t len)
{
	(void)c, (void)err, (void)len;
	return 0;
}

static int m_load(void *c, const struct journal *j, char *err, size_t len)
{
	(void)c, (void)j, (void)err, (void)len;
	return 0;
}

static bool m_loaded(void *c)
{
	(void)c;
	return false;
}

static int m_vm(void *c, struct journal_vm *vm, char *err, size_t len)
{
	(void)c, (void)vm, (void)err, (void)len;
	return 0;
}

static int m_save(void *c, const struct journal *j)
{
	(void)c, (void)j;
	return 0;
}

static void m_void(void *c)
{
	(void)c;
}

static struct libvirt_update lvu;
static struct journal mj;
static struct agent_config mcfg;

static void machine_ops(struct update_ops *ops)
{
	char err[256], state_file[PATH_MAX];

	snprintf(state_file, sizeof(state_file), "%s/libvirt-domains.json", L.dir);
	assert_int_equal(libvirt_update_init(&lvu, L.uri, state_file, err, sizeof(err)), 0);
	agent_config_defaults(&mcfg);
	*ops = (struct update_ops){
		.ctx = NULL, .cfg = &mcfg, .now_ns = m_now, .host_facts = m_facts,
		.vm_facts = m_vm_facts, .kexec_allowed = m_ok, .kexec_load = m_load,
		.kexec_unload = m_ok, .kexec_is_loaded = m_loaded, .vm_prepare = m_vm,
		.vm_abort = m_vm, .journal_save = m_save, .journal_preserve = m_load,
		.journal_discard = m_void, .kexec_jump = m_ok, .vm_restore = m_vm,
		.vm_verify = m_vm, .journal_finish = m_void,
		.domains_ctx = &lvu, .domains_preflight = libvirt_update_preflight,
		.domains_prepare = libvirt_update_prepare,
		.domains_rollback = libvirt_update_rollback,
		.domains_restore = libvirt_update_restore,
		.domains_pending = libvirt_update_pending,
	};
	journal_init(&mj, m_now(NULL));
	snprintf(mj.kernel, sizeof(mj.kernel), "/boot/vmlinuz-next");
	snprintf(mj.cmdline, sizeof(mj.cmdline), "console=ttyS0 kho=on liveupdate=on");
}

/* The journal's libvirt_domains entry of the test domain, checked. */
static void assert_journal_domain(enum libvirt_domain_state st, const char *action,
				  const char *result, bool downtime)
{
	const struct libvirt_domain_report *d = NULL;

	for (unsigned int i = 0; i < mj.nr_domains; i++)
		if (!strcmp(mj.domains[i].name, DOM_NAME))
			d = &mj.domains[i];
	assert_non_null(d);
	assert_int_equal(strlen(d->uuid), 36);
	assert_string_equal(libvirt_domain_state_name(d->state), libvirt_domain_state_name(st));
	assert_string_equal(libvirt_domain_action(d), action);
	assert_string_equal(libvirt_domain_result(d), result);
	assert_int_equal(libvirt_domain_downtime_ns(d) > 0, downtime);
}

static void test_libvirt_host_update_dry_run_suspends_and_resumes(void **state)
{
	struct update_ops ops;
	virConnectPtr c;

	(void)state;
	NEED_LIVE();
	machine_ops(&ops);
	mj.dry_run = true;
	assert_int_equal(update_machine_run(&mj, &ops), 0);
	assert_int_equal(mj.outcome, UPDATE_DRY_RUN);
	assert_journal_domain(LIBVIRT_DOMAIN_RESUMED, "suspend", "ok", true);
	c = conn();
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_RUNNING);
	assert_int_equal(has_managed_save(c), 0);
	virConnectClose(c);
}

/*
 * libvirt_ram "refuse": the domain would be saved, so the update stops
 * in preflight, before anything is paused or loaded, naming the domain
 * and why its RAM cannot stay in place; the dry run says the same.
 */
static void test_libvirt_host_update_refuses_ram_to_disk(void **state)
{
	const struct libvirt_domain_report *d = NULL;
	struct update_ops ops;
	virConnectPtr c;

	(void)state;
	NEED_LIVE();
	for (int dry = 1; dry >= 0; dry--) {
		machine_ops(&ops);
		lvu.ram_refuse = true;
		mj.dry_run = dry;
		assert_int_not_equal(update_machine_run(&mj, &ops), 0);
		if (!strstr(mj.error, "libvirt_ram is \"refuse\"") ||
		    !strstr(mj.error, "domain " DOM_NAME ": refused, RAM would go to disk: no "
			    "shared memfd backing"))
			fail_msg("error \"%s\"", mj.error);
		/* Refused in preflight: the kernel was never loaded. */
		assert_int_equal(mj.outcome, UPDATE_REFUSED);
		assert_string_equal(mj.failed_phase, "preflight");
		assert_int_equal(mj.phases[UPDATE_LOAD_KERNEL].start_ns, 0);
		/* Not touched: listed, never suspended; the journal keeps why. */
		assert_journal_domain(LIBVIRT_DOMAIN_LISTED, "none", "untouched", false);
		for (unsigned int i = 0; i < mj.nr_domains; i++)
			if (!strcmp(mj.domains[i].name, DOM_NAME))
				d = &mj.domains[i];
		assert_non_null(d);
		assert_int_equal(d->suspended_ns, 0);
		assert_non_null(strstr(d->ram, "refused, RAM would go to disk: "));
		c = conn();
		assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_RUNNING);
		assert_int_equal(has_managed_save(c), 0);
		virConnectClose(c);
	}
}

/*
 * libvirt_ram "in-place" and "in-place-or-save" with a domain that cannot
 * keep its RAM in place (no memfd, not through kvmlu-qemu, not KVM): the
 * first refuses the update in preflight, naming it and why, the second
 * takes it the managed-save way. Both need kvmlu-qemu's configuration.
 */
static void test_libvirt_host_update_in_place_falls_back_per_key(void **state)
{
	const struct libvirt_domain_report *d = NULL;
	char qcfg[PATH_MAX], text[PATH_MAX + 128];
	struct update_ops ops;
	virConnectPtr c;
	FILE *f;

	(void)state;
	NEED_LIVE();
	/* No kvmlu-qemu configuration: nothing can go in place; refused, untouched. */
	machine_ops(&ops);
	lvu.ram_refuse = lvu.ram_in_place = true;
	snprintf(lvu.qemu_config, sizeof(lvu.qemu_config), "%s/no-qemu.json", L.dir);
	mj.dry_run = true;
	assert_int_not_equal(update_machine_run(&mj, &ops), 0);
	assert_int_equal(mj.outcome, UPDATE_REFUSED);
	if (!strstr(mj.error, "libvirt_ram keeps RAM in place, but kvmlu-qemu's configuration"))
		fail_msg("error \"%s\"", mj.error);
	snprintf(qcfg, sizeof(qcfg), "%s/qemu.json", L.dir);
	snprintf(text, sizeof(text), "{\"qemu\": \"" QEMU "\", \"qmp_dir\": \"%s\"}", L.dir);
	f = fopen(qcfg, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	for (int dry = 1; dry >= 0; dry--) {
		machine_ops(&ops);
		lvu.ram_refuse = lvu.ram_in_place = true;
		snprintf(lvu.qemu_config, sizeof(lvu.qemu_config), "%.200s", qcfg);
		mj.dry_run = dry;
		assert_int_not_equal(update_machine_run(&mj, &ops), 0);
		if (!strstr(mj.error, "libvirt_ram is \"in-place\" and libvirt domains would have "
			    "their RAM written to disk: domain " DOM_NAME ": refused, RAM would go to "
			    "disk: no shared memfd backing") || !strstr(mj.error, "not a KVM domain"))
			fail_msg("error \"%s\"", mj.error);
		assert_int_equal(mj.outcome, UPDATE_REFUSED);
		assert_string_equal(mj.failed_phase, "preflight");
		assert_journal_domain(LIBVIRT_DOMAIN_LISTED, "none", "untouched", false);
	}
	/* in-place-or-save: the dry run passes; the domain would be saved, and it says why. */
	machine_ops(&ops);
	lvu.ram_in_place = true;
	snprintf(lvu.qemu_config, sizeof(lvu.qemu_config), "%.200s", qcfg);
	mj.dry_run = true;
	assert_int_equal(update_machine_run(&mj, &ops), 0);
	assert_int_equal(mj.outcome, UPDATE_DRY_RUN);
	assert_journal_domain(LIBVIRT_DOMAIN_RESUMED, "suspend", "ok", true);
	for (unsigned int i = 0; i < mj.nr_domains; i++)
		if (!strcmp(mj.domains[i].name, DOM_NAME))
			d = &mj.domains[i];
	assert_non_null(d);
	assert_false(d->in_place);
	if (strncmp(d->ram, "managed save, RAM would go to disk: no shared memfd backing", 59))
		fail_msg("ram \"%s\"", d->ram);
	c = conn();
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_RUNNING);
	assert_int_equal(has_managed_save(c), 0);
	virConnectClose(c);
	unlink(qcfg);
}

static void test_libvirt_host_update_rolls_back_a_failed_save(void **state)
{
	char save_dir[PATH_MAX];
	struct update_ops ops;
	virConnectPtr c;
	int ret;

	(void)state;
	NEED_LIVE();
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: needs root to make the daemon's save dir unwritable\n");
		skip();
	}
	machine_ops(&ops);
	snprintf(save_dir, sizeof(save_dir), "%s/config/libvirt/qemu/save", L.dir);
	assert_int_equal(chown(save_dir, 0, 0), 0);
	ret = update_machine_run(&mj, &ops);
	assert_int_equal(chown(save_dir, NOBODY, NOBODY), 0);
	assert_int_not_equal(ret, 0);
	assert_int_equal(mj.outcome, UPDATE_ROLLED_BACK);
	assert_string_equal(mj.failed_phase, "prepare");
	assert_non_null(strstr(mj.error, "virDomainManagedSave"));
	/* Stopped before the kexec: the kernel was never loaded for real. */
	assert_int_equal(mj.phases[UPDATE_LOAD_KERNEL].start_ns, 0);
	c = conn();
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_RUNNING);
	virConnectClose(c);
}

static void test_libvirt_host_update_restores_after_the_jump(void **state)
{
	char uuid_before[VIR_UUID_STRING_BUFLEN], uuid_after[VIR_UUID_STRING_BUFLEN];
	unsigned int n, bad;
	struct update_ops ops;
	virConnectPtr c;
	char err[256];

	(void)state;
	NEED_LIVE();
	c = conn();
	assert_int_equal(dom_state(c, uuid_before), VIR_DOMAIN_RUNNING);
	virConnectClose(c);
	machine_ops(&ops);
	/* The fake jump returns: the machine stops in phase kexec, outcome running. */
	assert_int_equal(update_machine_run(&mj, &ops), 0);
	assert_int_equal(mj.outcome, UPDATE_RUNNING);
	assert_int_equal(mj.phase, UPDATE_KEXEC);
	assert_int_equal(access(lvu.state_file, F_OK), 0);
	/* The journal that crosses the kexec already lists the saved domain. */
	assert_journal_domain(LIBVIRT_DOMAIN_SAVED, "managed-save", "pending", false);
	c = conn();
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_SHUTOFF);
	virConnectClose(c);
	libvirt_domains_close(&lvu.set);

	/* The next kernel: libvirtd anew, a new agent that has only the state file. */
	daemon_stop();
	assert_int_equal(daemon_start(), 0);
	memset(&lvu.set, 0, sizeof(lvu.set));
	lvu.prepared = false;
	/* `--restore` (kvmlu-restore.service, before libvirtd): the domain is left pending. */
	assert_int_equal(update_machine_resume(&mj, &ops), 0);
	assert_int_equal(mj.outcome, UPDATE_RUNNING);
	assert_journal_domain(LIBVIRT_DOMAIN_SAVED, "managed-save", "pending", false);
	assert_true(libvirt_update_pending(&lvu));
	c = conn();
	assert_int_equal(dom_state(c, NULL), VIR_DOMAIN_SHUTOFF);
	virConnectClose(c);
	/* It wrote the history; kvmlu-agent.service (after libvirtd) starts the domain. */
	snprintf(mcfg.history_dir, sizeof(mcfg.history_dir), "%s/history", L.dir);
	assert_int_equal(journal_store_history_add(mcfg.history_dir, mcfg.history_keep, &mj, err,
						   sizeof(err)), 0);
	memset(&mj, 0, sizeof(mj));
	assert_int_equal(agent_restore_domains(&mcfg, &ops, stderr), 0);
	assert_int_equal(journal_store_history_list(mcfg.history_dir, &mj, 1, &n, &bad), 0);
	assert_int_equal(n, 1);
	assert_int_equal(mj.outcome, UPDATE_DONE);
	assert_journal_domain(LIBVIRT_DOMAIN_RESTORED, "managed-save", "ok", true);
	assert_false(libvirt_update_pending(&lvu));
	assert_int_not_equal(access(lvu.state_file, F_OK), 0);
	c = conn();
	assert_int_equal(dom_state(c, uuid_after), VIR_DOMAIN_RUNNING);
	assert_string_equal(uuid_after, uuid_before);
	virConnectClose(c);
}


/* ---- RAM in place: a domain through kvmlu-qemu, LUO faked (no /dev/liveupdate here) ---- */

/* The fake kernel's one session: the files preserved, kept by a "kexec". */
static struct {
	bool used, kept, taken;
	char name[LUO_SESSION_NAME_SIZE];
	int ram, image;
} K = { .ram = -1, .image = -1 };

static void k_drop(void)
{
	if (K.ram >= 0)
		close(K.ram);
	if (K.image >= 0)
		close(K.image);
	memset(&K, 0, sizeof(K));
	K.ram = K.image = -1;
}

static int k_create(struct luo_session *s, const char *name, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	assert_false(K.used);
	K.used = true;
	snprintf(K.name, sizeof(K.name), "%s", name);
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return 0;
}

static int k_retrieve(struct luo_session *s, const char *name, char *err, size_t errlen)
{
	if (!K.used || !K.kept || K.taken || strcmp(K.name, name)) {
		snprintf(err, errlen, "RETRIEVE_SESSION: no session '%s'", name);
		return -ENOENT;
	}
	K.taken = true;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	s->incoming = true;
	return 0;
}

static int k_preserve(struct luo_session *s, int fd, uint64_t token, const char *what,
		      char *err, size_t errlen)
{
	(void)s, (void)what, (void)err, (void)errlen;
	if (token == LVRAM_TOKEN_RAM)
		K.ram = dup(fd);
	else
		K.image = dup(fd);
	return 0;
}

static int k_retrieve_fd(struct luo_session *s, uint64_t token, const char *what, int *fd,
			 char *err, size_t errlen)
{
	(void)s, (void)what, (void)err, (void)errlen;
	*fd = fcntl(token == LVRAM_TOKEN_RAM ? K.ram : K.image, F_DUPFD_CLOEXEC, 3);
	return *fd < 0 ? -EBADF : 0;
}

static int k_finish(struct luo_session *s, char *err, size_t errlen)
{
	(void)s, (void)err, (void)errlen;
	return 0;
}

static void k_close(struct luo_session *s)
{
	/* Before the kexec: unpreserved. A retrieved one: finished. */
	if (K.used && (!K.kept || K.taken))
		k_drop();
	if (s->fd >= 0)
		close(s->fd);
	luo_session_init(s);
}

static struct lvram_inplace_ops k_ops;

/* The QEMU of the in-place domain and the inode of its pc.ram memfd. */
static pid_t ip_qemu(ino_t *ino)
{
	char uuid[VIR_UUID_STRING_BUFLEN], path[64];
	virConnectPtr c = conn();
	virDomainPtr d = virDomainLookupByName(c, IP_NAME);
	struct stat st;
	pid_t pid;
	int fdno;

	assert_non_null(d);
	assert_int_equal(virDomainGetUUIDString(d, uuid), 0);
	virDomainFree(d);
	virConnectClose(c);
	assert_int_equal(qemu_ram_find_pid(uuid, &pid, &fdno, NULL, 0), 0);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fdno);
	assert_int_equal(stat(path, &st), 0);
	*ino = st.st_ino;
	return pid;
}

static int ip_state(void)
{
	virConnectPtr c = conn();
	virDomainPtr d = virDomainLookupByName(c, IP_NAME);
	int st = -1, reason;

	assert_non_null(d);
	assert_int_equal(virDomainGetState(d, &st, &reason, 0), 0);
	virDomainFree(d);
	virConnectClose(c);
	return st;
}

static const struct libvirt_domain_report *ip_entry(void)
{
	for (unsigned int i = 0; i < mj.nr_domains; i++)
		if (!strcmp(mj.domains[i].name, IP_NAME))
			return &mj.domains[i];
	fail_msg("no journal entry for " IP_NAME);
	return NULL;
}

/* kvmlu-qemu set up as the test's libvirtd sees it, the lvram socket served here. */
static const char *ip_setup(char *qcfg, size_t len)
{
	static bool served;
	char bin[PATH_MAX], text[3 * PATH_MAX], qmp[PATH_MAX], sock[PATH_MAX], err[256];
	virConnectPtr c;
	virDomainPtr d;

	if (geteuid() != 0)
		return "needs root: the agent takes the QEMU's memfd with pidfd_getfd";
	if (!realpath(WRAPPER_BIN, bin))
		return "no " WRAPPER_BIN;
	snprintf(qmp, sizeof(qmp), "%s/lv", L.dir);
	mkdir(qmp, 0755);
	chown_tree(qmp);
	snprintf(sock, sizeof(sock), "%s/lvram.sock", L.dir);
	snprintf(qcfg, len, "%s/qemu.json", L.dir);
	snprintf(text, sizeof(text), "{\"qemu\": \"" QEMU "\", \"qmp_dir\": \"%s\", "
		 "\"lvram_socket\": \"%s\"}\n", qmp, sock);
	assert_int_equal(write_file(qcfg, text, 0644), 0);
	snprintf(text, sizeof(text), "#!/bin/sh\nKVMLU_QEMU_CONFIG=%s exec %s \"$@\"\n", qcfg, bin);
	snprintf(bin, sizeof(bin), "%s/kvmlu-qemu", L.dir);
	assert_int_equal(write_file(bin, text, 0755), 0);
	if (!served) {
		if (lvram_server_start(sock, qmp, err, sizeof(err))) {
			fprintf(stderr, "lvram server: %s\n", err);
			return "the lvram socket cannot be served";
		}
		served = true;
	}
	snprintf(text, sizeof(text),
		 "<domain type='qemu'><name>" IP_NAME "</name>"
		 "<memory unit='MiB'>32</memory><vcpu>1</vcpu>"
		 "<memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>"
		 "<os><type arch='x86_64' machine='pc'>hvm</type></os>"
		 "<devices><emulator>%s</emulator>"
		 "<video><model type='none'/></video><memballoon model='none'/></devices>"
		 "</domain>", bin);
	c = conn();
	d = virDomainDefineXML(c, text);
	assert_non_null(d);
	if (virDomainCreate(d) < 0) {
		fprintf(stderr, "start through kvmlu-qemu: %s\n", virGetLastErrorMessage());
		virDomainUndefine(d);
		virDomainFree(d);
		virConnectClose(c);
		return "the domain does not start through kvmlu-qemu";
	}
	virDomainFree(d);
	virConnectClose(c);
	k_ops = lvram_inplace_real;
	k_ops.create = k_create;
	k_ops.retrieve = k_retrieve;
	k_ops.preserve_fd = k_preserve;
	k_ops.retrieve_fd = k_retrieve_fd;
	k_ops.finish = k_finish;
	k_ops.close = k_close;
	lvram_inplace_set_ops(&k_ops);
	setenv("KVMLU_TEST_LVRAM_TCG", "1", 1);
	k_drop();
	return NULL;
}

static void ip_teardown(void)
{
	virConnectPtr c = virConnectOpen(L.uri);
	virDomainPtr d = c ? virDomainLookupByName(c, IP_NAME) : NULL;

	if (d) {
		virDomainDestroy(d);
		virDomainUndefineFlags(d, VIR_DOMAIN_UNDEFINE_MANAGED_SAVE);
		virDomainFree(d);
	}
	if (c)
		virConnectClose(c);
	unsetenv("KVMLU_TEST_LVRAM_TCG");
	lvram_inplace_set_ops(NULL);
	k_drop();
}

static void ip_ops(struct update_ops *ops, const char *qcfg)
{
	machine_ops(ops);
	/* in-place-or-save: this domain in place, the plain one (DOM_NAME) saved. */
	lvu.ram_in_place = true;
	snprintf(lvu.qemu_config, sizeof(lvu.qemu_config), "%.200s", qcfg);
	snprintf(lvu.save_dir, sizeof(lvu.save_dir), "%.200s/config/libvirt/qemu/save", L.dir);
}

static int m_fail(void *c, const struct journal *j, char *err, size_t len)
{
	(void)c, (void)j;
	snprintf(err, len, "journal session refused (test)");
	return -EIO;
}

/*
 * The same-kernel round trip through the update's phases: the domain
 * through kvmlu-qemu is saved with device state only and its RAM put in
 * its session; the update fails at store-journal, and the rollback runs it
 * again on a new QEMU that maps the very memfd, the session unpreserved.
 */
static void test_libvirt_host_update_in_place_rolls_back(void **state)
{
	const struct libvirt_domain_report *d;
	char qcfg[PATH_MAX];
	const char *why;
	struct update_ops ops;
	ino_t ino_before, ino_after;
	pid_t before, after;

	(void)state;
	NEED_LIVE();
	why = ip_setup(qcfg, sizeof(qcfg));
	if (why) {
		fprintf(stderr, "SKIP: %s\n", why);
		skip();
	}
	before = ip_qemu(&ino_before);
	/* The dry run proves kvmlu's QMP socket (x-ignore-shared on and off) and changes nothing. */
	ip_ops(&ops, qcfg);
	mj.dry_run = true;
	if (update_machine_run(&mj, &ops))
		fail_msg("dry run: %s", mj.error);
	assert_int_equal(mj.outcome, UPDATE_DRY_RUN);
	assert_int_equal(ip_entry()->state, LIBVIRT_DOMAIN_RESUMED);
	assert_non_null(strstr(ip_entry()->ram, "in place: RAM to be kept in a LUO session"));
	assert_false(K.used);
	assert_int_equal(ip_qemu(&ino_after), before);
	ip_ops(&ops, qcfg);
	ops.journal_preserve = m_fail;
	assert_int_not_equal(update_machine_run(&mj, &ops), 0);
	assert_int_equal(mj.outcome, UPDATE_ROLLED_BACK);
	assert_string_equal(mj.failed_phase, "store-journal");
	d = ip_entry();
	if (d->state != LIBVIRT_DOMAIN_RESUMED)
		fail_msg("state %s: %s", libvirt_domain_state_name(d->state), d->error);
	assert_true(d->in_place);
	assert_string_equal(libvirt_domain_action(d), "ram-in-place");
	assert_string_equal(libvirt_domain_result(d), "ok");
	assert_int_equal(d->memory_bytes, 32 << 20);
	/* Device state only: far below the RAM. */
	assert_true(d->image_bytes > 0 && d->image_bytes < 8 << 20);
	assert_int_equal(strlen(d->checksum), 32);
	assert_true(libvirt_domain_downtime_ns(d) > 0);
	/* Rolled back: the session was let go, the guest runs on its very RAM. */
	assert_false(K.used);
	assert_int_equal(ip_state(), VIR_DOMAIN_RUNNING);
	after = ip_qemu(&ino_after);
	assert_int_not_equal(after, before);
	assert_int_equal(ino_after, ino_before);
	assert_int_equal(dom_state(conn(), NULL), VIR_DOMAIN_RUNNING);
	ip_teardown();
}

/*
 * Across the "kexec": prepare keeps the RAM and the image in the session;
 * the agent's held RAM and the image file are gone, libvirtd restarts;
 * `--restore` leaves it pending; kvmlu-agent.service's restore takes the
 * session, checks the sum, writes the image back and starts the domain on
 * the same memfd.
 */
static void test_libvirt_host_update_in_place_across_the_jump(void **state)
{
	const struct libvirt_domain_report *d;
	char qcfg[PATH_MAX], image[PATH_MAX], err[256], sum[33];
	struct update_ops ops;
	unsigned int n, bad;
	ino_t ino_before, ino_after;
	pid_t before, after;
	const char *why;

	(void)state;
	NEED_LIVE();
	why = ip_setup(qcfg, sizeof(qcfg));
	if (why) {
		fprintf(stderr, "SKIP: %s\n", why);
		skip();
	}
	before = ip_qemu(&ino_before);
	ip_ops(&ops, qcfg);
	assert_int_equal(update_machine_run(&mj, &ops), 0);
	assert_int_equal(mj.outcome, UPDATE_RUNNING);
	assert_int_equal(mj.phase, UPDATE_KEXEC);
	d = ip_entry();
	if (d->state != LIBVIRT_DOMAIN_SAVED)
		fail_msg("state %s: %s", libvirt_domain_state_name(d->state), d->error);
	assert_string_equal(libvirt_domain_action(d), "ram-in-place");
	assert_non_null(strstr(d->session, "kvmlu/lv/"));
	assert_non_null(strstr(d->ram, "in place: 33554432 bytes of RAM kept in LUO session"));
	snprintf(sum, sizeof(sum), "%s", d->checksum);
	assert_true(K.used && K.ram >= 0 && K.image >= 0);
	assert_int_equal(ip_state(), VIR_DOMAIN_SHUTOFF);
	/* The "kexec": the session kept; the agent, its held RAM and /run gone; libvirtd anew. */
	K.kept = true;
	for (unsigned int i = 0; i < LIBVIRT_DOMAINS_MAX; i++)
		if (lvu.set.sess[i].fd >= 0)
			close(lvu.set.sess[i].fd);
	lvram_store_release(d->uuid);
	snprintf(image, sizeof(image), "%s", d->image_path);
	assert_int_equal(unlink(image), 0);
	libvirt_domains_close(&lvu.set);
	daemon_stop();
	assert_int_equal(daemon_start(), 0);
	/* Its definition did not survive either (kept on a file system the kexec lost). */
	{
		virConnectPtr c = conn();
		virDomainPtr dom = virDomainLookupByName(c, IP_NAME);

		assert_non_null(dom);
		assert_int_equal(virDomainUndefineFlags(dom, VIR_DOMAIN_UNDEFINE_MANAGED_SAVE), 0);
		virDomainFree(dom);
		assert_null(virDomainLookupByName(c, IP_NAME));
		virConnectClose(c);
	}
	memset(&lvu.set, 0, sizeof(lvu.set));
	lvu.prepared = false;
	assert_int_equal(update_machine_resume(&mj, &ops), 0);
	assert_int_equal(mj.outcome, UPDATE_RUNNING);
	assert_int_equal(ip_entry()->state, LIBVIRT_DOMAIN_SAVED);
	snprintf(mcfg.history_dir, sizeof(mcfg.history_dir), "%s/history-ip", L.dir);
	assert_int_equal(journal_store_history_add(mcfg.history_dir, mcfg.history_keep, &mj, err,
						   sizeof(err)), 0);
	memset(&mj, 0, sizeof(mj));
	if (agent_restore_domains(&mcfg, &ops, stderr))
		fail_msg("restore: %s / %s", mj.error, ip_entry()->error);
	assert_int_equal(journal_store_history_list(mcfg.history_dir, &mj, 1, &n, &bad), 0);
	assert_int_equal(mj.outcome, UPDATE_DONE);
	d = ip_entry();
	if (d->state != LIBVIRT_DOMAIN_RESTORED)
		fail_msg("state %s: %s", libvirt_domain_state_name(d->state), d->error);
	assert_string_equal(d->checksum, sum);
	assert_string_equal(d->checksum_after, sum);
	assert_non_null(strstr(d->ram, "kept across the kexec"));
	assert_non_null(strstr(d->ram, "defined again from its image"));
	assert_false(K.used);		/* finished */
	assert_false(lvram_store_held(d->uuid));
	assert_int_equal(ip_state(), VIR_DOMAIN_RUNNING);
	after = ip_qemu(&ino_after);
	assert_int_not_equal(after, before);
	assert_int_equal(ino_after, ino_before);
	assert_int_equal(dom_state(conn(), NULL), VIR_DOMAIN_RUNNING);
	ip_teardown();
}

static void test_libvirt_domains_json_round_trip_and_refusals(void **state)
{
	static const char *const bad[] = {
		"{}",
		"[1]",
		"[{\"name\":\"a\",\"uuid\":\"short\",\"state\":\"saved\"}]",
		"[{\"name\":\"a\",\"uuid\":\"3f1c0b2a-1111-4222-8333-944455556666\",\"state\":\"flying\"}]",
		"[{\"name\":\"a\",\"uuid\":\"3f1c0b2a-1111-4222-8333-944455556666\",\"state\":\"saved\",\"x\":1}]",
		"[{\"name\":\"a\",\"uuid\":\"3f1c0b2a-1111-4222-8333-944455556666\",\"state\":\"saved\",\"saved_ns\":-5}]",
		"[{\"name\":\"a\",\"uuid\":\"3f1c0b2a-1111-4222-8333-944455556666\",\"state\":\"saved\",\"ram\":5}]",
	};
	struct libvirt_domains *s = fresh(&set_a), *t = fresh(&set_b);
	struct json_object *j;
	char err[256];

	(void)state;
	s->nr = 2;
	snprintf(s->d[0].name, sizeof(s->d[0].name), "web1");
	snprintf(s->d[0].uuid, sizeof(s->d[0].uuid), "3f1c0b2a-1111-4222-8333-944455556666");
	s->d[0].state = LIBVIRT_DOMAIN_SAVED;
	s->d[0].suspended_ns = 100;
	s->d[0].saved_ns = 200;
	snprintf(s->d[0].ram, sizeof(s->d[0].ram), "managed save, RAM would go to disk: hugepages");
	snprintf(s->d[1].name, sizeof(s->d[1].name), "db");
	snprintf(s->d[1].uuid, sizeof(s->d[1].uuid), "00000000-1111-4222-8333-944455556666");
	s->d[1].state = LIBVIRT_DOMAIN_OPTED_OUT;
	s->d[1].was_paused = true;
	j = libvirt_domains_to_json(s);
	assert_int_equal(libvirt_domains_from_json(j, t, err, sizeof(err)), 0);
	json_object_put(j);
	assert_int_equal(t->nr, 2);
	assert_memory_equal(t->d, s->d, 2 * sizeof(s->d[0]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = json_tokener_parse(bad[i]);
		assert_non_null(j);
		assert_int_not_equal(libvirt_domains_from_json(j, t, err, sizeof(err)), 0);
		json_object_put(j);
		assert_int_equal(t->nr, 2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libvirt_domains_json_round_trip_and_refusals),
		cmocka_unit_test(test_libvirt_hook_hears_a_real_domain_start_and_reconnect),
		cmocka_unit_test(test_libvirt_dry_run_suspends_and_resumes_the_domain),
		cmocka_unit_test(test_libvirt_failed_save_resumes_the_domain_and_stops),
		cmocka_unit_test(test_libvirt_optout_domain_is_left_alone),
		cmocka_unit_test(test_libvirt_update_brings_the_domain_back_after_a_daemon_restart),
		cmocka_unit_test(test_libvirt_restore_accepts_a_domain_libvirt_restored_first),
		cmocka_unit_test(test_libvirt_host_update_dry_run_suspends_and_resumes),
		cmocka_unit_test(test_libvirt_host_update_refuses_ram_to_disk),
		cmocka_unit_test(test_libvirt_host_update_in_place_falls_back_per_key),
		cmocka_unit_test(test_libvirt_host_update_rolls_back_a_failed_save),
		cmocka_unit_test(test_libvirt_host_update_restores_after_the_jump),
		cmocka_unit_test(test_libvirt_host_update_in_place_rolls_back),
		cmocka_unit_test(test_libvirt_host_update_in_place_across_the_jump),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
