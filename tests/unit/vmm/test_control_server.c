// SPDX-License-Identifier: GPL-2.0
/*
 * vmm/control/server.c with commands of the test's own: a long command
 * that runs until the test lets it go does not hold up another client's
 * ANYTIME command, everything else is refused with Busy naming it, and
 * its reply reaches its client, also one that has shut down writing;
 * while a NO_ACCEPT one (upgrade) runs, an ANYTIME command that changes
 * the run state (pause) is Busy too. A request with a key twice runs
 * nothing; a line may be 256 KiB long. No VM and no /dev/kvm needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include <errno.h>

#include "common/json_line.h"
#include "vmm/control/server.h"

static int gate_pipe[2];

/* Runs until the test writes a byte into gate_pipe. */
static int cmd_slow(struct control_ctx *ctx, json_object *args, json_object **ret,
		    struct json_line_error *e)
{
	char b;

	(void)ctx;
	(void)args;
	(void)e;
	if (read(gate_pipe[0], &b, 1) != 1)
		return json_line_error_set(e, KVMLU_ERR_FAILED, "gate closed");
	*ret = json_object_new_object();
	json_object_object_add(*ret, "slow", json_object_new_boolean(1));
	return 0;
}

static int cmd_quick(struct control_ctx *ctx, json_object *args, json_object **ret,
		     struct json_line_error *e)
{
	(void)ctx;
	(void)args;
	(void)e;
	*ret = json_object_new_object();
	json_object_object_add(*ret, "quick", json_object_new_boolean(1));
	return 0;
}

static int stop_runs;

/* Stands for shutdown: the test checks it did not run. */
static int cmd_stop(struct control_ctx *ctx, json_object *args, json_object **ret,
		    struct json_line_error *e)
{
	(void)ctx;
	(void)args;
	(void)e;
	stop_runs++;
	*ret = json_object_new_object();
	return 0;
}

static const struct control_command test_cmds[] = {
	{ "slow", cmd_slow, NULL, CONTROL_CMD_LONG },
	{ "quick", cmd_quick, NULL, CONTROL_CMD_ANYTIME },
	{ "other", cmd_quick, NULL, 0 },
	{ "stop", cmd_stop, NULL, 0 },
	{ "exclusive", cmd_slow, NULL, CONTROL_CMD_LONG | CONTROL_CMD_NO_ACCEPT },
	{ "runstate", cmd_quick, NULL, CONTROL_CMD_ANYTIME | CONTROL_CMD_RUN_STATE },
};

struct rig {
	struct control_server server;
	struct control_ctx ctx;
	char path[64];
};

static int client(const char *path)
{
	char err[128];
	int fd = json_line_connect(path, 1000, err, sizeof(err));

	assert_true(fd >= 0);
	return fd;
}

static json_object *call(int fd, const char *line)
{
	struct json_line_reader *r = malloc(sizeof(*r));
	json_object *o = NULL;
	char err[128];

	assert_non_null(r);
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	json_line_reader_init(r, fd);
	assert_int_equal(json_line_read(r, 5000, &o, err, sizeof(err)), 0);
	free(r);
	return o;
}

static const char *error_class(json_object *o)
{
	json_object *e, *c;

	if (!json_object_object_get_ex(o, "error", &e) || !json_object_object_get_ex(e, "class", &c))
		return "";
	return json_object_get_string(c);
}

static int setup(void **state)
{
	struct rig *g = calloc(1, sizeof(*g));
	char err[256];

	assert_non_null(g);
	assert_int_equal(pipe(gate_pipe), 0);
	assert_int_equal(control_register(test_cmds, sizeof(test_cmds) / sizeof(test_cmds[0])), 0);
	snprintf(g->path, sizeof(g->path), "@kvmlu-test-control-%d", (int)getpid());
	g->ctx.listen_fd = -1;
	assert_int_equal(control_server_start(&g->server, g->path, &g->ctx, err, sizeof(err)), 0);
	*state = g;
	return 0;
}

static int teardown(void **state)
{
	struct rig *g = *state;

	/* Let any slow command still waiting finish, then stop. */
	if (write(gate_pipe[1], "xxxx", 4) < 0)
		return -1;
	control_server_stop(&g->server);
	close(gate_pipe[0]);
	close(gate_pipe[1]);
	free(g);
	return 0;
}

static void test_long_command_leaves_anytime_ones_answered_and_others_busy(void **state)
{
	struct rig *g = *state;
	int a = client(g->path), b = client(g->path);
	json_object *o;

	assert_int_equal(write(a, "{\"cmd\":\"slow\",\"id\":1}\n", 22), 22);
	/* The slow one is provably still running: it waits for our byte. */
	o = call(b, "{\"cmd\":\"quick\",\"id\":2}\n");
	assert_true(json_object_get_boolean(json_object_object_get(o, "ok")));
	json_object_put(o);
	o = call(b, "{\"cmd\":\"other\",\"id\":3}\n");
	assert_string_equal(error_class(o), KVMLU_ERR_BUSY);
	assert_non_null(strstr(json_object_to_json_string(o), "slow from another request is running"));
	assert_int_equal(json_object_get_int(json_object_object_get(o, "id")), 3);
	json_object_put(o);
	o = call(b, "{\"cmd\":\"slow\",\"id\":4}\n");
	assert_string_equal(error_class(o), KVMLU_ERR_BUSY);
	json_object_put(o);
	/* Malformed lines still get their own error, not Busy. */
	o = call(b, "{\"cmd\":\n");
	assert_string_equal(error_class(o), KVMLU_ERR_PARSE);
	json_object_put(o);

	assert_int_equal(write(gate_pipe[1], "x", 1), 1);
	{
		struct json_line_reader *r = malloc(sizeof(*r));
		char err[128];

		assert_non_null(r);
		json_line_reader_init(r, a);
		assert_int_equal(json_line_read(r, 5000, &o, err, sizeof(err)), 0);
		free(r);
	}
	assert_true(json_object_get_boolean(json_object_object_get(o, "ok")));
	assert_int_equal(json_object_get_int(json_object_object_get(o, "id")), 1);
	json_object_put(o);
	/* Done: the same command is accepted again. */
	o = call(b, "{\"cmd\":\"other\",\"id\":5}\n");
	assert_true(json_object_get_boolean(json_object_object_get(o, "ok")));
	json_object_put(o);
	close(a);
	close(b);
}

static void test_long_reply_reaches_a_client_that_shut_down_writing(void **state)
{
	struct rig *g = *state;
	struct json_line_reader *r = malloc(sizeof(*r));
	int a = client(g->path);
	json_object *o = NULL;
	char err[128];

	assert_non_null(r);
	assert_int_equal(write(a, "{\"cmd\":\"slow\",\"id\":9}\n", 22), 22);
	assert_int_equal(shutdown(a, SHUT_WR), 0);
	usleep(100000);
	assert_int_equal(write(gate_pipe[1], "x", 1), 1);
	json_line_reader_init(r, a);
	assert_int_equal(json_line_read(r, 5000, &o, err, sizeof(err)), 0);
	assert_int_equal(json_object_get_int(json_object_object_get(o, "id")), 9);
	json_object_put(o);
	/* And then the server closes it. */
	assert_int_equal(json_line_read(r, 5000, &o, err, sizeof(err)), -EPIPE);
	free(r);
	close(a);
}

static void test_a_request_with_cmd_twice_is_refused_and_runs_nothing(void **state)
{
	struct rig *g = *state;
	int a = client(g->path);
	json_object *o, *v;

	stop_runs = 0;
	/* json-c alone keeps the last "cmd": this would have run stop. */
	o = call(a, "{\"cmd\":\"quick\",\"cmd\":\"stop\",\"id\":4}\n");
	assert_string_equal(error_class(o), KVMLU_ERR_DUPLICATE_KEY);
	assert_non_null(strstr(json_object_to_json_string(o), "duplicate key \\\"cmd\\\""));
	assert_true(json_object_object_get_ex(o, "id", &v) == false);
	json_object_put(o);
	o = call(a, "{\"cmd\":\"stop\",\"args\":{\"x\":1,\"x\":2}}\n");
	assert_string_equal(error_class(o), KVMLU_ERR_DUPLICATE_KEY);
	json_object_put(o);
	assert_int_equal(stop_runs, 0);
	close(a);
}

/* {"cmd":"quick"} padded with blanks to n bytes, and its newline. */
static char *padded_quick(size_t n)
{
	static const char head[] = "{\"cmd\":\"quick\"";
	char *line = malloc(n + 2);

	assert_non_null(line);
	memset(line, ' ', n);
	memcpy(line, head, strlen(head));
	line[n - 1] = '}';
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}

static void test_a_line_of_exactly_256_kib_is_a_request(void **state)
{
	struct rig *g = *state;
	int a = client(g->path);
	char *line;
	json_object *o;

	line = padded_quick(KVMLU_WIRE_LINE_MAX);
	o = call(a, line);
	if (!json_object_object_get_ex(o, "return", NULL))
		fail_msg("a line of %d bytes: %s", KVMLU_WIRE_LINE_MAX, json_object_to_json_string(o));
	json_object_put(o);
	free(line);
	/* One byte more: LineTooLong, and the connection goes on. */
	line = padded_quick(KVMLU_WIRE_LINE_MAX + 1);
	o = call(a, line);
	assert_string_equal(error_class(o), KVMLU_ERR_LINE_TOO_LONG);
	json_object_put(o);
	free(line);
	o = call(a, "{\"cmd\":\"quick\"}\n");
	assert_true(json_object_object_get_ex(o, "return", NULL));
	json_object_put(o);
	close(a);
}

/* Reads the long command's reply on a and checks its id. */
static void long_reply(int a, int id)
{
	struct json_line_reader *r = malloc(sizeof(*r));
	json_object *o = NULL;
	char err[128];

	assert_non_null(r);
	json_line_reader_init(r, a);
	assert_int_equal(json_line_read(r, 5000, &o, err, sizeof(err)), 0);
	free(r);
	assert_int_equal(json_object_get_int(json_object_object_get(o, "id")), id);
	json_object_put(o);
}

static void test_run_state_command_busy_only_during_no_accept_one(void **state)
{
	struct rig *g = *state;
	int a = client(g->path), b = client(g->path);
	json_object *o;

	/* An ordinary long command: the run state may change beside it. */
	assert_int_equal(write(a, "{\"cmd\":\"slow\",\"id\":1}\n", 22), 22);
	o = call(b, "{\"cmd\":\"runstate\",\"id\":2}\n");
	assert_true(json_object_get_boolean(json_object_object_get(o, "ok")));
	json_object_put(o);
	assert_int_equal(write(gate_pipe[1], "x", 1), 1);
	long_reply(a, 1);
	/* An upgrade: it is Busy, while a plain ANYTIME command is answered. */
	assert_int_equal(write(a, "{\"cmd\":\"exclusive\",\"id\":3}\n", 27), 27);
	o = call(b, "{\"cmd\":\"runstate\",\"id\":4}\n");
	assert_string_equal(error_class(o), KVMLU_ERR_BUSY);
	assert_non_null(strstr(json_object_to_json_string(o), "exclusive from another request is running"));
	json_object_put(o);
	o = call(b, "{\"cmd\":\"quick\",\"id\":5}\n");
	assert_true(json_object_get_boolean(json_object_object_get(o, "ok")));
	json_object_put(o);
	assert_int_equal(write(gate_pipe[1], "x", 1), 1);
	long_reply(a, 3);
	close(a);
	close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_long_command_leaves_anytime_ones_answered_and_others_busy,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_reply_reaches_a_client_that_shut_down_writing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_request_with_cmd_twice_is_refused_and_runs_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_line_of_exactly_256_kib_is_a_request,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_state_command_busy_only_during_no_accept_one,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
