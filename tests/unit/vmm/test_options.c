// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/options.c: the kvmlu-vmm command line is user input,
 * so every malformed form must be refused with a message naming the
 * option, and good forms must give exactly the values typed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "vmm/device.h"
#include "vmm/options.h"

#define MiB (1ULL << 20)

/* The k-th device of the one list, and its spec as the type's struct. */
static const struct virtio_blk_disk_spec *disk_at(const struct vmm_options *o, unsigned int k)
{
	assert_true(k < o->nr_devs);
	assert_string_equal(o->devs[k].type->kind, "virtio-blk");
	assert_int_equal(o->devs[k].fd, -1);
	return vm_device_config_spec_c(&o->devs[k]);
}

static const struct virtio_net_spec *net_at(const struct vmm_options *o, unsigned int k)
{
	assert_true(k < o->nr_devs);
	assert_string_equal(o->devs[k].type->kind, "virtio-net");
	assert_int_equal(o->devs[k].fd, -1);
	return vm_device_config_spec_c(&o->devs[k]);
}

/* argv must be writable for getopt; copies a NULL-terminated list. */
static int parse(struct vmm_options *o, char *err, const char *const *args)
{
	static char store[32][256];
	char *argv[33];
	int argc = 0;

	for (; args[argc]; argc++) {
		strncpy(store[argc], args[argc], sizeof(store[0]) - 1);
		store[argc][sizeof(store[0]) - 1] = '\0';
		argv[argc] = store[argc];
	}
	argv[argc] = NULL;
	err[0] = '\0';
	return vmm_options_parse(argc, argv, o, err, 256);
}

#define RUN_OK "kvmlu-vmm", "run", "--name", "vm1", "--memory", "256M", "--cpus", "2", \
	"--payload", "w.bin"

static void test_options_parses_a_full_run_line(void **state)
{
	const char *const a[] = { RUN_OK, "--memory-backend", "guest_memfd", "--serial",
				  "/tmp/s", "--control", "/tmp/c.sock", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, a), 0);
	assert_int_equal(o.cmd, VMM_CMD_RUN);
	assert_string_equal(o.name, "vm1");
	assert_true(o.memory == 256 * MiB);
	assert_int_equal(o.cpus, 2);
	assert_string_equal(o.payload, "w.bin");
	assert_int_equal(o.backend, GUESTMEM_GUEST_MEMFD);
	assert_string_equal(o.serial, "/tmp/s");
	assert_string_equal(o.control, "/tmp/c.sock");
	assert_false(o.help);
}

static void test_options_defaults_to_memfd_and_stdout(void **state)
{
	const char *const a[] = { RUN_OK, NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, a), 0);
	assert_int_equal(o.backend, GUESTMEM_MEMFD);
	assert_null(o.serial);
	assert_null(o.control);
}

static void test_options_accepts_equals_form(void **state)
{
	const char *const a[] = { "kvmlu-vmm", "run", "--name=vm2", "--memory=2G", "--cpus=4",
				  "--payload=p", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, a), 0);
	assert_string_equal(o.name, "vm2");
	assert_true(o.memory == 2048 * MiB);
	assert_int_equal(o.cpus, 4);
}

static void test_options_can_parse_twice(void **state)
{
	const char *const a[] = { RUN_OK, NULL };
	const char *const b[] = { "kvmlu-vmm", "run", "--name", "other", "--memory", "64M",
				  "--cpus", "1", "--payload", "x", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, a), 0);
	assert_int_equal(parse(&o, err, b), 0);
	assert_string_equal(o.name, "other");
	assert_int_equal(o.cpus, 1);
}

static void expect_refused(const char *const *a, const char *needle)
{
	struct vmm_options o;
	char err[256];

	assert_int_equal(parse(&o, err, a), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
}

static void test_options_rejects_missing_required(void **state)
{
	const char *const no_name[] = { "kvmlu-vmm", "run", "--memory", "256M", "--cpus", "1",
					"--payload", "p", NULL };
	const char *const no_mem[] = { "kvmlu-vmm", "run", "--name", "a", "--cpus", "1",
				       "--payload", "p", NULL };
	const char *const no_cpus[] = { "kvmlu-vmm", "run", "--name", "a", "--memory", "256M",
					"--payload", "p", NULL };
	const char *const no_boot[] = { "kvmlu-vmm", "run", "--name", "a", "--memory", "256M",
					"--cpus", "1", NULL };
	const char *const no_cmd[] = { "kvmlu-vmm", NULL };

	(void)state;
	expect_refused(no_name, "--name");
	expect_refused(no_mem, "--memory");
	expect_refused(no_cpus, "--cpus");
	expect_refused(no_boot, "--payload");
	expect_refused(no_cmd, "command");
}

static void test_options_rejects_bad_cpus(void **state)
{
	const char *const bad[][11] = {
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "256M", "--cpus", "0", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "256M", "--cpus", "65", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "256M", "--cpus", "2x", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "256M", "--cpus", "-1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "256M", "--cpus", "", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "256M", "--cpus", "99999999999999999999", "--payload", "p", NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(bad[i], "--cpus");
}

static void test_options_rejects_bad_memory(void **state)
{
	const char *const bad[][11] = {
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "12X", "--cpus", "1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "", "--cpus", "1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "1M", "--cpus", "1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "0", "--cpus", "1", "--payload", "p", NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(bad[i], "--memory");
}

/* Past the 1 TiB a VM may have: the limit, not a layout error from deep inside. */
static void test_options_rejects_too_much_memory_naming_the_limit(void **state)
{
	const char *const big[][11] = {
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "10T", "--cpus", "1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "1026G", "--cpus", "1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a", "--memory", "99999999999T", "--cpus", "1", "--payload", "p", NULL },
	};
	const char *const max[] = { "kvmlu-vmm", "run", "--name", "a", "--memory", "1T", "--cpus",
				    "1", "--payload", "p", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		expect_refused(big[i], "too large: at most 1T");
	assert_int_equal(parse(&o, err, max), 0);
	assert_true(o.memory == 1024 * 1024 * MiB);
}

static void test_options_takes_control_idle_ms_in_range(void **state)
{
	const char *const run[] = { RUN_OK, "--control-idle-ms", "250", NULL };
	const char *const restore[] = { "kvmlu-vmm", "restore", "--session", "s",
					"--control-idle-ms", "3600000", NULL };
	const char *const bad[][13] = {
		{ RUN_OK, "--control-idle-ms", "9", NULL },
		{ RUN_OK, "--control-idle-ms", "3600001", NULL },
		{ RUN_OK, "--control-idle-ms", "-5", NULL },
		{ RUN_OK, "--control-idle-ms", "1s", NULL },
		{ RUN_OK, "--control-idle-ms", "", NULL },
	};
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, run), 0);
	assert_int_equal(o.control_idle_ms, 250);
	assert_int_equal(parse(&o, err, restore), 0);
	assert_int_equal(o.control_idle_ms, 3600000);
	assert_int_equal(parse(&o, err, (const char *const[]){ RUN_OK, NULL }), 0);
	assert_int_equal(o.control_idle_ms, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(bad[i], "--control-idle-ms");
}

static void test_options_rejects_bad_names(void **state)
{
	const char *const bad[][11] = {
		{ "kvmlu-vmm", "run", "--name", "a/b", "--memory", "256M", "--cpus", "1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "", "--memory", "256M", "--cpus", "1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", ".hidden", "--memory", "256M", "--cpus", "1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name", "a b", "--memory", "256M", "--cpus", "1", "--payload", "p", NULL },
		{ "kvmlu-vmm", "run", "--name",
		  "a234567890123456789012345678901234567890123456789012345678901234", "--memory", "256M",
		  "--cpus", "1", "--payload", "p", NULL },
	};
	size_t i;

	(void)state;
	assert_true(vmm_options_name_valid("vm-1_a.b"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(bad[i], "--name");
}

static void test_options_rejects_unknown_repeated_and_stray(void **state)
{
	const char *const unknown[] = { RUN_OK, "--frobnicate", NULL };
	const char *const twice[] = { RUN_OK, "--cpus", "3", NULL };
	const char *const stray[] = { RUN_OK, "extra", NULL };
	const char *const novalue[] = { RUN_OK, "--serial", NULL };
	const char *const backend[] = { RUN_OK, "--memory-backend", "hugetlb", NULL };
	const char *const both[] = { RUN_OK, "--kernel", "bzImage", NULL };
	const char *const initrd[] = { RUN_OK, "--initrd", "i", NULL };
	const char *const verb[] = { "kvmlu-vmm", "launch", NULL };

	(void)state;
	expect_refused(unknown, "--frobnicate");
	expect_refused(twice, "--cpus");
	expect_refused(stray, "extra");
	expect_refused(novalue, "--serial");
	expect_refused(backend, "hugetlb");
	expect_refused(both, "--kernel");
	expect_refused(initrd, "--initrd");
	expect_refused(verb, "launch");
}

static void test_options_help_and_version(void **state)
{
	const char *const help[] = { "kvmlu-vmm", "--help", NULL };
	const char *const run_help[] = { "kvmlu-vmm", "run", "--help", NULL };
	const char *const ver[] = { "kvmlu-vmm", "--version", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, help), 0);
	assert_true(o.help);
	assert_int_equal(parse(&o, err, run_help), 0);
	assert_true(o.help);
	assert_int_equal(parse(&o, err, ver), 0);
	assert_true(o.version);
}

static void test_options_restore_needs_session(void **state)
{
	const char *const ok[] = { "kvmlu-vmm", "restore", "--session", "kvmlu/vm/vm1",
				   "--control", "/tmp/c", NULL };
	const char *const missing[] = { "kvmlu-vmm", "restore", NULL };
	const char *const run_only[] = { "kvmlu-vmm", "restore", "--session", "s", "--cpus", "2",
					 NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, ok), 0);
	assert_int_equal(o.cmd, VMM_CMD_RESTORE);
	assert_string_equal(o.session, "kvmlu/vm/vm1");
	expect_refused(missing, "--session");
	expect_refused(run_only, "--cpus");
}

static void test_options_takes_several_disks_with_their_options(void **state)
{
	const char *const a[] = { RUN_OK, "--disk", "/img/root.raw", "--disk",
				  "data.img,readonly,id=data-1", "--disk", "/dev/vdb,id=x", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, a), 0);
	assert_int_equal(o.nr_devs, 3);
	assert_string_equal(disk_at(&o, 0)->ident.path, "/img/root.raw");
	assert_false(disk_at(&o, 0)->readonly);
	assert_string_equal(disk_at(&o, 0)->id, "");
	assert_string_equal(disk_at(&o, 1)->ident.path, "data.img");
	assert_true(disk_at(&o, 1)->readonly);
	assert_string_equal(disk_at(&o, 1)->id, "data-1");
	assert_string_equal(disk_at(&o, 2)->ident.path, "/dev/vdb");
	assert_string_equal(disk_at(&o, 2)->id, "x");
}

/*
 * --disk and --net in any order: one list in slot order, as the slots
 * always were: every disk first (in the order given), then every NIC.
 */
static void test_options_lists_disks_then_nics_whatever_the_order_given(void **state)
{
	const char *const a[] = { RUN_OK, "--net", "tap=n0", "--disk", "d0", "--net", "tap=n1",
				  "--disk", "d1,id=one", "--disk", "d2", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, a), 0);
	assert_int_equal(o.nr_devs, 5);
	assert_string_equal(disk_at(&o, 0)->ident.path, "d0");
	assert_string_equal(disk_at(&o, 1)->ident.path, "d1");
	assert_string_equal(disk_at(&o, 1)->id, "one");
	assert_string_equal(disk_at(&o, 2)->ident.path, "d2");
	assert_string_equal(net_at(&o, 3)->tap, "n0");
	assert_string_equal(net_at(&o, 4)->tap, "n1");
}

static void test_options_refuses_bad_disk_options(void **state)
{
	static const struct { const char *arg, *msg; } bad[] = {
		{ "a.img,rw", "--disk a.img: unknown or repeated option 'rw' (readonly, id=NAME)" },
		{ "a.img,readonly,readonly", "--disk a.img: unknown or repeated option 'readonly'" },
		{ ",readonly", "--disk ',readonly': empty path" },
		{ "a.img,id=", "--disk a.img: unknown or repeated option 'id='" },
		{ "a.img,id=abcdefghijklmnopqrstu", "id 'abcdefghijklmnopqrstu' is longer than 20 bytes" },
		{ "a.img,id=a/b", "--disk a.img: id 'a/b': use [A-Za-z0-9._-]" },
		{ "a.img,", "--disk a.img: unknown or repeated option ''" },
	};
	struct vmm_options o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const a[] = { RUN_OK, "--disk", bad[i].arg, NULL };

		assert_int_equal(parse(&o, err, a), -EINVAL);
		if (!strstr(err, bad[i].msg))
			fail_msg("--disk %s: got \"%s\", want \"%s\"", bad[i].arg, err, bad[i].msg);
	}
}

static void test_options_refuses_a_duplicate_disk_id_and_a_ninth_disk(void **state)
{
	const char *const dup[] = { RUN_OK, "--disk", "a,id=d", "--disk", "b,id=d", NULL };
	const char *const many[] = { RUN_OK, "--disk", "1", "--disk", "2", "--disk", "3",
				     "--disk", "4", "--disk", "5", "--disk", "6", "--disk", "7",
				     "--disk", "8", "--disk", "9", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, dup), -EINVAL);
	assert_string_equal(err, "--disk b: id 'd' is used twice");
	assert_int_equal(parse(&o, err, many), -EINVAL);
	assert_string_equal(err, "--disk: at most 8 disks");
}

static void test_options_takes_nets_with_tap_mac_and_bridge(void **state)
{
	const char *const a[] = { RUN_OK, "--net", "tap=tap0", "--net",
				  "bridge=br0,mac=52:54:00:AB:cd:01,tap=vm1-net1", NULL };
	static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0x01 };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, a), 0);
	assert_int_equal(o.nr_devs, 2);
	assert_string_equal(net_at(&o, 0)->tap, "tap0");
	assert_string_equal(net_at(&o, 0)->bridge, "");
	assert_false(net_at(&o, 0)->has_mac);	/* generated when the VM is made */
	assert_string_equal(net_at(&o, 1)->tap, "vm1-net1");
	assert_string_equal(net_at(&o, 1)->bridge, "br0");
	assert_true(net_at(&o, 1)->has_mac);
	assert_memory_equal(net_at(&o, 1)->mac, mac, 6);
	assert_false(net_at(&o, 0)->no_offloads);
	assert_false(net_at(&o, 1)->no_offloads);
}

static void test_options_net_offloads_off(void **state)
{
	const char *const a[] = { RUN_OK, "--net", "tap=t0,offloads=off", "--net",
				  "offloads=on,tap=t1", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, a), 0);
	assert_true(net_at(&o, 0)->no_offloads);
	assert_false(net_at(&o, 1)->no_offloads);
}

static void test_options_refuses_bad_net_options(void **state)
{
	static const struct { const char *arg, *msg; } bad[] = {
		{ "tap0", "--net tap0: 'tap0': expected tap=NAME, mac=MAC, bridge=BR or offloads=on|off" },
		{ "tap=t0,offloads=no", "--net tap=t0,offloads=no: offloads 'no': on or off" },
		{ "tap=t0,offloads=off,offloads=off", "unknown or repeated option 'offloads'" },
		{ "mac=52:54:00:00:00:01", "--net 'mac=52:54:00:00:00:01': tap=NAME is required" },
		{ "tap=t0,mac=52:54:00:00:00", "mac '52:54:00:00:00': need a unicast MAC" },
		{ "tap=t0,mac=01:00:5e:00:00:01", "mac '01:00:5e:00:00:01': need a unicast MAC" },
		{ "tap=t0,mac=00:00:00:00:00:00", "need a unicast MAC" },
		{ "tap=t0,mac=zz:54:00:00:00:01", "need a unicast MAC" },
		{ "tap=t0,vhost=on", "--net tap=t0,vhost=on: unknown or repeated option 'vhost'" },
		{ "tap=t0,tap=t1", "unknown or repeated option 'tap'" },
		{ "tap=a-very-long-tap-name", "tap 'a-very-long-tap-name': use 1..15 of" },
		{ "tap=a/b", "tap 'a/b': use 1..15 of" },
		{ "tap=tap%d", "tap 'tap%d': use 1..15 of" },
		{ "tap=", "tap '': use 1..15 of" },
		{ "tap=t0,bridge=b r", "bridge 'b r': use 1..15 of" },
		{ "tap=t0,", "trailing ','" },
		{ "", "tap=NAME is required" },
	};
	struct vmm_options o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const a[] = { RUN_OK, "--net", bad[i].arg, NULL };

		assert_int_equal(parse(&o, err, a), -EINVAL);
		if (!strstr(err, bad[i].msg))
			fail_msg("--net %s: got \"%s\", want \"%s\"", bad[i].arg, err, bad[i].msg);
	}
}

static void test_options_refuses_shared_tap_or_mac_and_too_many_devices(void **state)
{
	const char *const tap[] = { RUN_OK, "--net", "tap=t", "--net", "tap=t", NULL };
	const char *const mac[] = { RUN_OK, "--net", "tap=a,mac=02:00:00:00:00:01", "--net",
				    "tap=b,mac=02:00:00:00:00:01", NULL };
	const char *const five[] = { RUN_OK, "--net", "tap=1", "--net", "tap=2", "--net", "tap=3",
				     "--net", "tap=4", "--net", "tap=5", NULL };
	const char *const nine[] = { RUN_OK, "--disk", "1", "--disk", "2", "--disk", "3",
				     "--disk", "4", "--disk", "5", "--disk", "6", "--net", "tap=a",
				     "--net", "tap=b", "--net", "tap=c", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, tap), -EINVAL);
	assert_string_equal(err, "--net: tap 't' is used twice");
	assert_int_equal(parse(&o, err, mac), -EINVAL);
	assert_string_equal(err, "--net tap=b,mac=02:00:00:00:00:01: the MAC is used twice");
	assert_int_equal(parse(&o, err, five), -EINVAL);
	assert_string_equal(err, "--net: at most 4");
	assert_int_equal(parse(&o, err, nine), -EINVAL);
	assert_string_equal(err, "run: 6 disks and 3 nets: at most 8 virtio devices in all");
}

static void test_options_takes_the_virtio_transport(void **state)
{
	const char *const dflt[] = { RUN_OK, NULL };
	const char *const pci[] = { RUN_OK, "--virtio-transport", "pci", NULL };
	const char *const mmio[] = { RUN_OK, "--virtio-transport=mmio", NULL };
	const char *const bad[] = { RUN_OK, "--virtio-transport", "PCI", NULL };
	const char *const twice[] = { RUN_OK, "--virtio-transport", "pci", "--virtio-transport",
				      "pci", NULL };
	const char *const restore[] = { "kvmlu-vmm", "restore", "--session", "s",
					"--virtio-transport", "pci", NULL };
	struct vmm_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, dflt), 0);
	assert_int_equal(o.transport, VM_VIRTIO_TRANSPORT_PCI);
	assert_int_equal(parse(&o, err, pci), 0);
	assert_int_equal(o.transport, VM_VIRTIO_TRANSPORT_PCI);
	assert_int_equal(parse(&o, err, mmio), 0);
	assert_int_equal(o.transport, VM_VIRTIO_TRANSPORT_MMIO);
	assert_int_equal(parse(&o, err, bad), -EINVAL);
	assert_string_equal(err, "--virtio-transport 'PCI': mmio or pci");
	assert_int_equal(parse(&o, err, twice), -EINVAL);
	assert_non_null(strstr(err, "given twice"));
	/* A restored VM's transport is the state's, not the command line's. */
	assert_int_equal(parse(&o, err, restore), -EINVAL);
	assert_non_null(strstr(err, "unknown option"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options_takes_several_disks_with_their_options),
		cmocka_unit_test(test_options_lists_disks_then_nics_whatever_the_order_given),
		cmocka_unit_test(test_options_takes_nets_with_tap_mac_and_bridge),
		cmocka_unit_test(test_options_net_offloads_off),
		cmocka_unit_test(test_options_refuses_bad_net_options),
		cmocka_unit_test(test_options_refuses_shared_tap_or_mac_and_too_many_devices),
		cmocka_unit_test(test_options_takes_the_virtio_transport),
		cmocka_unit_test(test_options_refuses_bad_disk_options),
		cmocka_unit_test(test_options_refuses_a_duplicate_disk_id_and_a_ninth_disk),
		cmocka_unit_test(test_options_parses_a_full_run_line),
		cmocka_unit_test(test_options_defaults_to_memfd_and_stdout),
		cmocka_unit_test(test_options_accepts_equals_form),
		cmocka_unit_test(test_options_can_parse_twice),
		cmocka_unit_test(test_options_rejects_missing_required),
		cmocka_unit_test(test_options_rejects_bad_cpus),
		cmocka_unit_test(test_options_rejects_bad_memory),
		cmocka_unit_test(test_options_rejects_too_much_memory_naming_the_limit),
		cmocka_unit_test(test_options_takes_control_idle_ms_in_range),
		cmocka_unit_test(test_options_rejects_bad_names),
		cmocka_unit_test(test_options_rejects_unknown_repeated_and_stray),
		cmocka_unit_test(test_options_help_and_version),
		cmocka_unit_test(test_options_restore_needs_session),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
