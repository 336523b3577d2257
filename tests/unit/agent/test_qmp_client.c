// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu's QMP client (agent/libvirt/qmp_client.c, qmp_reply.c) against a
 * fake QEMU: a thread on the other end of a socketpair that checks each
 * command it gets and answers from a script. The answers are QEMU 7.2's
 * own (taken from qemu-system-x86_64 7.2 run by kvmlu-qemu, "\r\n" and
 * all), then events between them, errors, and oversize, malformed and
 * hostile lines, each of which must be refused with the client broken.
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
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/libvirt/qmp_client.h"
#include "common/clock.h"

#define GREETING "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 22, \"minor\": 2, \"major\": 7}, " \
	"\"package\": \"Debian 1:7.2+dfsg-7+deb12u18+b3\"}, \"capabilities\": [\"oob\"]}}\r\n"
#define CAPS_OK "{\"return\": {}, \"id\": 1}\r\n"
#define VERSION_2 "{\"return\": {\"qemu\": {\"micro\": 22, \"minor\": 2, \"major\": 7}, " \
	"\"package\": \"Debian 1:7.2+dfsg-7+deb12u18+b3\"}, \"id\": 2}\r\n"
#define STATUS_2 "{\"return\": {\"status\": \"prelaunch\", \"singlestep\": false, " \
	"\"running\": false}, \"id\": 2}\r\n"
#define MEMDEV_2 "{\"return\": [{\"share\": true, \"reserve\": true, \"prealloc\": false, " \
	"\"host-nodes\": [], \"size\": 67108864, \"merge\": true, \"dump\": true, " \
	"\"policy\": \"default\", \"id\": \"pc.ram\"}], \"id\": 2}\r\n"
#define CAPS_2(state) "{\"return\": [{\"state\": false, \"capability\": \"xbzrle\"}, " \
	"{\"state\": false, \"capability\": \"events\"}, {\"state\": false, " \
	"\"capability\": \"postcopy-ram\"}, {\"state\": " state ", \"capability\": " \
	"\"x-ignore-shared\"}, {\"state\": false, \"capability\": \"zero-copy-send\"}], \"id\": 2}\r\n"
#define NOT_FOUND_3 "{\"id\": 3, \"error\": {\"class\": \"CommandNotFound\", " \
	"\"desc\": \"The command query-memdev has not been found\"}}\r\n"
#define EVENT "{\"timestamp\": {\"seconds\": 1796624054, \"microseconds\": 624774}, " \
	"\"event\": \"SHUTDOWN\", \"data\": {\"guest\": false, \"reason\": \"host-qmp-quit\"}}\r\n"

#define BIG	((const char *)1)	/* send one line of QMP_LINE_MAX + 1 bytes */
#define FLOOD	((const char *)2)	/* send QMP_EVENTS_MAX + 1 events */
#define HUGE	((const char *)3)	/* send 300 KiB without a newline */
#define TRICKLE	((const char *)4)	/* one event every 100 ms for 3 s, no answer */
#define TRICKLE_EVENTS 30
#define TIMEOUT_MS 1000	/* generous: the machine may be busy */

struct step {
	const char *expect;	/* a substring of the command to read first, or NULL */
	const char *send;	/* bytes to answer, or BIG / FLOOD / HUGE */
};

struct fake {
	int fd;
	const struct step *steps;
	bool close_at_end;	/* else hold the socket open until the test is done */
	pthread_t thread;
	int done[2];		/* the test writes here when done */
	char failure[512];
	int commands;
};

static void send_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = send(fd, s, len, MSG_NOSIGNAL);

		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

static void send_big(int fd, const char *what)
{
	size_t len = what == HUGE ? 300 * 1024 : QMP_LINE_MAX + 1;
	char *s = malloc(len + 2);

	if (!s)
		return;
	if (what == TRICKLE) {
		free(s);
		for (int i = 0; i < TRICKLE_EVENTS; i++) {
			send_all(fd, EVENT, strlen(EVENT));
			usleep(100000);
		}
		return;
	}
	if (what == FLOOD) {
		free(s);
		for (int i = 0; i <= QMP_EVENTS_MAX; i++)
			send_all(fd, EVENT, strlen(EVENT));
		return;
	}
	/* A valid JSON string line that is simply too long. */
	memset(s, 'a', len);
	memcpy(s, "{\"event\":\"", 10);
	memcpy(s + len - 2, "\"}", 2);
	s[len] = '\n';
	send_all(fd, s, what == HUGE ? len - 5 : len + 1);
	free(s);
}

static int read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 5000) <= 0 || read(fd, buf + n, 1) != 1)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

static void *fake_thread(void *arg)
{
	struct fake *f = arg;
	char line[4096];

	for (const struct step *s = f->steps; s->expect || s->send; s++) {
		if (s->expect) {
			if (read_line(f->fd, line, sizeof(line))) {
				snprintf(f->failure, sizeof(f->failure), "no command (wanted %s)",
					 s->expect);
				break;
			}
			f->commands++;
			if (!strstr(line, s->expect)) {
				snprintf(f->failure, sizeof(f->failure), "command %.200s, wanted %.200s", line,
					 s->expect);
				break;
			}
		}
		if (s->send == BIG || s->send == FLOOD || s->send == HUGE || s->send == TRICKLE)
			send_big(f->fd, s->send);
		else if (s->send)
			send_all(f->fd, s->send, strlen(s->send));
	}
	if (!f->close_at_end) {
		struct pollfd p = { .fd = f->done[0], .events = POLLIN };

		poll(&p, 1, 10000);
	}
	shutdown(f->fd, SHUT_RDWR);
	close(f->fd);
	return NULL;
}

/* A fake QEMU on steps; *client_fd is the client's end. */
static void fake_start(struct fake *f, const struct step *steps, bool close_at_end,
		       int *client_fd)
{
	int sv[2];

	memset(f, 0, sizeof(*f));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(f->done), 0);
	f->fd = sv[1];
	f->steps = steps;
	f->close_at_end = close_at_end;
	*client_fd = sv[0];
	assert_int_equal(pthread_create(&f->thread, NULL, fake_thread, f), 0);
}

static void fake_stop(struct fake *f)
{
	assert_int_equal(write(f->done[1], "x", 1), 1);
	pthread_join(f->thread, NULL);
	close(f->done[0]);
	close(f->done[1]);
	if (f->failure[0])
		fail_msg("fake QEMU: %s", f->failure);
}

/* The client opened on steps (greeting and qmp_capabilities first). */
static void open_on(struct fake *f, struct qmp_client *c, const struct step *steps,
		    bool close_at_end)
{
	char err[512];
	int fd;

	fake_start(f, steps, close_at_end, &fd);
	if (qmp_client_open(c, fd, TIMEOUT_MS, err, sizeof(err)))
		fail_msg("open: %s", err);
	assert_int_equal(c->version.major, 7);
	assert_int_equal(c->version.minor, 2);
	assert_int_equal(c->version.micro, 22);
}

#define OPEN_STEPS { NULL, GREETING }, { "{\"execute\":\"qmp_capabilities\",\"id\":1}", CAPS_OK }

static void test_qmp_client_reads_qemu_72s_answers(void **state)
{
	static const struct step steps[] = {
		OPEN_STEPS,
		{ "\"execute\":\"query-version\"", VERSION_2 },
		{ NULL, NULL },
	};
	static const struct step status[] = {
		OPEN_STEPS, { "\"execute\":\"query-status\",\"id\":2", STATUS_2 }, { NULL, NULL },
	};
	static const struct step memdev[] = {
		OPEN_STEPS, { "\"execute\":\"query-memdev\"", MEMDEV_2 }, { NULL, NULL },
	};
	static const struct step caps[] = {
		OPEN_STEPS,
		{ "{\"execute\":\"migrate-set-capabilities\",\"arguments\":{\"capabilities\":"
		  "[{\"capability\":\"x-ignore-shared\",\"state\":true}]},\"id\":2}",
		  "{\"return\": {}, \"id\": 2}\r\n" },
		{ "\"execute\":\"query-migrate-capabilities\",\"id\":3",
		  "{\"return\": [{\"state\": true, \"capability\": \"x-ignore-shared\"}], \"id\": 3}\r\n" },
		{ NULL, NULL },
	};
	struct qmp_client c;
	struct qmp_version v;
	struct qmp_status s;
	struct qmp_memdev d[4];
	struct fake f;
	char err[512];
	size_t nr;
	bool on = false;

	(void)state;
	open_on(&f, &c, steps, true);
	assert_int_equal(qmp_query_version(&c, &v, err, sizeof(err)), 0);
	assert_int_equal(v.major * 10000 + v.minor * 100 + v.micro, 70222);
	qmp_client_close(&c);
	fake_stop(&f);

	open_on(&f, &c, status, true);
	assert_int_equal(qmp_query_status(&c, &s, err, sizeof(err)), 0);
	assert_false(s.running);
	assert_string_equal(s.status, "prelaunch");
	qmp_client_close(&c);
	fake_stop(&f);

	open_on(&f, &c, memdev, true);
	assert_int_equal(qmp_query_memdev(&c, d, 4, &nr, err, sizeof(err)), 0);
	assert_int_equal(nr, 1);
	assert_string_equal(d[0].id, "pc.ram");
	assert_int_equal(d[0].size, 64 << 20);
	assert_true(d[0].share);
	assert_false(d[0].prealloc);
	qmp_client_close(&c);
	fake_stop(&f);

	open_on(&f, &c, caps, true);
	assert_int_equal(qmp_migrate_set_capability(&c, "x-ignore-shared", true, err, sizeof(err)), 0);
	assert_int_equal(qmp_query_migrate_capability(&c, "x-ignore-shared", &on, err, sizeof(err)), 0);
	assert_true(on);
	qmp_client_close(&c);
	fake_stop(&f);
}

static void test_qmp_client_skips_events_and_reports_errors(void **state)
{
	static const struct step steps[] = {
		{ NULL, EVENT GREETING },	/* no event comes before it in QEMU; one here must not matter */
		{ "qmp_capabilities", EVENT EVENT CAPS_OK },
		{ "query-migrate-capabilities", EVENT CAPS_2("false") EVENT },
		{ "query-memdev", NOT_FOUND_3 },
		{ "query-memdev", EVENT "{\"return\": [], \"id\": 4}\n" },
		{ "query-migrate-capabilities",
		  "{\"return\": [{\"state\": false, \"capability\": \"xbzrle\"}], \"id\": 5}\n" },
		{ "query-status", "{\"return\": {\"status\": \"running\", \"running\": true}, \"id\": 6}\n" },
		{ NULL, NULL },
	};
	struct qmp_client c;
	struct qmp_memdev d[2];
	struct qmp_status s;
	struct fake f;
	char err[512];
	size_t nr = 9;
	bool on = true;

	(void)state;
	open_on(&f, &c, steps, true);
	assert_int_equal(qmp_query_migrate_capability(&c, "x-ignore-shared", &on, err, sizeof(err)), 0);
	assert_false(on);
	/* QEMU's error: -EREMOTEIO with its class and text, and the client goes on. */
	assert_int_equal(qmp_query_memdev(&c, d, 2, &nr, err, sizeof(err)), -EREMOTEIO);
	assert_string_equal(err, "query-memdev: CommandNotFound: The command query-memdev has not been found");
	assert_int_equal(nr, 0);
	assert_int_equal(qmp_query_memdev(&c, d, 2, &nr, err, sizeof(err)), 0);
	assert_int_equal(nr, 0);
	/* A capability QEMU does not list: -ENOENT, an answer, not a fault. */
	assert_int_equal(qmp_query_migrate_capability(&c, "x-ignore-shared", &on, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no migration capability x-ignore-shared"));
	assert_int_equal(qmp_query_status(&c, &s, err, sizeof(err)), 0);
	assert_true(s.running);
	assert_int_equal(c.events_skipped, 6);
	qmp_client_close(&c);
	fake_stop(&f);
}

/* One hostile answer to query-status: the call fails with rc and why, the client is broken. */
struct hostile {
	const char *answer;
	int rc;
	const char *why;
};

static void test_qmp_client_refuses_hostile_answers(void **state)
{
	static const struct hostile cases[] = {
		{ "{\"return\": {\"status\": \"running\", \"running\": true}, \"id\": 7}\n", -EPROTO,
		  "answer for another id" },
		{ "{\"return\": {\"status\": \"running\", \"running\": true}}\n", -EPROTO,
		  "without an id" },
		{ "{\"return\": {\"status\": \"running\", \"running\": true}, \"id\": \"2\"}\n", -EPROTO,
		  "reply id is string" },
		{ "{\"return\": {\"status\": \"running\", \"running\": \"yes\"}, \"id\": 2}\n", -EPROTO,
		  "\"running\" missing or not a boolean" },
		{ "{\"return\": {\"status\": \"Run\\nning\", \"running\": true}, \"id\": 2}\n", -EPROTO,
		  "not a short lowercase word" },
		{ "{\"return\": {\"status\": \"running\", \"running\": true, \"running\": false}, \"id\": 2}\n",
		  -EBADMSG, "duplicate key" },
		{ "{\"return\": {}, \"error\": {\"class\": \"X\", \"desc\": \"y\"}, \"id\": 2}\n", -EPROTO,
		  "more than one" },
		{ "{\"id\": 2}\n", -EPROTO, "with none of" },
		{ "{\"error\": {\"class\": 1, \"desc\": \"y\"}, \"id\": 2}\n", -EPROTO,
		  "error without a class and desc string" },
		{ "[1, 2]\n", -EBADMSG, "must be a JSON object" },
		{ "{\"return\": {}, \"id\": 2}\xff\n", -EBADMSG, "QMP line refused" },
		{ "{\"return\": {\"a\": \"\\u0000\"}, \"id\": 2} {}\n", -EBADMSG, "QMP line refused" },
		{ "{\"return\": [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]], \"id\": 2}\n", -EBADMSG,
		  "QMP line refused" },
		{ GREETING, -EPROTO, "second greeting" },
		{ "{\"return\": {\"status\": \"running\", \"running\": true}, \"id\": 2}", -ETIMEDOUT,
		  "no answer within 1000 ms" },
		{ "", -ETIMEDOUT, "no answer within 1000 ms" },
		{ BIG, -EMSGSIZE, "limit 65536" },
		{ HUGE, -EMSGSIZE, "line longer than" },
		{ FLOOD, -EPROTO, "more than 1024 events" },
		/* Events do not stretch the deadline: the answer is due in 1000 ms all told. */
		{ TRICKLE, -ETIMEDOUT, "no answer within 1000 ms" },
	};
	struct qmp_client c;
	struct qmp_status s;
	struct qmp_version v;
	struct fake f;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct step steps[] = {
			OPEN_STEPS, { "query-status", cases[i].answer }, { NULL, NULL },
		};

		open_on(&f, &c, steps, false);
		err[0] = '\0';
		assert_int_equal(qmp_query_status(&c, &s, err, sizeof(err)), cases[i].rc);
		/*
		 * Gave up while the trickle still ran: had each event moved the
		 * deadline, it would have read all of them first.
		 */
		if (cases[i].answer == TRICKLE && c.events_skipped >= TRICKLE_EVENTS)
			fail_msg("case %zu: read all %u trickled events before timing out", i,
				 (unsigned int)c.events_skipped);
		if (!strstr(err, cases[i].why))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, cases[i].why);
		assert_true(c.broken);
		/* Nothing more is sent on a lost stream. */
		assert_int_equal(qmp_query_version(&c, &v, err, sizeof(err)), -EPIPE);
		assert_non_null(strstr(err, "unusable"));
		qmp_client_close(&c);
		fake_stop(&f);
		assert_int_equal(f.commands, 2);
	}
}

static void test_qmp_client_refuses_odd_shapes_of_known_answers(void **state)
{
	static const struct {
		const char *cmd, *answer, *why;
	} cases[] = {
		{ "query-memdev", "{\"return\": [{\"size\": -1, \"share\": true, \"prealloc\": false}], \"id\": 2}\n",
		  "\"size\" -1 outside" },
		{ "query-memdev", "{\"return\": [{\"size\": 1, \"share\": 1, \"prealloc\": false}], \"id\": 2}\n",
		  "\"share\" missing or not a boolean" },
		{ "query-memdev", "{\"return\": [{\"id\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", "
		  "\"size\": 1, \"share\": true, \"prealloc\": false}], \"id\": 2}\n", "id not a string" },
		{ "query-memdev", "{\"return\": [{\"id\": \"a\\u0000b\", \"size\": 1, \"share\": true, "
		  "\"prealloc\": false}], \"id\": 2}\n", "id not a string" },
		{ "query-memdev", "{\"return\": [1], \"id\": 2}\n", "memory backend 0 is not an object" },
		{ "query-memdev", "{\"return\": [{}, {}, {}], \"id\": 2}\n", "3 memory backends, at most 2" },
		{ "query-memdev", "{\"return\": {}, \"id\": 2}\n", "not a list" },
		{ "query-migrate-capabilities", "{\"return\": [{\"state\": true, \"capability\": "
		  "\"x-ignore-shared\"}, {\"state\": false, \"capability\": \"x-ignore-shared\"}], \"id\": 2}\n",
		  "listed twice" },
		{ "query-migrate-capabilities", "{\"return\": [{\"state\": true}], \"id\": 2}\n", "has no name" },
		{ "query-migrate-capabilities", "{\"return\": [{\"state\": null, \"capability\": "
		  "\"x-ignore-shared\"}], \"id\": 2}\n", "\"state\" missing or not a boolean" },
		{ "query-version", "{\"return\": {\"qemu\": {\"micro\": 0, \"minor\": 2, \"major\": 70000}}, \"id\": 2}\n",
		  "\"major\" 70000 outside 0..65535" },
		{ "query-version", "{\"return\": {\"qemu\": {\"micro\": 0, \"minor\": 2}}, \"id\": 2}\n",
		  "\"major\" missing" },
		{ "query-version", "{\"return\": null, \"id\": 2}\n", "no version.qemu" },
	};
	struct qmp_client c;
	struct qmp_memdev d[2];
	struct qmp_version v;
	struct fake f;
	char err[512];
	size_t nr;
	bool on;
	int rc;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct step steps[] = {
			OPEN_STEPS, { cases[i].cmd, cases[i].answer }, { NULL, NULL },
		};

		open_on(&f, &c, steps, false);
		err[0] = '\0';
		if (!strcmp(cases[i].cmd, "query-memdev"))
			rc = qmp_query_memdev(&c, d, 2, &nr, err, sizeof(err));
		else if (!strcmp(cases[i].cmd, "query-version"))
			rc = qmp_query_version(&c, &v, err, sizeof(err));
		else
			rc = qmp_query_migrate_capability(&c, "x-ignore-shared", &on, err, sizeof(err));
		assert_true(rc == -EPROTO || rc == -E2BIG);
		if (!strstr(err, cases[i].why))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, cases[i].why);
		assert_true(c.broken);
		qmp_client_close(&c);
		fake_stop(&f);
	}
}

static void test_qmp_client_open_refuses_a_bad_start(void **state)
{
	static const struct {
		struct step steps[3];
		int rc;
		const char *why;
	} cases[] = {
		{ { { NULL, "{\"return\": {}}\n" }, { NULL, NULL } }, -EPROTO, "not a QMP greeting" },
		{ { { NULL, "{\"QMP\": {\"version\": {}}}\n" }, { NULL, NULL } }, -EPROTO,
		  "no version.qemu" },
		{ { { NULL, "{\"QMP\": 1}\n" }, { NULL, NULL } }, -EPROTO, "\"QMP\" is not an object" },
		{ { { NULL, "" }, { NULL, NULL } }, -ETIMEDOUT, "QMP greeting: no answer" },
		{ { { NULL, GREETING }, { "qmp_capabilities",
			"{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"x\"}}\n" },
		    { NULL, NULL } }, -EREMOTEIO, "qmp_capabilities: CommandNotFound: x" },
	};
	struct qmp_client c;
	struct fake f;
	char err[512];
	int fd;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_start(&f, cases[i].steps, false, &fd);
		err[0] = '\0';
		assert_int_equal(qmp_client_open(&c, fd, TIMEOUT_MS, err, sizeof(err)), cases[i].rc);
		if (!strstr(err, cases[i].why))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, cases[i].why);
		/* The fd is closed and nothing is left to free. */
		assert_int_equal(c.fd, -1);
		assert_null(c.r);
		fake_stop(&f);
	}
	/* A closed socket mid-line. */
	{
		static const struct step cut[] = { { NULL, "{\"QMP\": {" }, { NULL, NULL } };

		fake_start(&f, cut, true, &fd);
		assert_int_equal(qmp_client_open(&c, fd, TIMEOUT_MS, err, sizeof(err)), -EPIPE);
		assert_non_null(strstr(err, "in the middle of a line"));
		fake_stop(&f);
	}
	assert_int_equal(qmp_client_connect(&c, "/nonexistent/kvmlu.qmp", TIMEOUT_MS, err,
					    sizeof(err)), -ENOENT);
	assert_int_equal(c.fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qmp_client_reads_qemu_72s_answers),
		cmocka_unit_test(test_qmp_client_skips_events_and_reports_errors),
		cmocka_unit_test(test_qmp_client_refuses_hostile_answers),
		cmocka_unit_test(test_qmp_client_refuses_odd_shapes_of_known_answers),
		cmocka_unit_test(test_qmp_client_open_refuses_a_bad_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
