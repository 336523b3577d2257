// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/resume/ (the resume pipeline of live upgrade and of a
 * restore after a kexec) that need no KVM: the memory step, the one
 * memory checker, on real memfd-backed RAM (guestmem_create), full,
 * lazy falling back to full, none; a state that does not describe the
 * VM refused; a VM on changed memory refused by apply and start; the
 * plan filled from a state after a kexec; the report's steps as integer
 * ns. Building, applying and starting on KVM is what the native upgrade
 * tests and the harness's host-update cases prove.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/luo_session.h"
#include "guestmem/digest_table.h"
#include "kvmlu/control_wire.h"
#include "vmm/devices/virtio_blk_device.h"
#include "vmm/resume/resume.h"
#include "vmm/vm.h"

#define MiB (1ULL << 20)

struct fixture {
	struct vm vm;
	struct resume_plan plan;
	struct resume_report report;
};

static char err[512];

/* A VM of 8 MiB memfd RAM (4 chunks), no KVM, and a plan whose state is its pause. */
static int setup(void **state)
{
	static struct fixture f;
	struct state_vm *s = &f.plan.state;
	struct guestmem_digest_table t;
	unsigned char *ram;

	memset(&f.vm, 0, sizeof(f.vm));
	f.vm.kvm_fd = f.vm.vm_fd = f.vm.stop_efd = -1;
	snprintf(f.vm.name, sizeof(f.vm.name), "vm-resume");
	if (guestmem_create(&f.vm.mem, GUESTMEM_MEMFD, 8 * MiB, -1, "resume", err, sizeof(err)))
		return -1;
	ram = f.vm.mem.r[0].hva;
	for (uint64_t i = 0; i < 8 * MiB; i += 4096)
		ram[i] = (unsigned char)(i >> 12);
	resume_plan_init(&f.plan);
	resume_report_init(&f.report);
	f.plan.backend = GUESTMEM_MEMFD;
	f.plan.nr_ram = 1;
	f.plan.ram_fds[0] = f.vm.mem.r[0].fd;
	if (state_vm_init(s, 1))
		return -1;
	f.plan.have_state = true;
	s->backend = STATE_BACKEND_MEMFD;
	s->nr_regions = 1;
	s->regions[0] = (struct state_vm_region){ .gpa = f.vm.mem.r[0].gpa,
						  .size = f.vm.mem.r[0].size };
	/* What a prepare-update records at pause: the checksum and its chunk digests. */
	if (guestmem_digest_table_init(&t, &f.vm.mem) ||
	    guestmem_digest_table_refresh(&t, 1, NULL, NULL) ||
	    guestmem_digest_table_sum(&t, &s->checksum_hi, &s->checksum_lo))
		return -1;
	s->has_checksum = true;
	s->chunk_digests = malloc(t.nr_chunks * sizeof(*s->chunk_digests));
	if (!s->chunk_digests)
		return -1;
	memcpy(s->chunk_digests, t.digest, t.nr_chunks * sizeof(*s->chunk_digests));
	s->nr_chunk_digests = t.nr_chunks;
	guestmem_digest_table_free(&t);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	resume_verify_stop(&f->report);
	resume_plan_free(&f->plan);
	guestmem_destroy(&f->vm.mem);
	return 0;
}

static void test_resume_full_verify_accepts_the_memory_of_the_pause(void **state)
{
	struct fixture *f = *state;

	f->plan.verify = RESUME_VERIFY_FULL;
	assert_int_equal(resume_verify(&f->plan, &f->vm, &f->report, err, sizeof(err)), 0);
	assert_true(f->report.memory_verified);
	assert_true(resume_memory_ok(&f->report));
	assert_string_equal(f->report.verification, "verified");
	assert_string_equal(f->report.checksum_now, f->report.checksum_recorded);
	assert_int_equal(f->report.nr_chunks, 4);
	assert_int_equal(f->report.chunks_differ, 0);
	assert_string_equal(resume_verify_mode_name(f->report.verify_mode), "sync");
}

static void test_resume_full_verify_names_the_changed_chunk_and_never_runs(void **state)
{
	struct fixture *f = *state;
	unsigned char *ram = f->vm.mem.r[0].hva;
	char desc[256];

	ram[5 * MiB + 17] ^= 0x40;	/* chunk 2 */
	f->plan.verify = RESUME_VERIFY_FULL;
	assert_int_equal(resume_verify(&f->plan, &f->vm, &f->report, err, sizeof(err)), 0);
	assert_false(f->report.memory_verified);
	assert_false(resume_memory_ok(&f->report));
	assert_string_equal(f->report.verification, "mismatch");
	assert_int_equal(f->report.chunks_differ, 1);
	assert_int_equal(f->report.first_differ_chunk, 2);
	resume_mismatch_desc(&f->report, desc, sizeof(desc));
	assert_non_null(strstr(desc, "1 of 4 chunks of 2 MiB differ, the first is chunk 2"));
	assert_non_null(strstr(desc, f->report.checksum_recorded));
	/* The VM has no vCPU at all: both must refuse before they touch KVM. */
	assert_int_equal(resume_apply(&f->plan, &f->vm, &f->report, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "memory differs"));
	assert_int_equal(resume_start(&f->plan, &f->vm, &f->report, err, sizeof(err)), -EIO);
	ram[5 * MiB + 17] ^= 0x40;
}

static void test_resume_lazy_without_chunk_digests_verifies_all_before_running(void **state)
{
	struct fixture *f = *state;
	struct state_vm *s = &f->plan.state;

	free(s->chunk_digests);
	s->chunk_digests = NULL;
	s->nr_chunk_digests = 0;
	f->plan.verify = RESUME_VERIFY_LAZY;
	assert_int_equal(resume_verify(&f->plan, &f->vm, &f->report, err, sizeof(err)), 0);
	assert_null(f->report.lazy);
	assert_int_equal(f->report.verify_mode, RESUME_VERIFY_FULL);
	assert_non_null(strstr(f->report.verify_fallback, "no chunk digests"));
	assert_true(f->report.memory_verified);
	assert_string_equal(f->report.verification, "verified");
}

static void test_resume_full_verify_without_recorded_checksum_is_a_mismatch(void **state)
{
	struct fixture *f = *state;

	/* After a kexec a state must carry its checksum: none is not "equal". */
	f->plan.state.has_checksum = false;
	f->plan.verify = RESUME_VERIFY_FULL;
	f->plan.verify_why = "sync verification asked for";
	assert_int_equal(resume_verify(&f->plan, &f->vm, &f->report, err, sizeof(err)), 0);
	assert_false(resume_memory_ok(&f->report));
	assert_false(f->report.has_recorded);
	assert_string_equal(f->report.verify_fallback, "sync verification asked for");
}

static void test_resume_none_lets_the_vm_run_unverified(void **state)
{
	struct fixture *f = *state;
	unsigned char *ram = f->vm.mem.r[0].hva;

	/* An upgrade without a checksum: nothing to compare, nothing hashed. */
	ram[0] ^= 1;
	f->plan.verify = RESUME_VERIFY_NONE;
	assert_int_equal(resume_verify(&f->plan, &f->vm, &f->report, err, sizeof(err)), 0);
	assert_true(resume_memory_ok(&f->report));
	assert_string_equal(f->report.verification, "");
	assert_string_equal(f->report.checksum_now, "");
	ram[0] ^= 1;
}

static void test_resume_verify_refuses_a_state_of_another_vm(void **state)
{
	struct fixture *f = *state;
	struct state_vm *s = &f->plan.state;

	f->plan.verify = RESUME_VERIFY_FULL;
	s->nr_regions = 2;
	s->regions[1] = (struct state_vm_region){ .gpa = 4ULL << 30, .size = 2 * MiB, .token = 1 };
	assert_int_equal(resume_verify(&f->plan, &f->vm, &f->report, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "state has 2 memory regions, VM 1");
	s->nr_regions = 1;
	s->regions[0].token = 3;
	assert_int_equal(resume_verify(&f->plan, &f->vm, &f->report, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "names file 3"));
	s->regions[0].token = 0;
	s->regions[0].size = 4 * MiB;
	assert_int_equal(resume_verify(&f->plan, &f->vm, &f->report, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not the VM's"));
	s->regions[0].size = 8 * MiB;
	s->backend = STATE_BACKEND_GUEST_MEMFD;
	assert_int_equal(resume_verify(&f->plan, &f->vm, &f->report, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "state backend guest_memfd"));
	s->backend = STATE_BACKEND_MEMFD;
	assert_false(resume_memory_ok(&f->report));
}

static void test_resume_plan_after_a_kexec_names_luo_tokens_and_paths(void **state)
{
	struct fixture *f = *state;
	struct state_vm *s = &f->plan.state;
	struct virtio_blk_state *d;

	f->plan.ram_token_base = LUO_TOKEN_RAM(0);
	assert_int_equal(resume_plan_check_tokens(&f->plan, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "expected token 0x100 offset 0"));
	s->regions[0].token = LUO_TOKEN_RAM(0);
	assert_int_equal(resume_plan_check_tokens(&f->plan, err, sizeof(err)), 0);
	snprintf(s->name, sizeof(s->name), "vm-k");
	d = state_vm_add_device(s, &virtio_blk_type);
	assert_non_null(d);
	snprintf(d->ident.path, sizeof(d->ident.path), "/var/lib/d.img");
	d->readonly = true;
	snprintf(d->id, sizeof(d->id), "root");
	resume_plan_from_state(&f->plan);
	assert_string_equal(f->plan.name, "vm-k");
	assert_int_equal(f->plan.ram_size, 8 * MiB);
	assert_int_equal(f->plan.nr_vcpus, 1);
	assert_int_equal(f->plan.backend, GUESTMEM_MEMFD);
	/* Fds do not cross a kexec: the disk is opened again by its path. */
	assert_int_equal(f->plan.nr_devs, 1);
	assert_ptr_equal(f->plan.devs[0].type, &virtio_blk_type);
	assert_int_equal(f->plan.devs[0].fd, -1);
	{
		const struct virtio_blk_disk_spec *ds = vm_device_config_spec_c(&f->plan.devs[0]);

		assert_string_equal(ds->ident.path, "/var/lib/d.img");
		assert_true(ds->readonly);
		assert_string_equal(ds->id, "root");
	}
	/* The transport is the state's: the VM is built the same way again. */
	assert_int_equal(f->plan.transport, VM_VIRTIO_TRANSPORT_MMIO);
	s->virtio_transport = STATE_VIRTIO_TRANSPORT_PCI;
	resume_plan_from_state(&f->plan);
	assert_int_equal(f->plan.transport, VM_VIRTIO_TRANSPORT_PCI);
}

static void test_resume_report_steps_are_integer_ns(void **state)
{
	struct fixture *f = *state;
	static const char *const keys[] = { KVMLU_KEY_STEP_BUILD_NS, KVMLU_KEY_STEP_VERIFY_NS,
					     KVMLU_KEY_STEP_APPLY_NS, KVMLU_KEY_STEP_START_NS };
	json_object *o = json_object_new_object(), *steps, *v;

	f->report.build_ns = 1234567;
	f->report.verify_ns = 2;
	f->report.apply_ns = 3000000001ULL;	/* past 32 bits */
	f->report.start_ns = 0;
	resume_report_steps(&f->report, o);
	assert_true(json_object_object_get_ex(o, KVMLU_KEY_STEPS, &steps));
	assert_int_equal(json_object_object_length(steps), 4);
	for (size_t i = 0; i < 4; i++) {
		assert_true(json_object_object_get_ex(steps, keys[i], &v));
		assert_true(json_object_is_type(v, json_type_int));
	}
	json_object_object_get_ex(steps, KVMLU_KEY_STEP_APPLY_NS, &v);
	assert_int_equal(json_object_get_int64(v), 3000000001LL);
	json_object_object_get_ex(steps, KVMLU_KEY_STEP_BUILD_NS, &v);
	assert_int_equal(json_object_get_int64(v), 1234567);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_resume_full_verify_accepts_the_memory_of_the_pause,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_full_verify_names_the_changed_chunk_and_never_runs,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_lazy_without_chunk_digests_verifies_all_before_running,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_full_verify_without_recorded_checksum_is_a_mismatch,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_none_lets_the_vm_run_unverified,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_verify_refuses_a_state_of_another_vm,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_plan_after_a_kexec_names_luo_tokens_and_paths,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_report_steps_are_integer_ns,
						setup, teardown),
	};

	return cmocka_run_group_tests_name("resume", tests, NULL, NULL);
}
