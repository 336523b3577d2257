// SPDX-License-Identifier: GPL-2.0
/*
 * The resume pipeline on real /dev/kvm (skipped without it; run by
 * harness/unit_on_nested_kvm), both ways a VM comes back:
 *  - as a live upgrade fills the plan: a second VM built on the first's
 *    very memfd RAM files, the state checked against it, applied, and
 *    started parked;
 *  - as the restore after a kexec does (live_update_restore_build(), all
 *    of it but the LUO session, which needs /dev/liveupdate): the VM
 *    built from the state on the "retrieved" files, fully verified,
 *    applied with the TSC moved; then, on memory changed since the
 *    capture, built but never applied and refused a start;
 *  - the same lazily, the default after a kexec: the verifier's settled
 *    verdict equals a full pass's, and names the changed chunk.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guestmem/digest_table.h"
#include "tests/unit/need_cap.h"
#include "vmm/live_update/live_update.h"
#include "vmm/resume/resume.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/vm_capture.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

#define RAM	(8u << 20)

static char err[512];

/* The VM a state comes from: 8 MiB memfd RAM with a pattern, one vCPU. */
static void make_source(struct vm *a)
{
	struct vm_config cfg = { .name = "vm-src", .ram_size = RAM, .nr_vcpus = 1,
				 .backend = GUESTMEM_MEMFD, .serial_fd = STDERR_FILENO };
	unsigned char *ram;

	if (vm_create(a, &cfg, err, sizeof(err)))
		fail_msg("vm_create: %s", err);
	ram = a->mem.r[0].hva;
	for (uint64_t i = 0; i < RAM; i += 4096)
		ram[i] = (unsigned char)(i >> 12 | 1);
}

/*
 * Its state with the memory checksum, as an FDT blob (malloc'd); tokens
 * from base; digests: with each chunk's digest, as prepare-update records.
 */
static void capture(struct vm *a, uint64_t token_base, bool digests, void **blob, size_t *size)
{
	struct guestmem_digest_table t;
	struct state_vm s;

	if (state_vm_capture(a, true, &s, err, sizeof(err)))
		fail_msg("capture: %s", err);
	if (digests) {
		assert_int_equal(guestmem_digest_table_init(&t, &a->mem), 0);
		assert_int_equal(guestmem_digest_table_refresh(&t, 1, NULL, NULL), 0);
		s.chunk_digests = malloc(t.nr_chunks * sizeof(*s.chunk_digests));
		assert_non_null(s.chunk_digests);
		memcpy(s.chunk_digests, t.digest, t.nr_chunks * sizeof(*s.chunk_digests));
		s.nr_chunk_digests = t.nr_chunks;
		guestmem_digest_table_free(&t);
	}
	for (uint32_t i = 0; i < s.nr_regions; i++)
		s.regions[i].token = token_base + i;
	if (state_fdt_write(&s, blob, size, err, sizeof(err)))
		fail_msg("state_fdt_write: %s", err);
	state_vm_free(&s);
}

static void stop_vm(struct vm *vm)
{
	vm_request_stop(vm, VM_STOP_REQUESTED, "test done");
	vm_join(vm);
	vm_destroy(vm);
}

static void test_resume_pipeline_takes_over_a_vm_on_the_same_files(void **state)
{
	struct resume_plan p;
	struct resume_report r;
	struct vm a, b;
	void *blob;
	size_t size;

	(void)state;
	NEED_CAP("kvm");
	make_source(&a);
	capture(&a, 0, false, &blob, &size);
	/* What incoming.c fills from "prepare": the old process's files, parked start. */
	resume_plan_init(&p);
	resume_report_init(&r);
	snprintf(p.name, sizeof(p.name), "vm-src");
	p.ram_size = RAM;
	p.nr_vcpus = 1;
	p.backend = GUESTMEM_MEMFD;
	p.serial_fd = STDERR_FILENO;
	p.nr_ram = a.mem.nr;
	for (unsigned int i = 0; i < a.mem.nr; i++)
		p.ram_fds[i] = a.mem.r[i].fd;
	p.ram_copy_ok = true;
	p.run = false;
	assert_int_equal(resume_build(&p, &b, &r, err, sizeof(err)), 0);
	assert_int_equal(r.memory, RESUME_MEMORY_SHARED);
	assert_string_equal(resume_memory_name(r.memory), "shared");
	/* The same file: what the old VM wrote, the new one reads. */
	assert_memory_equal(b.mem.r[0].hva, a.mem.r[0].hva, 64 << 10);
	assert_int_equal(resume_plan_load_state(&p, blob, size, b.nr_vcpus, err, sizeof(err)), 0);
	p.verify = RESUME_VERIFY_FULL;
	assert_int_equal(resume_verify(&p, &b, &r, err, sizeof(err)), 0);
	assert_true(r.memory_verified);
	assert_int_equal(r.copied_bytes, 0);
	assert_int_equal(resume_apply(&p, &b, &r, err, sizeof(err)), 0);
	assert_false(r.tsc_adjusted);	/* same boot: the offset stays */
	assert_int_equal(resume_start(&p, &b, &r, err, sizeof(err)), 0);
	/* Parked before the first KVM_RUN: an upgrade of a paused VM. */
	assert_int_equal(vm_get_state(&b), VM_STATE_PAUSED);
	assert_true(r.build_ns > 0 && r.verify_ns > 0 && r.apply_ns > 0 && r.start_ns > 0);
	stop_vm(&b);
	resume_plan_free(&p);
	free(blob);
	vm_destroy(&a);
}

/*
 * What take and take_files leave in lu after a kexec: the state blob of a
 * VM made for the test in a (digests: as capture() says) and its RAM files
 * by LUO token.
 */
static void restore_of_source(struct live_update_restore *lu, struct vm *a, bool digests)
{
	make_source(a);
	live_update_restore_init(lu);
	snprintf(lu->vm_name, sizeof(lu->vm_name), "vm-src");
	capture(a, LUO_TOKEN_RAM(0), digests, &lu->state_blob, &lu->state_size);
	lu->plan.nr_ram = a->mem.nr;
	for (unsigned int i = 0; i < a->mem.nr; i++)
		lu->plan.ram_fds[i] = fcntl(a->mem.r[i].fd, F_DUPFD_CLOEXEC, 0);
}

static void test_restore_after_kexec_builds_from_the_state_and_never_applies_changed_memory(
	void **state)
{
	struct live_update_restore lu;
	struct vm a, b;
	unsigned char *ram;

	(void)state;
	NEED_CAP("kvm");
	restore_of_source(&lu, &a, false);
	lu.plan.verify = RESUME_VERIFY_FULL;
	lu.plan.verify_why = "sync verification asked for";
	assert_true(live_update_restore_have_files(&lu));

	assert_int_equal(live_update_restore_build(&lu, STDERR_FILENO, &b, err, sizeof(err)), 0);
	assert_true(lu.report.memory_verified);
	assert_true(resume_memory_ok(&lu.report));
	assert_string_equal(lu.report.verification, "verified");
	assert_string_equal(lu.report.verify_fallback, "sync verification asked for");
	assert_true(lu.restored_wall_ns > 0);
	assert_true(lu.report.apply_ns > 0);
	assert_int_equal(b.nr_vcpus, 1);
	assert_string_equal(b.name, "vm-src");
	/* The plan's state goes once built: a retry parses the blob again. */
	assert_false(lu.plan.have_state);
	vm_destroy(&b);

	/* The memory changed since the pause: built, not applied, not started. */
	ram = a.mem.r[0].hva;
	ram[3 * (2u << 20) + 5] ^= 0x80;
	lu.restored_wall_ns = 0;
	assert_int_equal(live_update_restore_build(&lu, STDERR_FILENO, &b, err, sizeof(err)), 0);
	assert_false(resume_memory_ok(&lu.report));
	assert_string_equal(lu.report.verification, "mismatch");
	assert_int_equal(lu.report.chunks_differ, 0);	/* a capture carries no chunk digests */
	assert_int_equal(lu.restored_wall_ns, 0);
	assert_int_equal(resume_start(&lu.plan, &b, &lu.report, err, sizeof(err)), -EIO);
	assert_int_equal(b.nr_threads, 0);
	vm_destroy(&b);

	/* A state for another VM than the session names: refused before any build. */
	snprintf(lu.vm_name, sizeof(lu.vm_name), "vm-other");
	assert_int_equal(live_update_restore_build(&lu, STDERR_FILENO, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "holds the state of VM 'vm-src', not 'vm-other'"));

	live_update_restore_release(&lu);
	vm_destroy(&a);
}

/*
 * The default after a kexec: lazy. The RAM is registered before the state
 * is applied; every chunk's verdict, settled before a start, is the same
 * as a full pass's: equal, or the changed chunk named.
 */
static void test_restore_after_kexec_verifies_lazily_the_same_verdict(void **state)
{
	struct live_update_restore lu;
	struct vm a, b;
	unsigned char *ram;

	(void)state;
	NEED_CAP("kvm");
	restore_of_source(&lu, &a, true);
	assert_int_equal(lu.plan.verify, RESUME_VERIFY_LAZY);

	assert_int_equal(live_update_restore_build(&lu, STDERR_FILENO, &b, err, sizeof(err)), 0);
	if (lu.report.verify_mode != RESUME_VERIFY_LAZY) {
		/* This kernel cannot (no userfaultfd minor faults on shmem): said, and verified now. */
		print_message("lazy verification not possible here: %s\n", lu.report.verify_fallback);
		assert_true(lu.report.verify_fallback[0] != '\0');
		assert_true(lu.report.memory_verified);
	} else {
		assert_non_null(lu.report.lazy);
		assert_string_equal(lu.report.verification, "running");
		assert_true(resume_memory_ok(&lu.report));
		assert_true(lu.restored_wall_ns > 0);
		live_update_lazy_settle(&lu);
		assert_true(lu.report.memory_verified);
		assert_string_equal(lu.report.checksum_now, lu.report.checksum_recorded);
		live_update_lazy_stop(&lu);
		assert_null(lu.report.lazy);
	}
	vm_destroy(&b);

	ram = a.mem.r[0].hva;
	ram[3 * (2u << 20) + 5] ^= 0x80;
	assert_int_equal(live_update_restore_build(&lu, STDERR_FILENO, &b, err, sizeof(err)), 0);
	if (lu.report.verify_mode == RESUME_VERIFY_LAZY) {
		live_update_lazy_settle(&lu);
		assert_true(live_update_lazy_failed(&lu));
	}
	assert_false(resume_memory_ok(&lu.report));
	assert_string_equal(lu.report.verification, "mismatch");
	assert_int_equal(lu.report.chunks_differ, 1);
	assert_int_equal(lu.report.first_differ_chunk, 3);
	assert_int_equal(resume_start(&lu.plan, &b, &lu.report, err, sizeof(err)), -EIO);
	/* The verifier goes only once nothing can touch the bad chunk: here, no vCPU ran. */
	live_update_lazy_stop(&lu);
	vm_destroy(&b);
	live_update_restore_release(&lu);
	vm_destroy(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resume_pipeline_takes_over_a_vm_on_the_same_files),
		cmocka_unit_test(test_restore_after_kexec_builds_from_the_state_and_never_applies_changed_memory),
		cmocka_unit_test(test_restore_after_kexec_verifies_lazily_the_same_verdict),
	};

	sigset_t set;

	/* As kvmlu-vmm's main: the kick reaches vCPU threads only, and only interrupts KVM_RUN. */
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) || vcpu_kick_signal_setup())
		return 1;
	return cmocka_run_group_tests_name("resume_kvm", tests, NULL, NULL);
}
