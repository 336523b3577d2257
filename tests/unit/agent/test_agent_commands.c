// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the agent's socket (agent/daemon/agent_server.c and
 * agent_commands.c) over a socketpair: requests are {"cmd","id","args"},
 * an argument at the top level is refused with InvalidRequest naming it,
 * the same argument under "args" works, and errors carry the classes of
 * kvmlu/control_wire.h with the request's id; `status` on another
 * connection answers while a host-update runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <grp.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/config/agent_config.h"
#include "agent/daemon/agent_commands.h"
#include "agent/daemon/agent_server.h"
#include "common/json_line.h"

/* Bounds a wait that would otherwise never end; never what a test judges by. */
#define WAIT_BOUND_MS 60000

/* One connection to the agent's command code, served as agent_server_run serves each. */
struct agent {
	struct agent_config cfg;
	char dir[64];
	int fd;				/* our end */
	pthread_t thread;
	int theirs;
	struct json_line_reader r;
};

static void *serve_thread(void *arg)
{
	struct agent *a = arg;

	agent_server_serve(a->theirs, &a->cfg);
	return NULL;
}

/* Another connection to the agent of a (same configuration and directory). */
static int agent_connect(const struct agent *a, struct agent **out)
{
	struct agent *c = calloc(1, sizeof(*c));
	int sv[2];

	if (!c)
		return -1;
	c->cfg = a->cfg;
	memcpy(c->dir, a->dir, sizeof(c->dir));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		free(c);
		return -1;
	}
	c->fd = sv[0];
	c->theirs = sv[1];
	json_line_reader_init(&c->r, c->fd);
	if (pthread_create(&c->thread, NULL, serve_thread, c)) {
		close(sv[0]);
		close(sv[1]);
		free(c);
		return -1;
	}
	*out = c;
	return 0;
}

static void agent_disconnect(struct agent *c)
{
	close(c->fd);
	pthread_join(c->thread, NULL);
	free(c);
}

static int agent_up(void **state)
{
	struct agent proto = { 0 }, *a;
	struct group *g = getgrgid(getgid());

	snprintf(proto.dir, sizeof(proto.dir), "/tmp/kvmlu-test-agent-XXXXXX");
	if (!mkdtemp(proto.dir))
		return -1;
	agent_config_defaults(&proto.cfg);
	/* Our own group: peer_auth lets a non-root test in by its primary gid. */
	snprintf(proto.cfg.group, sizeof(proto.cfg.group), "%s", g ? g->gr_name : "root");
	snprintf(proto.cfg.run_dir, sizeof(proto.cfg.run_dir), "%s", proto.dir);
	snprintf(proto.cfg.history_dir, sizeof(proto.cfg.history_dir), "%s", proto.dir);
	snprintf(proto.cfg.state_dir, sizeof(proto.cfg.state_dir), "%s", proto.dir);
	if (agent_connect(&proto, &a))
		return -1;
	*state = a;
	return 0;
}

static int agent_down(void **state)
{
	struct agent *a = *state;
	DIR *d = opendir(a->dir);
	struct dirent *de;
	char path[sizeof(a->dir) + 256];

	/* What a test left: a report in the history, a kernel file, a socket. */
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", a->dir, de->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(a->dir);
	agent_disconnect(a);
	return 0;
}

/* Send one raw line, return the reply (a new reference). */
static json_object *ask(struct agent *a, const char *line)
{
	json_object *reply = NULL;
	char err[256];

	assert_int_equal(write(a->fd, line, strlen(line)), (ssize_t)strlen(line));
	assert_int_equal(write(a->fd, "\n", 1), 1);
	if (json_line_read(&a->r, WAIT_BOUND_MS, &reply, err, sizeof(err)))
		fail_msg("no reply to %s: %s", line, err);
	return reply;
}

static const char *error_class(json_object *reply)
{
	json_object *e, *c;

	if (!json_object_object_get_ex(reply, "error", &e) ||
	    !json_object_object_get_ex(e, "class", &c))
		return "(none)";
	return json_object_get_string(c);
}

static const char *error_desc(json_object *reply)
{
	json_object *e, *d;

	if (!json_object_object_get_ex(reply, "error", &e) ||
	    !json_object_object_get_ex(e, "desc", &d))
		return "";
	return json_object_get_string(d);
}

static int64_t reply_id(json_object *reply)
{
	json_object *id;

	return json_object_object_get_ex(reply, "id", &id) ? json_object_get_int64(id) : -1;
}

static bool reply_ok(json_object *reply)
{
	json_object *ok;

	return json_object_object_get_ex(reply, "ok", &ok) && json_object_get_boolean(ok);
}

static void test_agent_commands_refuse_arguments_at_the_top_level(void **state)
{
	struct agent *a = *state;
	json_object *reply;

	reply = ask(a, "{\"cmd\":\"report\",\"id\":7,\"last\":5}");
	assert_false(reply_ok(reply));
	assert_string_equal(error_class(reply), "InvalidRequest");
	if (!strstr(error_desc(reply), "\"last\""))
		fail_msg("desc does not name the key: %s", error_desc(reply));
	assert_int_equal(reply_id(reply), 7);
	json_object_put(reply);

	reply = ask(a, "{\"cmd\":\"host-update\",\"id\":8,\"kernel\":\"/boot/vmlinuz\"}");
	assert_string_equal(error_class(reply), "InvalidRequest");
	if (!strstr(error_desc(reply), "\"kernel\""))
		fail_msg("desc does not name the key: %s", error_desc(reply));
	json_object_put(reply);
}

static void test_agent_commands_take_arguments_under_args(void **state)
{
	struct agent *a = *state;
	json_object *reply, *ret, *updates, *protocol;

	reply = ask(a, "{\"cmd\":\"report\",\"id\":9,\"args\":{\"last\":5}}");
	if (!reply_ok(reply))
		fail_msg("report refused: %s", error_desc(reply));
	assert_int_equal(reply_id(reply), 9);
	assert_true(json_object_object_get_ex(reply, "return", &ret));
	assert_true(json_object_object_get_ex(ret, "updates", &updates));
	assert_int_equal(json_object_array_length(updates), 0);
	json_object_put(reply);

	/* Inside "args", each command still refuses what it does not know. */
	reply = ask(a, "{\"cmd\":\"report\",\"id\":10,\"args\":{\"lats\":5}}");
	assert_string_equal(error_class(reply), "InvalidRequest");
	if (!strstr(error_desc(reply), "\"lats\""))
		fail_msg("desc does not name the key: %s", error_desc(reply));
	json_object_put(reply);
	reply = ask(a, "{\"cmd\":\"report\",\"id\":11,\"args\":{\"last\":0}}");
	assert_string_equal(error_class(reply), "InvalidRequest");
	json_object_put(reply);
	reply = ask(a, "{\"cmd\":\"report\",\"id\":12,\"args\":5}");
	assert_string_equal(error_class(reply), "InvalidRequest");
	json_object_put(reply);

	reply = ask(a, "{\"cmd\":\"status\",\"id\":13}");
	if (!reply_ok(reply))
		fail_msg("status refused: %s", error_desc(reply));
	/* The control protocol's version, an integer, as every status says it. */
	assert_true(json_object_object_get_ex(reply, "return", &ret));
	assert_true(json_object_object_get_ex(ret, KVMLU_KEY_PROTOCOL, &protocol));
	assert_true(json_object_is_type(protocol, json_type_int));
	assert_int_equal(json_object_get_int(protocol), KVMLU_WIRE_PROTOCOL);
	json_object_put(reply);
}

static void test_agent_commands_use_the_shared_error_classes(void **state)
{
	struct agent *a = *state;
	json_object *reply;

	reply = ask(a, "{\"cmd\":\"no-such-command\",\"id\":14}");
	assert_string_equal(error_class(reply), "UnknownCommand");
	assert_int_equal(reply_id(reply), 14);
	json_object_put(reply);

	/* Without a domain table (no libvirt linked), libvirt-event is unknown. */
	reply = ask(a, "{\"cmd\":\"libvirt-event\",\"id\":15,\"args\":{}}");
	assert_string_equal(error_class(reply), "UnknownCommand");
	json_object_put(reply);

	reply = ask(a, "{\"cmd\":\"status\",\"id\":16} trailing");
	assert_string_equal(error_class(reply), "ParseError");
	json_object_put(reply);

	reply = ask(a, "{\"id\":17}");
	assert_string_equal(error_class(reply), "InvalidRequest");
	assert_int_equal(reply_id(reply), 17);
	json_object_put(reply);

	/* The connection goes on after each refusal. */
	reply = ask(a, "{\"cmd\":\"status\",\"id\":18}");
	assert_true(reply_ok(reply));
	json_object_put(reply);
}

static void test_agent_refuses_a_request_with_a_key_twice(void **state)
{
	struct agent *a = *state;
	json_object *reply;

	/* Last-one-wins would have answered vms to a status request. */
	reply = ask(a, "{\"cmd\":\"status\",\"cmd\":\"vms\",\"id\":20}");
	assert_false(reply_ok(reply));
	assert_string_equal(error_class(reply), "DuplicateKey");
	if (!strstr(error_desc(reply), "duplicate key \"cmd\""))
		fail_msg("desc does not name the key: %s", error_desc(reply));
	json_object_put(reply);

	reply = ask(a, "{\"cmd\":\"report\",\"id\":21,\"args\":{\"last\":1,\"last\":2}}");
	assert_string_equal(error_class(reply), "DuplicateKey");
	if (!strstr(error_desc(reply), "\"last\" in /args"))
		fail_msg("desc does not name the key: %s", error_desc(reply));
	json_object_put(reply);

	reply = ask(a, "{\"cmd\":\"status\",\"id\":22}");
	assert_true(reply_ok(reply));
	json_object_put(reply);
}

/* {"cmd":"status","id":23} padded with blanks to n bytes (no newline). */
static char *padded_status(size_t n)
{
	static const char head[] = "{\"cmd\":\"status\",\"id\":23";
	char *line = malloc(n + 1);

	assert_non_null(line);
	memset(line, ' ', n);
	memcpy(line, head, strlen(head));
	line[n - 1] = '}';
	line[n] = '\0';
	return line;
}

static void test_agent_takes_a_line_of_exactly_256_kib(void **state)
{
	struct agent *a = *state;
	json_object *reply = NULL;
	char *line, err[256];

	line = padded_status(KVMLU_WIRE_LINE_MAX);
	reply = ask(a, line);
	if (!reply_ok(reply))
		fail_msg("a line of %d bytes: %s", KVMLU_WIRE_LINE_MAX, error_desc(reply));
	assert_int_equal(reply_id(reply), 23);
	json_object_put(reply);
	free(line);
	/* One byte more: LineTooLong (and the agent hangs up). */
	line = padded_status(KVMLU_WIRE_LINE_MAX + 1);
	assert_int_equal(write(a->fd, line, strlen(line)), (ssize_t)strlen(line));
	if (json_line_read(&a->r, WAIT_BOUND_MS, &reply, err, sizeof(err)))
		fail_msg("no reply to an overlong line: %s", err);
	assert_string_equal(error_class(reply), "LineTooLong");
	json_object_put(reply);
	free(line);
}

/*
 * A VMM that takes the agent's preflight `status` and answers nothing
 * until the test lets it go: the host-update is then in progress for as
 * long as the test wants, with no timing involved.
 */
struct mute_vmm {
	int listen_fd;
	int asked[2];		/* it got the agent's request */
	int go[2];		/* the test lets it hang up */
	pthread_t thread;
};

static void *mute_vmm_thread(void *arg)
{
	struct mute_vmm *m = arg;
	char c;
	int fd = accept(m->listen_fd, NULL, NULL);

	/* The request line is read, never answered. */
	while (fd >= 0 && read(fd, &c, 1) == 1 && c != '\n')
		;
	assert_int_equal(write(m->asked[1], "a", 1), 1);
	assert_int_equal(read(m->go[0], &c, 1), 1);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void mute_vmm_start(struct mute_vmm *m, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	m->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(m->listen_fd >= 0);
	assert_int_equal(bind(m->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(m->listen_fd, 4), 0);
	assert_int_equal(pipe(m->asked), 0);
	assert_int_equal(pipe(m->go), 0);
	assert_int_equal(pthread_create(&m->thread, NULL, mute_vmm_thread, m), 0);
}

static void mute_vmm_stop(struct mute_vmm *m)
{
	assert_int_equal(write(m->go[1], "g", 1), 1);
	pthread_join(m->thread, NULL);
	close(m->listen_fd);
	close(m->asked[0]);
	close(m->asked[1]);
	close(m->go[0]);
	close(m->go[1]);
}

/* The host-update's final reply on its connection, after its event lines. */
static json_object *final_reply(struct agent *a)
{
	json_object *line = NULL;
	char err[256];

	for (;;) {
		if (json_line_read(&a->r, WAIT_BOUND_MS, &line, err, sizeof(err)))
			fail_msg("no reply to host-update: %s", err);
		if (json_object_object_get_ex(line, "ok", NULL))
			return line;
		json_object_put(line);
	}
}

static struct json_object *replace_qemu_must_not_run(const struct agent_config *cfg,
						     const struct json_line_request *rq)
{
	(void)cfg;
	(void)rq;
	fail_msg("domain-replace-qemu ran while a host-update held the host");
	return NULL;
}

/* A domain-replace-qemu that runs until the test lets it end. */
static int replace_entered[2], replace_go[2];

static struct json_object *replace_qemu_blocking(const struct agent_config *cfg,
						 const struct json_line_request *rq)
{
	char c;

	(void)cfg;
	assert_int_equal(write(replace_entered[1], "e", 1), 1);
	assert_int_equal(read(replace_go[0], &c, 1), 1);
	return json_line_reply_ok(json_object_new_object(), rq->id);
}

/*
 * While a domain-replace-qemu runs, a host-update is refused with Busy
 * naming it (the update would suspend or save the domain being
 * replaced); once it ended, the next host-update is not refused as Busy.
 */
static void test_agent_refuses_host_update_during_replace_qemu(void **state)
{
	struct agent *a = *state, *b;
	json_object *reply;
	struct pollfd p;
	const char *line = "{\"cmd\":\"domain-replace-qemu\",\"id\":1,\"args\":{\"domain\":\"web1\"}}\n";

	assert_int_equal(pipe(replace_entered), 0);
	assert_int_equal(pipe(replace_go), 0);
	agent_commands_set_replace_qemu(replace_qemu_blocking);
	assert_int_equal(write(a->fd, line, strlen(line)), (ssize_t)strlen(line));
	p = (struct pollfd){ .fd = replace_entered[0], .events = POLLIN };
	if (poll(&p, 1, WAIT_BOUND_MS) != 1)
		fail_msg("domain-replace-qemu never reached its handler");

	assert_int_equal(agent_connect(a, &b), 0);
	reply = ask(b, "{\"cmd\":\"host-update\",\"id\":2,\"args\":{\"kernel\":\"/nonexistent/vmlinuz\",\"dry-run\":true}}");
	/* Let the handler end first, so that a failure below cannot hang the teardown. */
	assert_int_equal(write(replace_go[1], "g", 1), 1);
	if (strcmp(error_class(reply), "Busy") ||
	    !strstr(error_desc(reply), "domain-replace-qemu is running"))
		fail_msg("host-update during domain-replace-qemu: %s", json_object_to_json_string(reply));
	json_object_put(reply);

	reply = ask(a, "{\"cmd\":\"status\",\"id\":3}");
	json_object_put(reply);
	agent_commands_set_replace_qemu(NULL);
	reply = ask(b, "{\"cmd\":\"host-update\",\"id\":4,\"args\":{\"kernel\":\"/nonexistent/vmlinuz\",\"dry-run\":true}}");
	if (!strcmp(error_class(reply), "Busy"))
		fail_msg("host-update still Busy after domain-replace-qemu ended: %s", error_desc(reply));
	json_object_put(reply);
	agent_disconnect(b);
	for (int i = 0; i < 2; i++) {
		close(replace_entered[i]);
		close(replace_go[i]);
	}
}

/*
 * `status` on a second connection answers while a host-update waits on a
 * VMM (the update's preflight holds its `status`), and shows that update
 * in progress; a second host-update then is refused with Busy. The VMM
 * hangs up only after both replies, so a status that waited for the update
 * could not be answered at all, let alone with the update in it.
 */
static void test_agent_answers_status_while_a_host_update_runs(void **state)
{
	struct agent *a = *state, *b;
	struct mute_vmm vmm;
	json_object *reply, *ret, *u, *v;
	char path[128], line[512];
	struct pollfd p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/vmlinuz", a->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not a kernel: preflight refuses before loading it\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/vm0.sock", a->dir);
	mute_vmm_start(&vmm, path);

	snprintf(line, sizeof(line),
		 "{\"cmd\":\"host-update\",\"id\":1,\"args\":{\"kernel\":\"%s/vmlinuz\",\"dry-run\":true,\"append\":\"kho=on liveupdate=on\"}}\n",
		 a->dir);
	assert_int_equal(write(a->fd, line, strlen(line)), (ssize_t)strlen(line));
	/* Not a timing assertion: the bound only ends a wait that would never end. */
	p = (struct pollfd){ .fd = vmm.asked[0], .events = POLLIN };
	if (poll(&p, 1, WAIT_BOUND_MS) != 1)
		fail_msg("the host-update never asked the VMM for its status");

	assert_int_equal(agent_connect(a, &b), 0);
	reply = ask(b, "{\"cmd\":\"status\",\"id\":2}");
	if (!reply_ok(reply))
		fail_msg("status refused: %s", error_desc(reply));
	assert_int_equal(reply_id(reply), 2);
	assert_true(json_object_object_get_ex(reply, "return", &ret));
	assert_true(json_object_object_get_ex(ret, "update", &u));
	if (!json_object_is_type(u, json_type_object))
		fail_msg("status shows no update in progress: %s", json_object_to_json_string(reply));
	assert_true(json_object_object_get_ex(u, "update_id", &v));
	assert_true(json_object_get_string_len(v) > 0);
	assert_true(json_object_object_get_ex(u, "phase", &v));
	assert_string_equal(json_object_get_string(v), "preflight");
	json_object_put(reply);

	reply = ask(b, "{\"cmd\":\"host-update\",\"id\":3,\"args\":{\"kernel\":\"/boot/vmlinuz\"}}");
	assert_string_equal(error_class(reply), "Busy");
	assert_int_equal(reply_id(reply), 3);
	json_object_put(reply);
	/* Nor may a domain's QEMU be replaced while the update may save it. */
	agent_commands_set_replace_qemu(replace_qemu_must_not_run);
	reply = ask(b, "{\"cmd\":\"domain-replace-qemu\",\"id\":5,\"args\":{\"domain\":\"web1\"}}");
	agent_commands_set_replace_qemu(NULL);
	assert_string_equal(error_class(reply), "Busy");
	if (!strstr(error_desc(reply), "a host-update is running"))
		fail_msg("Busy does not say what runs: %s", error_desc(reply));
	json_object_put(reply);

	mute_vmm_stop(&vmm);
	reply = final_reply(a);
	assert_true(reply_ok(reply));
	assert_int_equal(reply_id(reply), 1);
	assert_true(json_object_object_get_ex(reply, "return", &ret));
	assert_true(json_object_object_get_ex(ret, "outcome", &v));
	assert_string_equal(json_object_get_string(v), "refused");
	json_object_put(reply);

	/* Over: status says no update runs. */
	reply = ask(b, "{\"cmd\":\"status\",\"id\":4}");
	assert_true(json_object_object_get_ex(reply, "return", &ret));
	assert_true(json_object_object_get_ex(ret, "update", &u));
	assert_null(u);
	json_object_put(reply);
	agent_disconnect(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_agent_commands_refuse_arguments_at_the_top_level,
						agent_up, agent_down),
		cmocka_unit_test_setup_teardown(test_agent_commands_take_arguments_under_args,
						agent_up, agent_down),
		cmocka_unit_test_setup_teardown(test_agent_commands_use_the_shared_error_classes,
						agent_up, agent_down),
		cmocka_unit_test_setup_teardown(test_agent_refuses_a_request_with_a_key_twice,
						agent_up, agent_down),
		cmocka_unit_test_setup_teardown(test_agent_takes_a_line_of_exactly_256_kib,
						agent_up, agent_down),
		cmocka_unit_test_setup_teardown(test_agent_refuses_host_update_during_replace_qemu,
						agent_up, agent_down),
		cmocka_unit_test_setup_teardown(test_agent_answers_status_while_a_host_update_runs,
						agent_up, agent_down),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
