// SPDX-License-Identifier: GPL-2.0
/*
 * Round trip of a whole VM state through real /dev/kvm: a VM with two
 * vCPUs gets distinctive registers, MSRs, debug registers, XCR0, LAPIC
 * and PIT values; it is captured, written as an FDT, parsed, validated
 * and restored into a second, fresh VM, which is captured again. The two
 * captures must match (except the values that follow host time: TSC,
 * the LAPIC timer count, PIT load time, kvmclock, which must only move
 * forward). Also checks that KVM's own refusal names the first MSR.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/state/cpu_state.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_vm.h"
#include "vmm/state/vm_devices_state.h"

#define NR_VCPUS 2
#define RAM_SIZE (2u << 20)

struct test_vm {
	int vm_fd;
	int vcpu[NR_VCPUS];
	void *ram;
};

static int kvm_fd = -1;
static int kvm_errno;
static bool tsc_offset_settable;
static char err[512];

static int setup(void **state)
{
	(void)state;
	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	kvm_errno = errno;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (kvm_fd >= 0)
		close(kvm_fd);
	return 0;
}

static void set_supported_cpuid(int vcpu)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + 256 * sizeof(c->entries[0]));

	assert_non_null(c);
	c->nent = 256;
	assert_int_equal(ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c), 0);
	assert_int_equal(ioctl(vcpu, KVM_SET_CPUID2, c), 0);
	free(c);
}

static void vm_make(struct test_vm *t)
{
	struct kvm_pit_config pit = { 0 };
	struct kvm_userspace_memory_region mr = { 0 };

	t->vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	assert_true(t->vm_fd >= 0);
	assert_int_equal(ioctl(t->vm_fd, KVM_SET_TSS_ADDR, 0xfffbd000ul), 0);
	assert_int_equal(ioctl(t->vm_fd, KVM_CREATE_IRQCHIP, 0), 0);
	assert_int_equal(ioctl(t->vm_fd, KVM_CREATE_PIT2, &pit), 0);
	t->ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t->ram != MAP_FAILED);
	mr.memory_size = RAM_SIZE;
	mr.userspace_addr = (uintptr_t)t->ram;
	assert_int_equal(ioctl(t->vm_fd, KVM_SET_USER_MEMORY_REGION, &mr), 0);
	for (int i = 0; i < NR_VCPUS; i++) {
		t->vcpu[i] = ioctl(t->vm_fd, KVM_CREATE_VCPU, i);
		assert_true(t->vcpu[i] >= 0);
		set_supported_cpuid(t->vcpu[i]);
	}
}

static void vm_free(struct test_vm *t)
{
	for (int i = 0; i < NR_VCPUS; i++)
		close(t->vcpu[i]);
	close(t->vm_fd);
	munmap(t->ram, RAM_SIZE);
}

static void set_msr(int vcpu, uint32_t index, uint64_t value)
{
	struct kvm_msrs *m = calloc(1, sizeof(*m) + sizeof(m->entries[0]));

	assert_non_null(m);
	m->nmsrs = 1;
	m->entries[0].index = index;
	m->entries[0].data = value;
	assert_int_equal(ioctl(vcpu, KVM_SET_MSRS, m), 1);
	free(m);
}

/* Values no fresh vCPU has, different per vCPU. */
static void make_distinctive(struct test_vm *t)
{
	for (int i = 0; i < NR_VCPUS; i++) {
		int v = t->vcpu[i];
		struct kvm_regs regs;
		struct kvm_sregs2 sregs;
		struct kvm_debugregs dr = { 0 };
		struct kvm_xcrs xcrs = { .nr_xcrs = 1 };

		assert_int_equal(ioctl(v, KVM_GET_REGS, &regs), 0);
		regs.rax = 0x1111222233334444ull + i;
		regs.r15 = 0xdeadbeefcafef00dull;
		regs.rsp = 0x8000 + i * 0x100;
		regs.rip = 0xfff0 + i;
		regs.rflags = 0x2 | (1 << 11);	/* OF */
		assert_int_equal(ioctl(v, KVM_SET_REGS, &regs), 0);
		assert_int_equal(ioctl(v, KVM_GET_SREGS2, &sregs), 0);
		sregs.cr2 = 0xabc000 + i;
		sregs.gdt.base = 0x1000;
		sregs.gdt.limit = 0x2f;
		assert_int_equal(ioctl(v, KVM_SET_SREGS2, &sregs), 0);
		set_msr(v, 0x174, 0x10 + i);			/* SYSENTER_CS */
		set_msr(v, 0xc0000081, 0x0023001000000000ull);	/* STAR */
		set_msr(v, 0xc0000082, 0xffffffff81000000ull + i);	/* LSTAR */
		set_msr(v, 0xc0000102, 0xffff888000000000ull);	/* KERNEL_GS_BASE */
		dr.db[0] = 0x4000 + i;
		dr.db[3] = 0x7000;
		dr.dr7 = 0x401;
		dr.dr6 = 0xffff0ff0;
		assert_int_equal(ioctl(v, KVM_SET_DEBUGREGS, &dr), 0);
		xcrs.xcrs[0].xcr = 0;
		xcrs.xcrs[0].value = 0x3;	/* x87 | SSE */
		assert_int_equal(ioctl(v, KVM_SET_XCRS, &xcrs), 0);
		{
			/* A guest TSC far behind the host's, as after a long-lived VM. */
			uint64_t off = (uint64_t)-1000000000000ll - (uint64_t)i;
			struct kvm_device_attr a = { .group = KVM_VCPU_TSC_CTRL,
						     .attr = KVM_VCPU_TSC_OFFSET,
						     .addr = (uint64_t)(uintptr_t)&off };

			if (ioctl(v, KVM_HAS_DEVICE_ATTR, &a) == 0)
				assert_int_equal(ioctl(v, KVM_SET_DEVICE_ATTR, &a), 0);
			off = 0;
			if (ioctl(v, KVM_GET_DEVICE_ATTR, &a) == 0 &&
			    off == (uint64_t)-1000000000000ll - (uint64_t)i)
				tsc_offset_settable = true;
		}
	}
}

static void capture(struct test_vm *t, struct state_vm *s)
{
	assert_int_equal(state_vm_init(s, NR_VCPUS), 0);
	snprintf(s->name, sizeof(s->name), "roundtrip");
	assert_int_equal(state_uuid_generate(s->uuid), 0);
	snprintf(s->kvmlu_version, sizeof(s->kvmlu_version), "test");
	s->backend = STATE_BACKEND_MEMFD;
	s->nr_regions = 1;
	s->regions[0] = (struct state_vm_region){ .gpa = 0, .size = RAM_SIZE };
	for (int i = 0; i < NR_VCPUS; i++) {
		int ret = cpu_state_capture(kvm_fd, t->vm_fd, t->vcpu[i], (uint32_t)i,
					    &s->cpus[i], err, sizeof(err));
		if (ret)
			fail_msg("capture vCPU %d: %s", i, err);
	}
	if (vm_devices_state_capture(t->vm_fd, &s->devices, err, sizeof(err)))
		fail_msg("capture devices: %s", err);
}

static bool msr_follows_time(uint32_t index)
{
	return index == 0x10 /* IA32_TSC */;
}

static void assert_cpus_equal(const struct cpu_state *a, const struct cpu_state *b)
{
	assert_memory_equal(&a->regs, &b->regs, sizeof(a->regs));
	assert_memory_equal(&a->sregs2, &b->sregs2, sizeof(a->sregs2));
	assert_memory_equal(&a->xcrs, &b->xcrs, sizeof(a->xcrs));
	assert_memory_equal(&a->debugregs, &b->debugregs, sizeof(a->debugregs));
	assert_int_equal(a->xsave_size, b->xsave_size);
	assert_memory_equal(a->xsave, b->xsave, a->xsave_size);
	assert_int_equal(a->mp_state.mp_state, b->mp_state.mp_state);
	assert_int_equal(a->nr_cpuid, b->nr_cpuid);
	assert_memory_equal(a->cpuid, b->cpuid, a->nr_cpuid * sizeof(a->cpuid[0]));
	assert_int_equal(a->tsc_khz, b->tsc_khz);
	assert_int_equal(a->have, b->have);
	if (a->have & CPU_STATE_HAVE_TSC_OFFSET)
		assert_int_equal(a->tsc_offset, b->tsc_offset);
	/* LAPIC: all but the timer's current count (0x390), which runs. */
	assert_memory_equal(a->lapic.regs, b->lapic.regs, 0x390);
	assert_memory_equal(a->lapic.regs + 0x3a0, b->lapic.regs + 0x3a0,
			    sizeof(a->lapic.regs) - 0x3a0);
	assert_int_equal(a->events.exception.nr, b->events.exception.nr);
	assert_int_equal(a->events.nmi.masked, b->events.nmi.masked);
	assert_int_equal(a->events.interrupt.shadow, b->events.interrupt.shadow);
	assert_int_equal(a->nr_msrs, b->nr_msrs);
	for (uint32_t i = 0; i < a->nr_msrs; i++) {
		assert_int_equal(a->msrs[i].index, b->msrs[i].index);
		if (msr_follows_time(a->msrs[i].index))
			continue;
		if (a->msrs[i].value != b->msrs[i].value)
			fail_msg("vCPU %u MSR 0x%x: 0x%llx before, 0x%llx after", a->index,
				 a->msrs[i].index, (unsigned long long)a->msrs[i].value,
				 (unsigned long long)b->msrs[i].value);
	}
}

static uint64_t msr_value(const struct cpu_state *c, uint32_t index)
{
	for (uint32_t i = 0; i < c->nr_msrs; i++)
		if (c->msrs[i].index == index)
			return c->msrs[i].value;
	fail_msg("MSR 0x%x not captured", index);
	return 0;
}

static void test_cpu_state_roundtrip_through_fdt_into_new_vm(void **state)
{
	struct test_vm a, b;
	struct state_vm s1, s2, parsed;
	void *blob;
	size_t size;

	(void)state;
	if (kvm_fd < 0) {
		printf("SKIP: no VM: /dev/kvm: %s\n", strerror(kvm_errno));
		skip();
	}
	vm_make(&a);
	make_distinctive(&a);
	capture(&a, &s1);
	/* The distinctive values really are in the capture. */
	assert_int_equal(s1.cpus[1].regs.rax, 0x1111222233334445ull);
	assert_int_equal(msr_value(&s1.cpus[1], 0xc0000082), 0xffffffff81000001ull);
	assert_int_equal(s1.cpus[0].debugregs.db[0], 0x4000);
	/* Some hosts (the PVM machines here) accept the offset and ignore it. */
	if (tsc_offset_settable)
		assert_int_equal(s1.cpus[1].tsc_offset, (uint64_t)-1000000000000ll - 1);
	else
		print_message("this KVM ignores KVM_VCPU_TSC_OFFSET writes: offset kept as read (%llu)\n",
			      (unsigned long long)s1.cpus[1].tsc_offset);
	assert_true(s1.cpus[0].nr_msrs > 10);
	assert_true(s1.devices.have & VM_DEVICES_HAVE_IRQCHIP);
	assert_true(s1.devices.have & VM_DEVICES_HAVE_PIT);

	if (state_fdt_write(&s1, &blob, &size, err, sizeof(err)))
		fail_msg("write: %s", err);
	if (state_fdt_load(blob, size, NR_VCPUS, &parsed, err, sizeof(err)))
		fail_msg("load: %s", err);
	for (int i = 0; i < NR_VCPUS; i++)
		assert_cpus_equal(&s1.cpus[i], &parsed.cpus[i]);

	vm_make(&b);
	for (int i = 0; i < NR_VCPUS; i++)
		if (cpu_state_restore(b.vm_fd, b.vcpu[i], &parsed.cpus[i], err, sizeof(err)))
			fail_msg("restore vCPU %d: %s", i, err);
	if (vm_devices_state_restore(b.vm_fd, &parsed.devices, err, sizeof(err)))
		fail_msg("restore devices: %s", err);
	capture(&b, &s2);
	for (int i = 0; i < NR_VCPUS; i++)
		assert_cpus_equal(&s1.cpus[i], &s2.cpus[i]);
	assert_memory_equal(&s1.devices.pic_master, &s2.devices.pic_master,
			    sizeof(s1.devices.pic_master));
	assert_memory_equal(&s1.devices.pic_slave, &s2.devices.pic_slave,
			    sizeof(s1.devices.pic_slave));
	assert_memory_equal(&s1.devices.ioapic, &s2.devices.ioapic, sizeof(s1.devices.ioapic));
	for (int c = 0; c < 3; c++) {
		assert_int_equal(s1.devices.pit.channels[c].count, s2.devices.pit.channels[c].count);
		assert_int_equal(s1.devices.pit.channels[c].mode, s2.devices.pit.channels[c].mode);
	}
	/* kvmclock continues: never behind what it was at capture. */
	assert_true(s2.devices.clock.clock >= s1.devices.clock.clock);

	free(blob);
	state_vm_free(&s1);
	state_vm_free(&s2);
	state_vm_free(&parsed);
	vm_free(&a);
	vm_free(&b);
}

static void test_cpu_state_restore_names_first_refused_msr(void **state)
{
	struct test_vm a, b;
	struct state_vm s;

	(void)state;
	if (kvm_fd < 0) {
		printf("SKIP: no VM: /dev/kvm: %s\n", strerror(kvm_errno));
		skip();
	}
	vm_make(&a);
	capture(&a, &s);
	/* An MSR no x86 CPU has: KVM stops there and the error must say so. */
	s.cpus[0].msrs[s.cpus[0].nr_msrs].index = 0x2ff0;
	s.cpus[0].msrs[s.cpus[0].nr_msrs].value = 1;
	s.cpus[0].nr_msrs++;
	vm_make(&b);
	assert_int_not_equal(cpu_state_restore(b.vm_fd, b.vcpu[0], &s.cpus[0], err,
					       sizeof(err)), 0);
	if (!strstr(err, "KVM_SET_MSRS") || !strstr(err, "first refused 0x2ff0"))
		fail_msg("error does not name the MSR: %s", err);
	state_vm_free(&s);
	vm_free(&a);
	vm_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_state_roundtrip_through_fdt_into_new_vm),
		cmocka_unit_test(test_cpu_state_restore_names_first_refused_msr),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
