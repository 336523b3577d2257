// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the agent's socket (agent/daemon/agent_server.c and
 * agent_commands.c) over a socketpair: requests are {"cmd","id","args"},
 * an argument at the top level is refused with InvalidRequest naming it,
 * the same argument under "args" works, and errors carry the classes of
 * kvmlu/control_wire.h with the request's id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <grp.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/daemon/agent_config.h"
#include "agent/daemon/agent_server.h"
#include "common/json_line.h"

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

static int agent_up(void **state)
{
	struct agent *a = calloc(1, sizeof(*a));
	struct group *g = getgrgid(getgid());
	int sv[2];

	if (!a)
		return -1;
	snprintf(a->dir, sizeof(a->dir), "/tmp/kvmlu-test-agent-XXXXXX");
	if (!mkdtemp(a->dir))
		return -1;
	agent_config_defaults(&a->cfg);
	/* Our own group: peer_auth lets a non-root test in by its primary gid. */
	snprintf(a->cfg.group, sizeof(a->cfg.group), "%s", g ? g->gr_name : "root");
	snprintf(a->cfg.run_dir, sizeof(a->cfg.run_dir), "%s", a->dir);
	snprintf(a->cfg.history_dir, sizeof(a->cfg.history_dir), "%s", a->dir);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	a->fd = sv[0];
	a->theirs = sv[1];
	json_line_reader_init(&a->r, a->fd);
	if (pthread_create(&a->thread, NULL, serve_thread, a))
		return -1;
	*state = a;
	return 0;
}

static int agent_down(void **state)
{
	struct agent *a = *state;

	close(a->fd);
	pthread_join(a->thread, NULL);
	rmdir(a->dir);
	free(a);
	return 0;
}

/* Send one raw line, return the reply (a new reference). */
static json_object *ask(struct agent *a, const char *line)
{
	json_object *reply = NULL;
	char err[256];

	assert_int_equal(write(a->fd, line, strlen(line)), (ssize_t)strlen(line));
	assert_int_equal(write(a->fd, "\n", 1), 1);
	if (json_line_read(&a->r, 5000, &reply, err, sizeof(err)))
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
	json_object *reply, *ret, *updates;

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_agent_commands_refuse_arguments_at_the_top_level,
						agent_up, agent_down),
		cmocka_unit_test_setup_teardown(test_agent_commands_take_arguments_under_args,
						agent_up, agent_down),
		cmocka_unit_test_setup_teardown(test_agent_commands_use_the_shared_error_classes,
						agent_up, agent_down),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
