// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the update journal (agent/journal/journal.c): the round trip
 * through the checksummed envelope, and refusal of journals that were cut,
 * changed or made up.
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
#include <json-c/json.h>
#include <xxhash.h>

#include "agent/journal/domain_report.h"
#include "agent/journal/journal_json.h"

#define T0 1764763200000000000LL	/* 2025-12-03 12:00:00 UTC */

static struct journal *sample(void)
{
	struct journal *j = calloc(1, sizeof(*j));
	char err[256];

	assert_non_null(j);
	journal_init(j, T0);
	snprintf(j->kernel, sizeof(j->kernel), "/boot/vmlinuz-7.3");
	snprintf(j->initrd, sizeof(j->initrd), "/boot/initrd.img-7.3");
	snprintf(j->cmdline, sizeof(j->cmdline), "console=ttyS0 kho=on liveupdate=on");
	assert_int_equal(journal_add_vm(j, "vm1", "/run/kvmlu/vms/vm1.sock", err, sizeof(err)), 0);
	assert_int_equal(journal_add_vm(j, "db.2", "/run/kvmlu/vms/db.2.sock", err, sizeof(err)), 0);
	j->phase = UPDATE_KEXEC;
	j->phases[UPDATE_PREFLIGHT].start_ns = T0 + 1;
	j->phases[UPDATE_PREFLIGHT].end_ns = T0 + 1000;
	j->phases[UPDATE_PREPARE].start_ns = T0 + 2000;
	j->phases[UPDATE_PREPARE].end_ns = T0 + 9000;
	j->phases[UPDATE_PREPARE].failed = true;
	for (unsigned int i = 0; i < 2; i++) {
		struct journal_vm *vm = &j->vms[i];

		vm->state = JOURNAL_VM_PREPARED;
		snprintf(vm->session, sizeof(vm->session), "kvmlu/vm/%s", vm->name);
		snprintf(vm->checksum, sizeof(vm->checksum), "%032x", 0xabc + i);
		vm->memory_bytes = (256ULL << 20) * (i + 1);
		vm->paused_ns = T0 + 3000 + i;
		vm->prepared_ns = T0 + 4000 + i;
	}
	/* vm1 verified lazily: after it resumed. */
	j->vms[0].resumed_ns = T0 + 8000;
	j->vms[0].verified_ns = T0 + 9500;
	/* The VMM's steps, each its own value so a swap shows. */
	j->vms[0].steps = (struct journal_vm_steps){ .prepare_paused_ns = 5100000,
		.capture_ns = 3100000, .preserve_ram_ns = 60700000, .retrieve_ns = 15400000,
		.vm_create_ns = 30100000, .verify_start_ns = 9200000,
		.state_restore_ns = 32400000 };
	journal_note(j, "KHO scratch %d MiB is less than twice the estimate", 512);
	/* One libvirt domain saved and restored, one opted out. */
	j->nr_domains = 2;
	snprintf(j->domains[0].name, sizeof(j->domains[0].name), "web1");
	snprintf(j->domains[0].uuid, sizeof(j->domains[0].uuid), "3f1c0b2a-1111-4222-8333-944455556666");
	j->domains[0].state = LIBVIRT_DOMAIN_RESTORED;
	j->domains[0].suspended_ns = T0 + 2500;
	j->domains[0].saved_ns = T0 + 2900;
	j->domains[0].resumed_ns = T0 + 7002500;
	snprintf(j->domains[1].name, sizeof(j->domains[1].name), "quiet");
	snprintf(j->domains[1].uuid, sizeof(j->domains[1].uuid), "0a1c0b2a-1111-4222-8333-944455556666");
	j->domains[1].state = LIBVIRT_DOMAIN_OPTED_OUT;
	snprintf(j->domains[1].error, sizeof(j->domains[1].error), "left alone by request");
	return j;
}

static void test_journal_round_trip_keeps_everything(void **state)
{
	struct journal *j = sample(), *back = calloc(1, sizeof(*back));
	char err[256], *text;
	size_t len;

	(void)state;
	assert_non_null(back);
	assert_int_equal(journal_serialize(j, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	assert_int_equal(journal_parse(text, len, back, err, sizeof(err)), 0);
	/* Field by field equal, so the structs are equal byte for byte too. */
	assert_string_equal(back->update_id, j->update_id);
	assert_string_equal(back->cmdline, j->cmdline);
	assert_int_equal(back->phase, UPDATE_KEXEC);
	assert_int_equal(back->nr_vms, 2);
	assert_string_equal(back->vms[1].name, "db.2");
	assert_string_equal(back->vms[1].checksum, j->vms[1].checksum);
	assert_int_equal(back->vms[1].memory_bytes, 512ULL << 20);
	assert_int_equal(back->vms[0].paused_ns, T0 + 3000);
	assert_int_equal(back->vms[0].verified_ns, T0 + 9500);
	assert_int_equal(journal_vm_to_verified_ns(&back->vms[0]), 6500);
	assert_int_equal(journal_vm_to_verified_ns(&back->vms[1]), -1);
	assert_int_equal(back->vms[0].steps.capture_ns, 3100000);
	assert_int_equal(back->vms[0].steps.preserve_ram_ns, 60700000);
	assert_int_equal(back->vms[0].steps.state_restore_ns, 32400000);
	assert_int_equal(back->vms[1].steps.retrieve_ns, 0);
	assert_true(back->phases[UPDATE_PREPARE].failed);
	assert_int_equal(back->phases[UPDATE_PREFLIGHT].end_ns, T0 + 1000);
	assert_int_equal(back->nr_notes, 1);
	assert_int_equal(back->nr_domains, 2);
	assert_string_equal(back->domains[0].name, "web1");
	assert_int_equal(back->domains[0].state, LIBVIRT_DOMAIN_RESTORED);
	assert_int_equal(libvirt_domain_downtime_ns(&back->domains[0]), 7000000);
	assert_string_equal(back->domains[1].error, "left alone by request");
	assert_memory_equal(back, j, sizeof(*j));
	free(text);
	free(back);
	free(j);
}

static void expect_parse_refused(const char *text, int want, const char *needle)
{
	struct journal *j = calloc(1, sizeof(*j)), zero;
	char err[256] = "";

	assert_non_null(j);
	memset(&zero, 0, sizeof(zero));
	/* want 0: any error will do, the message is what is checked. */
	if (want)
		assert_int_equal(journal_parse(text, strlen(text), j, err, sizeof(err)), want);
	else
		assert_int_not_equal(journal_parse(text, strlen(text), j, err, sizeof(err)), 0);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
	assert_memory_equal(j, &zero, sizeof(zero));
	free(j);
}

static void test_journal_refuses_changed_body(void **state)
{
	struct journal *j = sample();
	char *text, *p;
	size_t len;

	(void)state;
	assert_int_equal(journal_serialize(j, &text, &len), 0);
	/* One VM name changed in place: same length, valid JSON, wrong sum. */
	p = strstr(text, "db.2");
	assert_non_null(p);
	p[0] = 'x';
	expect_parse_refused(text, -EBADMSG, "checksum mismatch");
	free(text);
	free(j);
}

static void test_journal_refuses_truncation(void **state)
{
	struct journal *j = sample();
	char *text;
	size_t len;

	(void)state;
	assert_int_equal(journal_serialize(j, &text, &len), 0);
	for (size_t cut = 0; cut < len; cut += len / 7 + 1) {
		struct journal *back = calloc(1, sizeof(*back));
		char err[256];

		assert_int_not_equal(journal_parse(text, cut, back, err, sizeof(err)), 0);
		free(back);
	}
	free(text);
	free(j);
}

/* A body with a correct checksum but wrong content: what a buggy writer makes. */
static char *envelope(const char *body)
{
	struct json_object *env = json_object_new_object();
	char hash[17], *out;

	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)XXH64(body, strlen(body), 0));
	json_object_object_add(env, "kvmlu-journal", json_object_new_int(1));
	json_object_object_add(env, "xxh64", json_object_new_string(hash));
	json_object_object_add(env, "body", json_object_new_string(body));
	out = strdup(json_object_to_json_string(env));
	json_object_put(env);
	return out;
}

static char *sample_body_with(const char *from, const char *to)
{
	struct journal *j = sample();
	struct json_object *o = journal_to_json(j);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						      JSON_C_TO_STRING_NOSLASHESCAPE);
	char *p = strstr(s, from), *out;

	assert_non_null(p);
	out = malloc(strlen(s) + strlen(to) + 1);
	memcpy(out, s, (size_t)(p - s));
	strcpy(out + (p - s), to);
	strcat(out, p + strlen(from));
	json_object_put(o);
	free(j);
	return out;
}

static void expect_body_refused(const char *from, const char *to, const char *needle)
{
	char *body = sample_body_with(from, to), *env = envelope(body);

	expect_parse_refused(env, 0, needle);
	free(env);
	free(body);
}

static void test_journal_refuses_bad_content_with_good_checksum(void **state)
{
	(void)state;
	/* Another VM's session: restoring it would run the wrong guest. */
	expect_body_refused("\"session\":\"kvmlu/vm/db.2\"", "\"session\":\"kvmlu/vm/vm1\"",
			    "is not VM db.2's");
	expect_body_refused("\"state\":\"prepared\"", "\"state\":\"paused-ish\"", "paused-ish");
	expect_body_refused("\"phase\":\"kexec\"", "\"phase\":\"reboot\"", "reboot");
	expect_body_refused("\"version\":1", "\"version\":2", "version");
	expect_body_refused("\"dry_run\":false", "\"dry_run\":false,\"extra\":1", "extra");
	expect_body_refused("\"name\":\"vm1\"", "\"name\":\"../../etc\"", "VM name");
	expect_body_refused("\"name\":\"vm1\"", "\"name\":\"db.2\"", "");
	expect_body_refused("\"checksum\":\"00000000000000000000000000000abc\"",
			    "\"checksum\":\"zz\"", "hex");
	expect_body_refused("\"control\":\"/run/kvmlu/vms/vm1.sock\"", "\"control\":\"vm1.sock\"",
			    "absolute");
	expect_body_refused("\"memory_bytes\":268435456", "\"memory_bytes\":\"big\"", "type");
	/* libvirt domains: every entry checked, a bad one refuses the journal. */
	expect_body_refused("\"name\":\"web1\"", "\"name\":\"web1\",\"kill\":1", "libvirt_domains");
	expect_body_refused("\"state\":\"restored\"", "\"state\":\"teleported\"", "teleported");
	expect_body_refused("\"uuid\":\"3f1c0b2a-1111-4222-8333-944455556666\"",
			    "\"uuid\":\"3f1c0b2a-1111-4222-8333-94445555666x\"", "not a UUID");
	expect_body_refused("\"uuid\":\"0a1c0b2a-1111-4222-8333-944455556666\"",
			    "\"uuid\":\"3f1c0b2a-1111-4222-8333-944455556666\"", "listed twice");
	expect_body_refused("\"saved_ns\":1764763200000002900", "\"saved_ns\":-5", "not a time");
	expect_body_refused("\"action\":\"managed-save\"", "\"action\":7", "wrong type");
	/* The VMM's steps: known keys, integers, no negative time. */
	expect_body_refused("\"retrieve_ns\":15400000", "\"retrieve_ns\":\"soon\"", "vmm_steps");
	expect_body_refused("\"retrieve_ns\":15400000", "\"retrieve_ns\":-7", "negative");
	expect_body_refused("\"retrieve_ns\":15400000", "\"retrieve_ns\":1,\"warp_ns\":1", "warp_ns");
	expect_body_refused("\"vmm_steps\":{\"prepare_paused_ns\":0,\"capture_ns\":0,"
			    "\"preserve_ram_ns\":0,\"retrieve_ns\":0,\"vm_create_ns\":0,"
			    "\"verify_start_ns\":0,\"state_restore_ns\":0}",
			    "\"vmm_steps\":0", "not an object");
}

static void test_journal_refuses_a_key_given_twice(void **state)
{
	struct journal *j = sample();
	char *text, *dup, *body, *env;
	size_t len;

	(void)state;
	assert_int_equal(journal_serialize(j, &text, &len), 0);
	/*
	 * A second "body" in front of the real one: json-c alone keeps the
	 * last, whose checksum matches, and took the journal.
	 */
	assert_int_equal(text[0], '{');
	dup = malloc(len + 32);
	assert_non_null(dup);
	snprintf(dup, len + 32, "{\"body\":\"{}\",%s", text + 1);
	expect_parse_refused(dup, -EINVAL, "duplicate key \"body\"");
	free(dup);
	free(text);
	free(j);
	/* Inside the body, with a good checksum, at any depth. */
	expect_body_refused("\"name\":\"vm1\"", "\"name\":\"vm0\",\"name\":\"vm1\"",
			    "duplicate key \"name\" in /vms/0");
	body = sample_body_with("\"name\":\"web1\"", "\"name\":\"web1\",\"name\":\"web1\"");
	env = envelope(body);
	expect_parse_refused(env, -EINVAL, "in /libvirt_domains/0");
	free(env);
	free(body);
}

static void test_journal_without_libvirt_domains_still_reads(void **state)
{
	/* Journals from before the array existed (history files) stay readable. */
	char *body = sample_body_with(",\"libvirt_domains\":[", ",\"old_domains\":["), *env;
	struct journal *j = calloc(1, sizeof(*j));
	struct json_object *o;
	char err[256];

	(void)state;
	assert_non_null(j);
	o = json_tokener_parse(body);
	assert_non_null(o);
	json_object_object_del(o, "old_domains");
	env = envelope(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	assert_int_equal(journal_parse(env, strlen(env), j, err, sizeof(err)), 0);
	assert_int_equal(j->nr_domains, 0);
	assert_int_equal(j->nr_vms, 2);
	json_object_put(o);
	free(env);
	/* Nor verified_ns, nor to_verified_ns (from before lazy verification). */
	o = json_tokener_parse(body);
	assert_non_null(o);
	json_object_object_del(o, "old_domains");
	for (size_t i = 0; i < json_object_array_length(json_object_object_get(o, "vms")); i++) {
		struct json_object *vm = json_object_array_get_idx(json_object_object_get(o, "vms"), i);

		json_object_object_del(vm, "verified_ns");
		json_object_object_del(vm, "to_verified_ns");
		json_object_object_del(vm, "vmm_steps");
	}
	env = envelope(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	memset(j, 0, sizeof(*j));
	assert_int_equal(journal_parse(env, strlen(env), j, err, sizeof(err)), 0);
	assert_int_equal(j->nr_vms, 2);
	assert_int_equal(j->vms[0].verified_ns, 0);
	assert_int_equal(j->vms[0].resumed_ns, T0 + 8000);
	assert_int_equal(j->vms[0].steps.capture_ns, 0);
	json_object_put(o);
	free(env);
	free(body);
	free(j);
}

/*
 * A libvirt domain's downtime is written as integer ns only; the float
 * downtime_ms journals wrote before integer durations still reads.
 */
static void test_journal_domain_downtime_integer_ns(void **state)
{
	struct libvirt_domain_report d = { .name = "web1",
		.uuid = "3f1c1b2a-0000-4000-8000-000000000001",
		.state = LIBVIRT_DOMAIN_RESTORED, .suspended_ns = 1000000000,
		.resumed_ns = 1003220000 };
	struct libvirt_domain_report back[2];
	struct json_object *arr = libvirt_domain_reports_to_json(&d, 1), *o, *v;
	unsigned int nr = 0;
	char err[256];

	(void)state;
	assert_non_null(arr);
	o = json_object_array_get_idx(arr, 0);
	assert_true(json_object_object_get_ex(o, "downtime_ns", &v));
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int64(v), 3220000);
	assert_false(json_object_object_get_ex(o, "downtime_ms", &v));
	json_object_put(arr);

	/* What an agent of the previous release wrote into the journal it handed over. */
	arr = json_tokener_parse("[{\"name\":\"web1\",\"uuid\":\"3f1c1b2a-0000-4000-8000-000000000001\","
				 "\"state\":\"restored\",\"was_paused\":false,"
				 "\"suspended_ns\":1000000000,\"resumed_ns\":1003220000,"
				 "\"action\":\"managed-save\",\"result\":\"ok\","
				 "\"downtime_ns\":3220000,\"downtime_ms\":3.22}]");
	assert_non_null(arr);
	assert_int_equal(libvirt_domain_reports_from_json(arr, back, &nr, err, sizeof(err)), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(libvirt_domain_downtime_ns(&back[0]), 3220000);
	json_object_put(arr);
}

static void test_journal_refuses_non_envelopes(void **state)
{
	(void)state;
	expect_parse_refused("", -EINVAL, "bytes");
	expect_parse_refused("{}", -EINVAL, "envelope");
	expect_parse_refused("{\"kvmlu-journal\":1,\"xxh64\":\"0\",\"body\":\"{}\",\"x\":1}",
			     -EINVAL, "envelope");
	expect_parse_refused("not json at all", -EINVAL, "JSON");
}

static void test_journal_add_vm_checks_names(void **state)
{
	struct journal *j = calloc(1, sizeof(*j));
	char err[256];

	(void)state;
	journal_init(j, T0);
	assert_int_equal(journal_add_vm(j, "a", "/s/a.sock", err, sizeof(err)), 0);
	assert_int_equal(journal_add_vm(j, "a", "/s/a2.sock", err, sizeof(err)), -EEXIST);
	assert_int_equal(journal_add_vm(j, "kvmlu-agent-journal", "/s/x.sock", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "reserved"));
	assert_int_equal(journal_add_vm(j, "bad name", "/s/x.sock", err, sizeof(err)), -EINVAL);
	for (unsigned int i = 1; i < JOURNAL_MAX_VMS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "v%u", i);
		assert_int_equal(journal_add_vm(j, name, "/s/v.sock", err, sizeof(err)), 0);
	}
	assert_int_equal(journal_add_vm(j, "onemore", "/s/o.sock", err, sizeof(err)), -ENOSPC);
	free(j);
}

static void test_journal_ids_differ_within_one_second(void **state)
{
	struct journal *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	/* Two refused updates a millisecond apart: two history files, not one. */
	journal_init(a, T0);
	journal_init(b, T0 + 1000000);
	assert_string_not_equal(a->update_id, b->update_id);
	assert_int_equal(strncmp(a->update_id, "20251203T120000Z-", 17), 0);
	/* Still in time order as text. */
	assert_true(strcmp(a->update_id, b->update_id) < 0);
	free(a);
	free(b);
}

static void test_journal_blackout_needs_both_ends(void **state)
{
	struct journal_vm vm = { .paused_ns = 100 };

	(void)state;
	assert_int_equal(journal_vm_blackout_ns(&vm), -1);
	vm.resumed_ns = 350;
	assert_int_equal(journal_vm_blackout_ns(&vm), 250);
	vm.resumed_ns = 50;
	assert_int_equal(journal_vm_blackout_ns(&vm), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_round_trip_keeps_everything),
		cmocka_unit_test(test_journal_refuses_changed_body),
		cmocka_unit_test(test_journal_refuses_truncation),
		cmocka_unit_test(test_journal_refuses_bad_content_with_good_checksum),
		cmocka_unit_test(test_journal_refuses_a_key_given_twice),
		cmocka_unit_test(test_journal_refuses_non_envelopes),
		cmocka_unit_test(test_journal_without_libvirt_domains_still_reads),
		cmocka_unit_test(test_journal_domain_downtime_integer_ns),
		cmocka_unit_test(test_journal_add_vm_checks_names),
		cmocka_unit_test(test_journal_ids_differ_within_one_second),
		cmocka_unit_test(test_journal_blackout_needs_both_ends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
