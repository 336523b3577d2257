// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the report text (agent/journal/journal_report.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/journal/journal_report.h"

#define T0 1764763200000000000LL
#define MS 1000000LL

static char *format(const struct journal *j, bool summary)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (summary)
		report_format_summary(j, f);
	else
		report_format_text(j, f);
	fclose(f);
	return buf;
}

static void assert_contains(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("report lacks \"%s\":\n%s", needle, text);
}

static void test_report_duration_units(void **state)
{
	char b[32];

	(void)state;
	report_duration(12345678, b, sizeof(b));
	assert_string_equal(b, "12.3 ms");
	report_duration(2500 * MS, b, sizeof(b));
	assert_string_equal(b, "2.50 s");
	report_duration(-1, b, sizeof(b));
	assert_string_equal(b, "-");
}

static void test_report_shows_done_update_with_phases_and_blackout(void **state)
{
	struct journal *j = calloc(1, sizeof(*j));
	char err[128], *text;

	(void)state;
	journal_init(j, T0);
	snprintf(j->kernel, sizeof(j->kernel), "/boot/vmlinuz");
	assert_int_equal(journal_add_vm(j, "vm1", "/r/vm1.sock", err, sizeof(err)), 0);
	j->outcome = UPDATE_DONE;
	j->phases[UPDATE_PREPARE].start_ns = T0 + 10 * MS;
	j->phases[UPDATE_PREPARE].end_ns = T0 + 55 * MS;
	j->phases[UPDATE_KEXEC].start_ns = T0 + 60 * MS;
	j->phases[UPDATE_KEXEC].end_ns = T0 + 4060 * MS;
	j->finished_ns = T0 + 5000 * MS;
	j->vms[0].state = JOURNAL_VM_VERIFIED;
	j->vms[0].paused_ns = T0 + 10 * MS;
	j->vms[0].resumed_ns = T0 + 4310 * MS;
	memset(j->vms[0].checksum, 'a', 32);
	memset(j->vms[0].checksum_after, 'a', 32);
	text = format(j, false);
	assert_contains(text, ": done");
	assert_contains(text, "prepare             45.0 ms");
	assert_contains(text, "kexec                4.00 s");
	assert_contains(text, "total                5.00 s");
	assert_contains(text, "verified");
	assert_contains(text, "4.30 s");
	assert_contains(text, "equal");
	assert_null(strstr(text, "failed in"));
	assert_null(strstr(text, "libvirt domain"));
	assert_null(strstr(text, "all memory verified"));
	assert_null(strstr(text, "vmm prepare"));
	assert_null(strstr(text, "vmm restore"));
	free(text);
	/* The VMM's own steps, once its replies gave them. */
	j->vms[0].vmm_prepare_ns = 170 * MS;
	j->vms[0].vmm_restore_ns = 113 * MS;
	j->vms[0].steps = (struct journal_vm_steps){ .prepare_paused_ns = 75700000,
		.capture_ns = 12 * MS, .preserve_ram_ns = 60700000, .retrieve_ns = 15400000,
		.vm_create_ns = 30100000, .verify_start_ns = 9200000,
		.state_restore_ns = 32400000 };
	text = format(j, false);
	assert_contains(text, "vmm prepare 170.0 ms: RAM preserved 60.7 ms while running, paused 75.7 ms (state 12.0 ms)");
	assert_contains(text, "vmm restore 113.0 ms: retrieve 15.4 ms, VM built 30.1 ms, verify started 9.2 ms, state 32.4 ms");
	free(text);
	/* A VMM that sent no restore steps: no made-up line. */
	j->vms[0].steps.retrieve_ns = 0;
	text = format(j, false);
	assert_contains(text, "vmm prepare 170.0 ms");
	assert_null(strstr(text, "vmm restore"));
	free(text);
	memset(&j->vms[0].steps, 0, sizeof(j->vms[0].steps));
	/* Verified lazily: the guest ran at 4.30 s, all RAM verified at 6.01 s. */
	j->vms[0].verified_ns = T0 + 6020 * MS;
	text = format(j, false);
	assert_contains(text, "first guest instruction 4.30 s after the pause, all memory verified 6.01 s after it");
	free(text);
	j->vms[0].verified_ns = 0;
	/* A libvirt domain gets its own row: action, downtime, result. */
	j->nr_domains = 1;
	snprintf(j->domains[0].name, sizeof(j->domains[0].name), "web1");
	snprintf(j->domains[0].uuid, sizeof(j->domains[0].uuid), "3f1c0b2a-1111-4222-8333-944455556666");
	j->domains[0].state = LIBVIRT_DOMAIN_RESTORED;
	j->domains[0].suspended_ns = T0 + 5 * MS;
	j->domains[0].saved_ns = T0 + 900 * MS;
	j->domains[0].resumed_ns = T0 + 6505 * MS;
	text = format(j, false);
	assert_contains(text, "libvirt domain   action           downtime  result");
	assert_contains(text, "web1             managed-save       6.50 s  ok       3f1c0b2a-1111-4222-8333-944455556666");
	free(text);
	text = format(j, true);
	assert_contains(text, j->update_id);
	assert_contains(text, "done");
	assert_contains(text, "1 VM(s) 1 libvirt");
	free(text);
	free(j);
}

static void test_report_says_what_failed_and_mismatches(void **state)
{
	struct journal *j = calloc(1, sizeof(*j));
	char err[128], *text;

	(void)state;
	journal_init(j, T0);
	assert_int_equal(journal_add_vm(j, "vm1", "/r/vm1.sock", err, sizeof(err)), 0);
	j->outcome = UPDATE_ROLLED_BACK;
	snprintf(j->failed_phase, sizeof(j->failed_phase), "prepare");
	snprintf(j->error, sizeof(j->error), "VM vm1: prepare-update failed: Timeout");
	j->phases[UPDATE_PREPARE].start_ns = T0 + 1;
	j->phases[UPDATE_PREPARE].end_ns = T0 + 2;
	j->phases[UPDATE_PREPARE].failed = true;
	j->vms[0].state = JOURNAL_VM_ABORTED;
	memset(j->vms[0].checksum, 'a', 32);
	memset(j->vms[0].checksum_after, 'b', 32);
	snprintf(j->vms[0].error, sizeof(j->vms[0].error), "prepare-update: Timeout");
	journal_note(j, "scratch note");
	j->nr_domains = 1;
	snprintf(j->domains[0].name, sizeof(j->domains[0].name), "db");
	snprintf(j->domains[0].uuid, sizeof(j->domains[0].uuid), "3f1c0b2a-1111-4222-8333-944455556666");
	j->domains[0].state = LIBVIRT_DOMAIN_FAILED;
	j->domains[0].suspended_ns = T0 + 5 * MS;
	snprintf(j->domains[0].error, sizeof(j->domains[0].error), "virDomainManagedSave: no space");
	text = format(j, false);
	assert_contains(text, "db               suspend                 -  failed");
	assert_contains(text, "error: virDomainManagedSave: no space");
	assert_contains(text, "rolled-back");
	assert_contains(text, "failed in prepare: VM vm1: prepare-update failed: Timeout");
	assert_contains(text, "FAILED");
	assert_contains(text, "MISMATCH");
	assert_contains(text, "error: prepare-update: Timeout");
	assert_contains(text, "note: scratch note");
	free(text);
	free(j);
}

/* libvirt_ram "refuse": the refused domain, untouched, and why its RAM cannot stay. */
static void test_report_says_why_a_domains_ram_would_go_to_disk(void **state)
{
	struct journal *j = calloc(1, sizeof(*j));
	char *text;

	(void)state;
	journal_init(j, T0);
	j->dry_run = true;
	j->outcome = UPDATE_REFUSED;
	snprintf(j->failed_phase, sizeof(j->failed_phase), "preflight");
	snprintf(j->error, sizeof(j->error), "libvirt_ram is \"refuse\" and libvirt domains "
		 "would have their RAM written to disk: domain web1: refused, RAM would go to "
		 "disk: hugepages");
	j->nr_domains = 2;
	snprintf(j->domains[0].name, sizeof(j->domains[0].name), "web1");
	snprintf(j->domains[0].uuid, sizeof(j->domains[0].uuid), "3f1c0b2a-1111-4222-8333-944455556666");
	j->domains[0].state = LIBVIRT_DOMAIN_LISTED;
	snprintf(j->domains[0].ram, sizeof(j->domains[0].ram),
		 "refused, RAM would go to disk: hugepages");
	snprintf(j->domains[1].name, sizeof(j->domains[1].name), "db");
	snprintf(j->domains[1].uuid, sizeof(j->domains[1].uuid), "00000000-1111-4222-8333-944455556666");
	j->domains[1].state = LIBVIRT_DOMAIN_OPTED_OUT;
	text = format(j, false);
	assert_contains(text, "web1             none                    -  untouched 3f1c0b2a");
	assert_contains(text, "ram: refused, RAM would go to disk: hugepages");
	assert_contains(text, "db               left-alone              -  ok       00000000");
	assert_contains(text, "domain web1: refused, RAM would go to disk: hugepages");
	/* Opted out: not judged, no ram line for it. */
	assert_int_equal(strstr(strstr(text, "db  "), "ram:") == NULL, 1);
	free(text);
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_duration_units),
		cmocka_unit_test(test_report_shows_done_update_with_phases_and_blackout),
		cmocka_unit_test(test_report_says_what_failed_and_mismatches),
		cmocka_unit_test(test_report_says_why_a_domains_ram_would_go_to_disk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
