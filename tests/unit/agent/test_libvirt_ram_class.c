// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the in-place classifier (agent/libvirt/libvirt_ram_class.c):
 * one fixture per reason a domain's RAM cannot stay in place, domains that
 * can, the live fact beside the <emulator> name, hostile XML refused, and
 * the words the journal keeps.
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

#include "agent/libvirt/libvirt_ram_class.h"
#include "agent/libvirt/libvirt_metadata.h"

#define HEAD "<domain type='kvm' id='3'><name>web1</name>" \
	"<uuid>3f1c0b2a-1111-4222-8333-944455556666</uuid><memory unit='KiB'>524288</memory>"
#define MEMFD "<memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>"
#define OS "<os><type arch='x86_64' machine='pc-i440fx-7.2'>hvm</type></os>"
#define WRAP "<emulator>/usr/local/bin/kvmlu-qemu</emulator>"
#define TAIL "</devices></domain>"

/* A domain kvmlu-qemu can start with its RAM in place. */
static const char good[] = HEAD MEMFD OS "<devices>" WRAP
	"<disk type='file' device='disk'><source file='/v/a.img'/><target dev='vda'/></disk>"
	"<interface type='network'><source network='default'/></interface>" TAIL;

static unsigned int classify(const char *xml, enum lvram_started st)
{
	unsigned int r = 0xdead;
	char err[256] = "";

	assert_int_equal(lvram_classify(xml, strlen(xml), st, &r, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	return r;
}

static void test_lvram_good_domains_have_no_reason(void **state)
{
	/* No <access>: libvirt leaves share out and memfd is shared by default. */
	static const char no_access[] = HEAD "<memoryBacking><source type='memfd'/>"
		"</memoryBacking>" OS "<devices>" WRAP TAIL;

	(void)state;
	assert_int_equal(classify(good, LVRAM_STARTED_UNKNOWN), 0);
	assert_int_equal(classify(good, LVRAM_STARTED_WRAPPER), 0);
	assert_int_equal(classify(no_access, LVRAM_STARTED_UNKNOWN), 0);
}

static void test_lvram_each_reason(void **state)
{
	static const struct {
		const char *xml;
		unsigned int want;
	} c[] = {
		/* The domain docs/libvirt.md and test_libvirt_domains use. */
		{ "<domain type='qemu'><name>kvmlu-test</name><memory unit='MiB'>32</memory>"
		  OS "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator>" TAIL,
		  LVRAM_NO_MEMFD | LVRAM_NOT_WRAPPER | LVRAM_NOT_KVM },
		{ HEAD "<memoryBacking><source type='file'/></memoryBacking><devices>" WRAP TAIL,
		  LVRAM_NO_MEMFD },
		{ HEAD "<memoryBacking><access mode='shared'/></memoryBacking><devices>" WRAP TAIL,
		  LVRAM_NO_MEMFD },
		{ HEAD "<memoryBacking><source type='memfd'/><access mode='private'/>"
		  "</memoryBacking><devices>" WRAP TAIL, LVRAM_PRIVATE },
		{ HEAD "<memoryBacking><hugepages/><source type='memfd'/></memoryBacking>"
		  "<devices>" WRAP TAIL, LVRAM_HUGEPAGES },
		{ HEAD MEMFD "<cpu><numa><cell id='0' cpus='0' memory='262144' unit='KiB'/>"
		  "<cell id='1' cpus='1' memory='262144' unit='KiB'/></numa></cpu><devices>"
		  WRAP TAIL, LVRAM_NUMA },
		{ HEAD MEMFD "<devices>" WRAP "<hostdev mode='subsystem' type='pci' managed='yes'>"
		  "<source><address domain='0' bus='1' slot='0' function='0'/></source></hostdev>"
		  TAIL, LVRAM_HOSTDEV },
		{ HEAD MEMFD "<devices>" WRAP "<interface type='vhostuser'><source type='unix' "
		  "path='/run/vu.sock' mode='client'/><model type='virtio'/></interface>" TAIL,
		  LVRAM_VHOST_USER },
		{ HEAD MEMFD "<devices>" WRAP "<filesystem type='mount' accessmode='passthrough'>"
		  "<driver type='virtiofs'/><source dir='/srv'/><target dir='srv'/></filesystem>"
		  TAIL, LVRAM_VIRTIOFS },
		{ HEAD MEMFD "<devices>" WRAP "<memory model='dimm'><target><size unit='KiB'>"
		  "131072</size><node>0</node></target></memory>" TAIL, LVRAM_MEMORY_DEVICE },
		{ HEAD MEMFD "<devices>" WRAP "<memory model='nvdimm'><source><path>/v/nv</path>"
		  "</source></memory>" TAIL, LVRAM_MEMORY_DEVICE },
		{ HEAD MEMFD "<devices>" WRAP "<memory model='virtio-mem'/>" TAIL,
		  LVRAM_MEMORY_DEVICE },
		{ HEAD MEMFD "<devices>" WRAP "<memory model='virtio-pmem' access='shared'/>" TAIL,
		  LVRAM_MEMORY_DEVICE },
		{ HEAD MEMFD "<devices>" WRAP "<shmem name='ivshmem'/>" TAIL, LVRAM_SHMEM },
		{ HEAD MEMFD "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator>" TAIL,
		  LVRAM_NOT_WRAPPER },
		{ HEAD MEMFD "<devices>" TAIL, LVRAM_NOT_WRAPPER },
		/* A 9p filesystem is no vhost-user peer. */
		{ HEAD MEMFD "<devices>" WRAP "<filesystem type='mount'><driver type='path'/>"
		  "<source dir='/srv'/><target dir='srv'/></filesystem>" TAIL, 0 },
	};

	(void)state;
	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		unsigned int r = classify(c[i].xml, LVRAM_STARTED_UNKNOWN);

		if (r != c[i].want)
			fail_msg("case %u: reasons %#x, want %#x", i, r, c[i].want);
	}
}

static void test_lvram_the_live_fact_wins_over_the_emulator_name(void **state)
{
	/* A script as <emulator> that execs kvmlu-qemu: the memfd is there. */
	static const char script[] = HEAD MEMFD "<devices><emulator>/usr/local/bin/lv-qemu.sh"
		"</emulator>" TAIL;

	(void)state;
	assert_int_equal(classify(script, LVRAM_STARTED_UNKNOWN), LVRAM_NOT_WRAPPER);
	assert_int_equal(classify(script, LVRAM_STARTED_WRAPPER), 0);
	/* Named kvmlu-qemu, but its QEMU runs without the wrapper's memfd (started before). */
	assert_int_equal(classify(good, LVRAM_STARTED_PLAIN), LVRAM_NOT_STARTED);
}

static void test_lvram_refuses_hostile_xml(void **state)
{
	static const char *const bad[] = {
		"",
		"<domain type='kvm'>",
		"<network><name>x</name></network>",
		"<x:domain xmlns:x='urn:x' type='kvm'/>",
		"<!DOCTYPE domain [<!ENTITY a 'aaaa'>]><domain type='kvm'>&a;</domain>",
		HEAD MEMFD MEMFD "<devices>" WRAP TAIL,
		HEAD "<memoryBacking><source type='memfd'/><source type='file'/></memoryBacking>"
		"<devices>" WRAP TAIL,
		HEAD "<memoryBacking><source type='memfd'/><access mode='shared'/>"
		"<access mode='private'/></memoryBacking><devices>" WRAP TAIL,
		HEAD MEMFD "<devices>" WRAP WRAP TAIL,
		HEAD MEMFD "<devices>" WRAP "</devices><devices>" TAIL,
		HEAD MEMFD "<cpu/><cpu/><devices>" WRAP TAIL,
	};
	unsigned int r;
	char err[256];

	(void)state;
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		r = 0xdead;
		if (lvram_classify(bad[i], strlen(bad[i]), LVRAM_STARTED_UNKNOWN, &r, err,
				   sizeof(err)) != -EINVAL)
			fail_msg("case %u not refused", i);
		assert_int_equal(r, 0);
		assert_true(err[0] != '\0');
	}
	/* Said twice: the message names what. */
	lvram_classify(bad[5], strlen(bad[5]), LVRAM_STARTED_UNKNOWN, &r, err, sizeof(err));
	assert_non_null(strstr(err, "two <memoryBacking>"));
	/* A NUL inside, and more than LIBVIRT_XML_MAX. */
	assert_int_equal(lvram_classify(good, sizeof(good), LVRAM_STARTED_UNKNOWN, &r, err,
					sizeof(err)), -EINVAL);
	{
		size_t n = LIBVIRT_XML_MAX + 1;
		char *big = malloc(n);

		assert_non_null(big);
		memset(big, ' ', n);
		assert_int_equal(lvram_classify(big, n, LVRAM_STARTED_UNKNOWN, &r, err,
						sizeof(err)), -EMSGSIZE);
		free(big);
	}
}

static void test_lvram_words_for_the_journal(void **state)
{
	char buf[384];

	(void)state;
	lvram_reasons_text(LVRAM_NO_MEMFD | LVRAM_HUGEPAGES, buf, sizeof(buf));
	assert_string_equal(buf, "no shared memfd backing (<memoryBacking><source "
			    "type='memfd'/>); hugepages");
	lvram_plan_text(false, LVRAM_HOSTDEV, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "managed save, RAM would go to disk: host device (VFIO)");
	lvram_plan_text(true, LVRAM_NUMA | LVRAM_VIRTIOFS, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "refused, RAM would go to disk: NUMA cells (libvirt names the "
			    "RAM ram-node<N>, not pc.ram); virtiofs (vhost-user-fs)");
	/* No reason: still to disk, and it says why. */
	lvram_plan_text(false, 0, NULL, buf, sizeof(buf));
	assert_non_null(strstr(buf, "managed save, RAM would go to disk: in place would be "
			       "possible with libvirt_ram \"in-place\" or \"in-place-or-save\""));
	/* libvirt_ram in-place or in-place-or-save: accepted, or why not. */
	lvram_plan_text_in_place(false, false, 0, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "in place: RAM to be kept in a LUO session across the kexec");
	lvram_plan_text_in_place(true, false, LVRAM_HUGEPAGES, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "refused, RAM would go to disk: hugepages");
	lvram_plan_text_in_place(false, true, 0, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "managed save, RAM would go to disk: paused before the update "
			    "(only a running domain keeps its RAM in place)");
	lvram_plan_text_in_place(true, true, LVRAM_SHMEM, NULL, buf, sizeof(buf));
	assert_non_null(strstr(buf, "refused, RAM would go to disk: shmem"));
	assert_non_null(strstr(buf, "; paused before the update"));
	lvram_plan_text_in_place(false, false, 0, "bad XML", buf, sizeof(buf));
	assert_string_equal(buf, "managed save, RAM would go to disk: domain XML not judged: bad XML");
	lvram_plan_text(true, 0, "XML does not parse", buf, sizeof(buf));
	assert_string_equal(buf, "refused, RAM would go to disk: domain XML not judged: XML "
			    "does not parse");
	/* Every reason has words, and they fit a report's ram field. */
	for (unsigned int i = 0; i < LVRAM_NR_REASONS; i++)
		assert_string_not_equal(lvram_reason_text(1u << i), "?");
	assert_string_equal(lvram_reason_text(1u << LVRAM_NR_REASONS), "?");
	lvram_plan_text(true, (1u << LVRAM_NR_REASONS) - 1, NULL, buf, 8);
	assert_int_equal(strlen(buf), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lvram_good_domains_have_no_reason),
		cmocka_unit_test(test_lvram_each_reason),
		cmocka_unit_test(test_lvram_the_live_fact_wins_over_the_emulator_name),
		cmocka_unit_test(test_lvram_refuses_hostile_xml),
		cmocka_unit_test(test_lvram_words_for_the_journal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
