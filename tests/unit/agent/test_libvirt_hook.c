// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the libvirt hook's input checks (agent/libvirt/libvirt_hook_event.c,
 * agent/libvirt/libvirt_metadata.c) and its message (libvirt_hook_notify.c): good
 * calls decode, odd argv and malformed or hostile XML are refused whole.
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

#include "agent/libvirt/libvirt_hook_event.h"
#include "agent/libvirt/libvirt_hook_notify.h"
#include "agent/libvirt/libvirt_metadata.h"

#define UUID "3f1c0b2a-1111-4222-8333-944455556666"

static const char good_xml[] =
	"<domain type='qemu'><name>web1</name><uuid>" UUID "</uuid>"
	"<metadata><other:x xmlns:other='urn:x' optout='yes'/></metadata>"
	"<memory unit='MiB'>32</memory></domain>";

static int args(struct libvirt_hook_event *ev, const char *name, const char *op,
		const char *sub, const char *extra, char *err)
{
	char *argv[] = { "kvmlu", (char *)name, (char *)op, (char *)sub, (char *)extra, NULL };

	return libvirt_hook_event_parse_args(5, argv, ev, err, 256);
}

static void test_libvirt_hook_decodes_a_good_call(void **state)
{
	struct libvirt_hook_event ev;
	char err[256];

	(void)state;
	assert_int_equal(args(&ev, "web1", "started", "begin", "-", err), 0);
	assert_string_equal(ev.domain, "web1");
	assert_int_equal(ev.op, LIBVIRT_HOOK_STARTED);
	assert_int_equal(libvirt_hook_event_parse_xml(good_xml, strlen(good_xml), &ev, err,
						      sizeof(err)), 0);
	assert_string_equal(ev.uuid, UUID);
	/* Another namespace's optout is not ours. */
	assert_false(ev.optout);
	assert_true(libvirt_hook_op_reported(LIBVIRT_HOOK_RECONNECT));
	assert_false(libvirt_hook_op_reported(LIBVIRT_HOOK_MIGRATE));
}

static void test_libvirt_hook_rejects_odd_argv(void **state)
{
	struct libvirt_hook_event ev, before;
	char *three[] = { "kvmlu", "web1", "start", "begin", NULL };
	char err[256], longname[300];

	(void)state;
	memset(&ev, 0x5a, sizeof(ev));
	before = ev;
	assert_int_equal(libvirt_hook_event_parse_args(4, three, &ev, err, sizeof(err)), -EINVAL);
	assert_int_equal(args(&ev, "web1", "explode", "begin", "-", err), -EINVAL);
	assert_non_null(strstr(err, "explode"));
	assert_int_equal(args(&ev, "", "start", "begin", "-", err), -EINVAL);
	assert_int_equal(args(&ev, "a/../b", "start", "begin", "-", err), -EINVAL);
	assert_int_equal(args(&ev, "evil\nline", "start", "begin", "-", err), -EINVAL);
	/* The refused name is shown without its newline: no forged log lines. */
	assert_null(strchr(err, '\n'));
	assert_int_equal(args(&ev, "web1", "start", "be gin", "-", err), -EINVAL);
	assert_int_equal(args(&ev, "web1", "start", "begin", "$(reboot)", err), -EINVAL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(args(&ev, longname, "start", "begin", "-", err), -EINVAL);
	assert_memory_equal(&ev, &before, sizeof(ev));
}

static int xml(struct libvirt_hook_event *ev, const char *text, char *err)
{
	return libvirt_hook_event_parse_xml(text, strlen(text), ev, err, 256);
}

static void test_libvirt_hook_rejects_malformed_and_hostile_xml(void **state)
{
	static const char *const bad[] = {
		"",
		"<domain><name>web1</name><uuid>" UUID "</uuid>",	/* cut short */
		"<notdomain><name>web1</name><uuid>" UUID "</uuid></notdomain>",
		"<domain><name>web2</name><uuid>" UUID "</uuid></domain>",
		"<domain><name>web1</name><name>web1</name><uuid>" UUID "</uuid></domain>",
		"<domain><name>web1</name></domain>",
		"<domain><name>web1</name><uuid>not-a-uuid</uuid></domain>",
		"<domain><name>web1</name><uuid>" UUID "</uuid><metadata>"
		"<kvmlu:config xmlns:kvmlu='" LIBVIRT_METADATA_NS "' optout='YES!'/>"
		"</metadata></domain>",
		"<domain><name>web1</name><uuid>" UUID "</uuid><metadata>"
		"<kvmlu:config xmlns:kvmlu='" LIBVIRT_METADATA_NS "' optout='no'/>"
		"<k2:config xmlns:k2='" LIBVIRT_METADATA_NS "' optout='yes'/>"
		"</metadata></domain>",
		/* Billion laughs: refused for its DOCTYPE, never expanded. */
		"<?xml version='1.0'?><!DOCTYPE d [<!ENTITY a 'aaaaaaaaaa'>"
		"<!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'><!ENTITY c '&b;&b;&b;&b;&b;&b;'>]>"
		"<domain><name>web1&c;</name><uuid>" UUID "</uuid></domain>",
		/* External entity: no file is read. */
		"<?xml version='1.0'?><!DOCTYPE d [<!ENTITY x SYSTEM 'file:///etc/shadow'>]>"
		"<domain><name>&x;</name><uuid>" UUID "</uuid></domain>",
		"<domain><name>web1</name><uuid>" UUID "</uuid>&undefined;</domain>",
		/* Two of what the hook reads: refused, never one of them picked. */
		"<domain><name>web1</name><uuid>" UUID "</uuid>"
		"<uuid>0a1c0b2a-1111-4222-8333-944455556666</uuid></domain>",
		"<domain><name>web1</name><uuid>" UUID "</uuid><metadata/><metadata>"
		"<kvmlu:config xmlns:kvmlu='" LIBVIRT_METADATA_NS "' optout='yes'/>"
		"</metadata></domain>",
		"<domain><name>web1</name><uuid>" UUID "</uuid><metadata>"
		"<kvmlu:config xmlns:kvmlu='" LIBVIRT_METADATA_NS "' optout='no' optout='yes'/>"
		"</metadata></domain>",
		/* The same attribute in a namespace besides the plain one. */
		"<domain><name>web1</name><uuid>" UUID "</uuid><metadata>"
		"<kvmlu:config xmlns:kvmlu='" LIBVIRT_METADATA_NS "' optout='no' kvmlu:optout='yes'/>"
		"</metadata></domain>",
		"<domain><name>web1</name><uuid>" UUID "</uuid><metadata>"
		"<kvmlu:config xmlns:kvmlu='" LIBVIRT_METADATA_NS "' opt-out='yes'/>"
		"</metadata></domain>",
		"<domain name='web2'><name>web1</name><uuid>" UUID "</uuid><name/></domain>",
	};
	struct libvirt_hook_event ev, before;
	char err[256];

	(void)state;
	assert_int_equal(args(&ev, "web1", "start", "begin", "-", err), 0);
	before = ev;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_not_equal(xml(&ev, bad[i], err), 0);
		assert_true(err[0] != '\0');
		assert_memory_equal(&ev, &before, sizeof(ev));
	}
}

static void test_libvirt_hook_rejects_huge_and_nul_input(void **state)
{
	struct libvirt_hook_event ev, before;
	size_t big = LIBVIRT_XML_MAX + 1;
	char err[256], *buf;

	(void)state;
	assert_int_equal(args(&ev, "web1", "start", "begin", "-", err), 0);
	before = ev;
	buf = malloc(big);
	assert_non_null(buf);
	memset(buf, ' ', big);
	memcpy(buf, good_xml, strlen(good_xml));
	assert_int_equal(libvirt_hook_event_parse_xml(buf, big, &ev, err, sizeof(err)), -EMSGSIZE);
	free(buf);
	assert_int_equal(libvirt_hook_event_parse_xml(good_xml, sizeof(good_xml), &ev, err,
						      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL"));
	assert_memory_equal(&ev, &before, sizeof(ev));
}

static void test_libvirt_hook_reads_the_optout(void **state)
{
	static const char opted[] =
		"<domain><name>web1</name><uuid>" UUID "</uuid><metadata>"
		"<kvmlu:config xmlns:kvmlu='" LIBVIRT_METADATA_NS "' optout='yes'/>"
		"</metadata></domain>";
	struct libvirt_hook_event ev;
	char err[256];
	bool optout = true;

	(void)state;
	assert_int_equal(args(&ev, "web1", "stopped", "end", "shutdown", err), 0);
	assert_int_equal(xml(&ev, opted, err), 0);
	assert_true(ev.optout);
	/* What virDomainGetMetadata returns to the agent. */
	assert_int_equal(libvirt_metadata_optout_text(
		"<kvmlu:config xmlns:kvmlu=\"" LIBVIRT_METADATA_NS "\" optout=\"no\"/>",
		&optout, err, sizeof(err)), 0);
	assert_false(optout);
	assert_int_equal(libvirt_metadata_optout_text(
		"<config xmlns=\"" LIBVIRT_METADATA_NS "\" optout=\"yes\"/>", &optout, err,
		sizeof(err)), 0);
	assert_true(optout);
	/* libvirt 9.0 returns it without the namespace it selected it by. */
	assert_int_equal(libvirt_metadata_optout_text("<config optout=\"no\"/>", &optout, err,
						      sizeof(err)), 0);
	assert_false(optout);
	assert_int_equal(libvirt_metadata_optout_text("<settings optout=\"yes\"/>", &optout, err,
						      sizeof(err)), -EINVAL);
	assert_int_equal(libvirt_metadata_optout_text(
		"<o:config xmlns:o=\"urn:other\" optout=\"yes\"/>", &optout, err,
		sizeof(err)), -EINVAL);
	assert_int_equal(libvirt_metadata_optout_text(NULL, &optout, err, sizeof(err)), 0);
	assert_false(optout);
	/* An attribute twice, or beside a namespaced one, is no answer. */
	assert_int_equal(libvirt_metadata_optout_text("<config optout=\"no\" optout=\"yes\"/>",
						      &optout, err, sizeof(err)), -EINVAL);
	assert_int_equal(libvirt_metadata_optout_text(
		"<k:config xmlns:k=\"" LIBVIRT_METADATA_NS "\" optout=\"no\" k:optout=\"yes\"/>",
		&optout, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "optout"));
	assert_false(optout);
}

static void test_libvirt_hook_message_has_the_event(void **state)
{
	struct libvirt_hook_event ev;
	struct json_object *o, *v;
	char err[256];

	(void)state;
	assert_int_equal(args(&ev, "web1", "reconnect", "begin", "-", err), 0);
	assert_int_equal(xml(&ev, good_xml, err), 0);
	o = libvirt_hook_notify_json(&ev);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "op", &v));
	assert_string_equal(json_object_get_string(v), "reconnect");
	assert_true(json_object_object_get_ex(o, "uuid", &v));
	assert_string_equal(json_object_get_string(v), UUID);
	assert_true(json_object_object_get_ex(o, "domain", &v));
	assert_string_equal(json_object_get_string(v), "web1");
	json_object_put(o);
	/* No agent: a clear error, quickly. */
	assert_int_equal(libvirt_hook_notify("/nonexistent/kvmlu-agent.sock", &ev, 100, err,
					     sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/kvmlu-agent.sock"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libvirt_hook_decodes_a_good_call),
		cmocka_unit_test(test_libvirt_hook_rejects_odd_argv),
		cmocka_unit_test(test_libvirt_hook_rejects_malformed_and_hostile_xml),
		cmocka_unit_test(test_libvirt_hook_rejects_huge_and_nul_input),
		cmocka_unit_test(test_libvirt_hook_reads_the_optout),
		cmocka_unit_test(test_libvirt_hook_message_has_the_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
