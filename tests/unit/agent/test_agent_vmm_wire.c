// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of what the agent reads from a VMM's control socket
 * (agent/vmm/vmm_client.c through agent/update/update_ops_host.c), with
 * a fake VMM on a UNIX socket that answers each command with a canned
 * line: durations are taken as the integer ns of protocol 2, exactly; the
 * float ms of protocol 1 are not read; a moment (paused_at, ...) a reply
 * lacks keeps the agent's own; a VMM whose status says another
 * protocol (or none, protocol 1) is refused at preflight, naming both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/config/agent_config.h"
#include "agent/vmm/vmm_client.h"
#include "agent/update/preflight.h"
#include "agent/update/update_ops_host.h"
#include "common/json_line.h"
#include "kvmlu/control_wire.h"

#define NR_CANNED 2

/* A VMM that answers `cmd[i]` with `line[i]`, one request per connection. */
struct fake_vmm {
	char dir[64];
	char path[128];
	int listen_fd;
	pthread_t thread;
	const char *cmd[NR_CANNED];
	const char *line[NR_CANNED];
};

static void *fake_vmm_thread(void *arg)
{
	struct fake_vmm *v = arg;

	for (;;) {
		struct json_line_reader r;
		json_object *req = NULL, *c;
		const char *reply = "{\"ok\":false,\"error\":{\"class\":\"UnknownCommand\",\"desc\":\"?\"}}";
		char err[128];
		int fd = accept(v->listen_fd, NULL, NULL);

		if (fd < 0)
			return NULL;	/* the listening socket was shut down */
		json_line_reader_init(&r, fd);
		if (!json_line_read(&r, 10000, &req, err, sizeof(err)) &&
		    json_object_object_get_ex(req, KVMLU_WIRE_CMD, &c))
			for (unsigned int i = 0; i < NR_CANNED; i++)
				if (v->cmd[i] && !strcmp(v->cmd[i], json_object_get_string(c)))
					reply = v->line[i];
		json_object_put(req);
		assert_true(write(fd, reply, strlen(reply)) == (ssize_t)strlen(reply));
		assert_int_equal(write(fd, "\n", 1), 1);
		close(fd);
	}
}

static int fake_vmm_up(void **state)
{
	struct fake_vmm *v = calloc(1, sizeof(*v));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	assert_non_null(v);
	snprintf(v->dir, sizeof(v->dir), "/tmp/kvmlu-wire-XXXXXX");
	assert_non_null(mkdtemp(v->dir));
	snprintf(v->path, sizeof(v->path), "%s/vm0.sock", v->dir);
	memcpy(sa.sun_path, v->path, strlen(v->path) + 1);
	v->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(v->listen_fd >= 0);
	assert_int_equal(bind(v->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(v->listen_fd, 4), 0);
	*state = v;
	return 0;
}

static void fake_vmm_start(struct fake_vmm *v)
{
	assert_int_equal(pthread_create(&v->thread, NULL, fake_vmm_thread, v), 0);
}

static int fake_vmm_down(void **state)
{
	struct fake_vmm *v = *state;

	/* accept() then fails: the thread ends. */
	shutdown(v->listen_fd, SHUT_RDWR);
	if (v->thread)
		pthread_join(v->thread, NULL);
	close(v->listen_fd);
	unlink(v->path);
	rmdir(v->dir);
	free(v);
	return 0;
}

static void ops_for(struct update_ops *ops, struct update_host_ctx *ctx, struct agent_config *cfg)
{
	agent_config_defaults(cfg);
	update_ops_host_init(ops, ctx, cfg);
	ctx->quiet = true;
}

static void journal_vm_at(struct journal_vm *vm, const struct fake_vmm *v)
{
	memset(vm, 0, sizeof(*vm));
	snprintf(vm->name, sizeof(vm->name), "vm0");
	assert_true(strlen(v->path) < sizeof(vm->control));
	memcpy(vm->control, v->path, strlen(v->path) + 1);
}

#define STATUS_V1 "{\"ok\":true,\"return\":{\"name\":\"vm0\",\"state\":\"running\",\"vcpus\":1," \
	"\"memory\":1048576,\"backend\":\"memfd\",\"preservable\":true,\"uptime\":12.5,"  \
	"\"version\":\"0.1.0\",\"pid\":42}}"
#define STATUS_V(n) "{\"ok\":true,\"return\":{\"name\":\"vm0\",\"state\":\"running\",\"vcpus\":1," \
	"\"memory\":1048576,\"backend\":\"memfd\",\"preservable\":true,\"uptime_ns\":12500000000," \
	"\"version\":\"0.2.0\",\"protocol\":" #n ",\"pid\":42}}"

/*
 * The facts of the one VM the fake VMM is, its status reply status_line,
 * and preflight's verdict on them.
 */
static int facts_and_preflight(struct fake_vmm *v, const char *status_line, struct vm_facts *vf,
			       char *err, size_t errlen)
{
	static struct journal j;
	struct host_facts h = { .liveupdate_dev = true, .kho_enabled = true,
				.mem_total = 64ull << 30, .mem_available = 32ull << 30 };
	struct update_host_ctx ctx;
	struct update_ops ops;
	struct agent_config cfg;

	v->cmd[0] = "status";
	v->line[0] = status_line;
	fake_vmm_start(v);
	ops_for(&ops, &ctx, &cfg);
	memset(&j, 0, sizeof(j));
	snprintf(j.cmdline, sizeof(j.cmdline), "kho=on liveupdate=on");
	j.nr_vms = 1;
	journal_vm_at(&j.vms[0], v);
	memset(vf, 0, sizeof(*vf));
	ops.vm_facts(ops.ctx, &j.vms[0], vf);
	update_ops_host_fini(&ctx);
	return preflight_evaluate(&h, vf, &j, &cfg, err, errlen);
}

/* A VMM of protocol 1 (status without "protocol"): preflight refuses it, naming both. */
static void test_preflight_refuses_a_vmm_of_protocol_1(void **state)
{
	struct fake_vmm *v = *state;
	struct vm_facts vf;
	char err[1024];

	assert_int_equal(facts_and_preflight(v, STATUS_V1, &vf, err, sizeof(err)), -EPERM);
	assert_true(vf.answered);
	if (!strstr(err, "VM vm0: its kvmlu-vmm 0.1.0 speaks control protocol 1, this agent") ||
	    !strstr(err, "speaks 2"))
		fail_msg("preflight did not name the protocols: %s", err);
}

/* A newer one (protocol 3) is refused just the same. */
static void test_preflight_refuses_a_vmm_of_a_newer_protocol(void **state)
{
	struct fake_vmm *v = *state;
	struct vm_facts vf;
	char err[1024];

	assert_int_equal(facts_and_preflight(v, STATUS_V(3), &vf, err, sizeof(err)), -EPERM);
	if (!strstr(err, "speaks control protocol 3, this agent"))
		fail_msg("preflight did not name protocol 3: %s", err);
}

/* Protocol 2: nothing about the protocol in the verdict, and the update may go on. */
static void test_preflight_takes_a_vmm_of_protocol_2(void **state)
{
	struct fake_vmm *v = *state;
	struct vm_facts vf;
	char err[1024] = "";
	int rc;

	rc = facts_and_preflight(v, STATUS_V(2), &vf, err, sizeof(err));
	assert_string_equal(vf.protocol_why, "");
	if (rc || strstr(err, "protocol"))
		fail_msg("preflight refused a protocol 2 VMM: %s", err);
}

/*
 * vm_prepare (or vm_verify, after a protocol 2 status) on vm0 at the fake
 * VMM, which answers prepare-update (or update-status) with reply: vm gets
 * what the agent read.
 */
static void vm_op_with(struct fake_vmm *v, bool verify, const char *reply, struct journal_vm *vm)
{
	struct update_host_ctx ctx;
	struct update_ops ops;
	struct agent_config cfg;
	char err[256];
	int rc;

	v->cmd[0] = verify ? "status" : "prepare-update";
	v->line[0] = verify ? STATUS_V(2) : reply;
	v->cmd[1] = verify ? "update-status" : NULL;
	v->line[1] = verify ? reply : NULL;
	fake_vmm_start(v);
	ops_for(&ops, &ctx, &cfg);
	journal_vm_at(vm, v);
	rc = verify ? ops.vm_verify(ops.ctx, vm, err, sizeof(err)) :
		      ops.vm_prepare(ops.ctx, vm, err, sizeof(err));
	update_ops_host_fini(&ctx);
	if (rc)
		fail_msg("%s refused: %s", verify ? "vm_verify" : "vm_prepare", err);
}

#define PREPARE_REPLY(durations) "{\"ok\":true,\"return\":{\"state\":\"prepared\"," \
	"\"session\":\"kvmlu/vm/vm0\",\"checksum\":\"0a082630ff1babfe4e51e583fb0b22bd\"," \
	"\"memory\":1048576,\"paused_at_ns\":1796299376699364654," durations "}}"

/* What the agent records from prepare-update's reply: the pause time and four durations. */
static void prepare_reads(void **state, const char *reply, int64_t prepare_ns,
			  int64_t prepare_paused_ns, int64_t capture_ns, int64_t preserve_ram_ns)
{
	struct journal_vm vm;

	vm_op_with(*state, false, reply, &vm);
	assert_int_equal(vm.paused_ns, 1796299376699364654LL);
	assert_int_equal(vm.vmm_prepare_ns, prepare_ns);
	assert_int_equal(vm.steps.prepare_paused_ns, prepare_paused_ns);
	assert_int_equal(vm.steps.capture_ns, capture_ns);
	assert_int_equal(vm.steps.preserve_ram_ns, preserve_ram_ns);
}

/* prepare-update's durations are the VMM's integer ns, to the nanosecond. */
static void test_prepare_durations_are_read_as_integer_ns(void **state)
{
	prepare_reads(state, PREPARE_REPLY("\"prepare_ns\":170234567,\"prepare_paused_ns\":5100001,"
					   "\"capture_ns\":3100999,\"preserve_ram_ns\":60700003"),
		      170234567, 5100001, 3100999, 60700003);
}

/* Protocol 1's float ms are not durations any more: nothing is read from them. */
static void test_prepare_float_ms_of_protocol_1_are_not_read(void **state)
{
	prepare_reads(state, PREPARE_REPLY("\"prepare_ms\":170.2,\"prepare_paused_ms\":5.1,"
					   "\"capture_ms\":3.1,\"preserve_ram_ms\":60.7,"
					   "\"prepare_ns\":170.2,\"capture_ns\":\"3100999\""),
		      0, 0, 0, 0);
}

/* update-status after the restore: the restore's durations, integer ns. */
static void test_restore_durations_are_read_as_integer_ns(void **state)
{
	struct fake_vmm *v = *state;
	struct journal_vm vm;

	vm_op_with(v, true,
		   "{\"ok\":true,\"return\":{\"phase\":\"restored\",\"session\":\"kvmlu/vm/vm0\","
		   "\"memory_verified\":true,\"checksum_now\":\"0a082630ff1babfe4e51e583fb0b22bd\","
		   "\"resumed_at_ns\":1796299377000000001,\"verified_at_ns\":1796299377100000002,"
		   "\"restore_ns\":41000007,\"retrieve_ns\":12000001,\"vm_create_ns\":9000002,"
		   "\"verify_start_ns\":300003,\"state_restore_ns\":2000004,"
		   "\"verification\":\"verified\"}}", &vm);
	assert_int_equal(vm.resumed_ns, 1796299377000000001LL);
	assert_int_equal(vm.verified_ns, 1796299377100000002LL);
	assert_int_equal(vm.vmm_restore_ns, 41000007);
	assert_int_equal(vm.steps.retrieve_ns, 12000001);
	assert_int_equal(vm.steps.vm_create_ns, 9000002);
	assert_int_equal(vm.steps.verify_start_ns, 300003);
	assert_int_equal(vm.steps.state_restore_ns, 2000004);
}

/* The check itself: a missing key is protocol 1; the version text is named. */
static void test_protocol_check_names_both_versions(void **state)
{
	json_object *o = json_object_new_object();
	char err[256];

	(void)state;
	json_object_object_add(o, KVMLU_KEY_VERSION, json_object_new_string("0.1.0"));
	assert_int_equal(vmm_client_check_protocol(o, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "kvmlu-vmm 0.1.0 speaks control protocol 1"));
	json_object_object_add(o, KVMLU_KEY_PROTOCOL, json_object_new_int(KVMLU_WIRE_PROTOCOL));
	assert_int_equal(vmm_client_check_protocol(o, err, sizeof(err)), 0);
	/* Not an integer: not this protocol either. */
	json_object_object_add(o, KVMLU_KEY_PROTOCOL, json_object_new_string("2"));
	assert_int_equal(vmm_client_check_protocol(o, err, sizeof(err)), -EPROTO);
	json_object_put(o);
}

/* A moment the reply does not give keeps the agent's own; a duration it does not give is 0. */
static void test_reply_fields_keep_moments_and_zero_durations(void **state)
{
	json_object *o = json_tokener_parse("{\"a\":5,\"b\":0,\"c\":\"7\",\"d\":-1,\"e\":9}");
	int64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7;
	const struct vmm_reply_field fields[] = {
		{ "a", &a, true }, { "b", &b, true }, { "c", &c, true }, { "d", &d, true },
		{ "e", &e, false }, { "c", &f, false }, { "none", &g, false },
	};

	(void)state;
	assert_non_null(o);
	vmm_client_reply_fields(o, fields, sizeof(fields) / sizeof(fields[0]));
	assert_int_equal(a, 5);
	assert_int_equal(b, 2);
	assert_int_equal(c, 3);
	assert_int_equal(d, 4);
	assert_int_equal(e, 9);
	assert_int_equal(f, 0);
	assert_int_equal(g, 0);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_preflight_refuses_a_vmm_of_protocol_1,
						fake_vmm_up, fake_vmm_down),
		cmocka_unit_test_setup_teardown(test_preflight_refuses_a_vmm_of_a_newer_protocol,
						fake_vmm_up, fake_vmm_down),
		cmocka_unit_test_setup_teardown(test_preflight_takes_a_vmm_of_protocol_2,
						fake_vmm_up, fake_vmm_down),
		cmocka_unit_test_setup_teardown(test_prepare_durations_are_read_as_integer_ns,
						fake_vmm_up, fake_vmm_down),
		cmocka_unit_test_setup_teardown(test_prepare_float_ms_of_protocol_1_are_not_read,
						fake_vmm_up, fake_vmm_down),
		cmocka_unit_test_setup_teardown(test_restore_durations_are_read_as_integer_ns,
						fake_vmm_up, fake_vmm_down),
		cmocka_unit_test(test_protocol_check_names_both_versions),
		cmocka_unit_test(test_reply_fields_keep_moments_and_zero_durations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
