// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the guest_memfd backend and of memslot.c on this machine's
 * /dev/kvm. Each test makes its own VM. Without /dev/kvm the tests SKIP
 * and say so; those that make a guest_memfd SKIP where this machine's KVM
 * has none (NEED_CAP: it runs them in the QEMU host instead).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "guestmem/guestmem.h"
#include "kvmlu/kvm_uapi.h"
#include "tests/unit/need_cap.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static char err[512];

struct kvm_fixture {
	int kvm_fd;
	int vm_fd;
};

static int kvm_setup(void **state)
{
	static struct kvm_fixture f;

	f.kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	f.vm_fd = -1;
	if (f.kvm_fd >= 0)
		f.vm_fd = ioctl(f.kvm_fd, KVM_CREATE_VM, 0);
	*state = &f;
	return 0;
}

static int kvm_teardown(void **state)
{
	struct kvm_fixture *f = *state;

	if (f->vm_fd >= 0)
		close(f->vm_fd);
	if (f->kvm_fd >= 0)
		close(f->kvm_fd);
	return 0;
}

/* cmocka's skip() leaves the test; print why first. */
#define NEED_VM(f)                                                            \
	do {                                                                  \
		if ((f)->vm_fd < 0) {                                         \
			print_message("no VM: /dev/kvm: %s\n", strerror(errno)); \
			skip();                                               \
		}                                                             \
	} while (0)

static void test_guest_memfd_create_maps_file_owned_by_the_vm(void **state)
{
	struct kvm_fixture *f = *state;
	struct guestmem gm;
	char path[64], link[128], back[8];
	struct statfs sfs;
	ssize_t n;

	NEED_VM(f);
	NEED_CAP("guest_memfd");
	err[0] = '\0';
	assert_int_equal(guestmem_create(&gm, GUESTMEM_GUEST_MEMFD, 64 * MiB, f->vm_fd, "g1", err, sizeof(err)), 0);
	assert_int_equal(gm.backend, GUESTMEM_GUEST_MEMFD);
	assert_int_equal(gm.nr, 1);
	assert_int_equal(fcntl(gm.r[0].fd, F_GETFD) & FD_CLOEXEC, 0);

	/*
	 * KVM's own file, seen the way each kernel shows it: on its own pseudo
	 * fs from 6.18 (f_type GUEST_MEMFD_MAGIC), an anon inode before.
	 */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", gm.r[0].fd);
	n = readlink(path, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_int_equal(fstatfs(gm.r[0].fd, &sfs), 0);
	if ((uint64_t)sfs.f_type != GUEST_MEMFD_MAGIC)
		assert_string_equal(link, "anon_inode:[kvm-gmem]");
	else
		assert_non_null(strstr(link, "[kvm-gmem]"));

	/* INIT_SHARED: the VMM can touch every page through its mapping. */
	memcpy((char *)gm.r[0].hva + 64 * MiB - 8, "gmem-end", 8);
	memcpy(back, (char *)gm.r[0].hva + 64 * MiB - 8, 8);
	assert_memory_equal(back, "gmem-end", 8);
	guestmem_destroy(&gm);
}

static void test_guest_memfd_create_needs_a_vm_fd(void **state)
{
	struct kvm_fixture *f = *state;
	struct guestmem gm;

	NEED_VM(f);
	assert_true(guestmem_create(&gm, GUESTMEM_GUEST_MEMFD, 4 * MiB, f->kvm_fd, "sys", err, sizeof(err)) < 0);
	assert_true(guestmem_create(&gm, GUESTMEM_GUEST_MEMFD, 4 * MiB, -1, "nofd", err, sizeof(err)) == -EBADF);
	assert_non_null(strstr(err, "vm fd -1"));
}

/*
 * Run a few real-mode instructions at gpa 0x1000: load the word at 0x2000
 * into ax, store 0x5a5a at 0x2004, hlt. The guest seeing what the VMM wrote
 * and the VMM seeing what the guest wrote proves the slot is the file.
 */
static void run_guest_on(struct kvm_fixture *f, struct guestmem *gm)
{
	static const unsigned char code[] = {
		0xa1, 0x00, 0x20,			/* mov ax, [0x2000] */
		0xc7, 0x06, 0x04, 0x20, 0x5a, 0x5a,	/* mov word [0x2004], 0x5a5a */
		0xf4,					/* hlt */
	};
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_run *run;
	int vcpu, mmap_size;
	char *ram = gm->r[0].hva;

	memcpy(ram + 0x1000, code, sizeof(code));
	memcpy(ram + 0x2000, "\x34\x12", 2);
	vcpu = ioctl(f->vm_fd, KVM_CREATE_VCPU, 0);
	assert_true(vcpu >= 0);
	mmap_size = ioctl(f->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	assert_true(mmap_size > 0);
	run = mmap(NULL, (size_t)mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	assert_true(run != MAP_FAILED);

	assert_int_equal(ioctl(vcpu, KVM_GET_SREGS, &sregs), 0);
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	sregs.ds.base = 0;
	sregs.ds.selector = 0;
	assert_int_equal(ioctl(vcpu, KVM_SET_SREGS, &sregs), 0);
	memset(&regs, 0, sizeof(regs));
	regs.rip = 0x1000;
	regs.rflags = 2;
	assert_int_equal(ioctl(vcpu, KVM_SET_REGS, &regs), 0);

	assert_int_equal(ioctl(vcpu, KVM_RUN, 0), 0);
	assert_int_equal(run->exit_reason, KVM_EXIT_HLT);
	assert_int_equal(ioctl(vcpu, KVM_GET_REGS, &regs), 0);
	assert_int_equal(regs.rax & 0xffff, 0x1234);
	assert_memory_equal(ram + 0x2004, "\x5a\x5a", 2);

	munmap(run, (size_t)mmap_size);
	close(vcpu);
}

static void test_bind_guest_memfd_lets_the_guest_use_the_file(void **state)
{
	struct kvm_fixture *f = *state;
	struct guestmem gm, again;

	NEED_VM(f);
	NEED_CAP("guest_memfd");
	assert_int_equal(guestmem_create(&gm, GUESTMEM_GUEST_MEMFD, 3 * GiB + 2 * MiB, f->vm_fd, "gbind", err, sizeof(err)), 0);
	assert_int_equal(gm.nr, 2);
	err[0] = '\0';
	assert_int_equal(guestmem_bind(&gm, f->vm_fd, err, sizeof(err)), 0);
	run_guest_on(f, &gm);

	/* The GPAs are taken now: the same plan under other slot ids is refused. */
	assert_int_equal(guestmem_create(&again, GUESTMEM_GUEST_MEMFD, 4 * MiB, f->vm_fd, "gbind2", err, sizeof(err)), 0);
	again.r[0].slot = 5;
	assert_int_equal(guestmem_bind(&again, f->vm_fd, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "KVM_SET_USER_MEMORY_REGION2 slot 5"));
	guestmem_destroy(&again);
	guestmem_destroy(&gm);
}

static void test_bind_memfd_lets_the_guest_use_the_file(void **state)
{
	struct kvm_fixture *f = *state;
	struct guestmem gm;

	NEED_VM(f);
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 64 * MiB, -1, "mbind", err, sizeof(err)), 0);
	assert_int_equal(guestmem_bind(&gm, f->vm_fd, err, sizeof(err)), 0);
	run_guest_on(f, &gm);
	guestmem_destroy(&gm);
}

static void test_bind_failure_deletes_the_slots_it_added(void **state)
{
	struct kvm_fixture *f = *state;
	struct guestmem gm, other;

	NEED_VM(f);
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 3 * GiB + 2 * MiB, -1, "undo", err, sizeof(err)), 0);
	/* Occupy the high region's GPA with another slot so region 1 fails. */
	assert_int_equal(guestmem_create(&other, GUESTMEM_MEMFD, 2 * MiB, -1, "blocker", err, sizeof(err)), 0);
	other.r[0].gpa = GUESTMEM_HIGH_RAM_START;
	other.r[0].slot = 7;
	assert_int_equal(guestmem_bind(&other, f->vm_fd, err, sizeof(err)), 0);

	assert_int_equal(guestmem_bind(&gm, f->vm_fd, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "slot 1"));
	/* Slot 0 was removed again, so binding only region 0 now works. */
	gm.nr = 1;
	assert_int_equal(guestmem_bind(&gm, f->vm_fd, err, sizeof(err)), 0);
	gm.nr = 2;
	guestmem_destroy(&gm);
	guestmem_destroy(&other);
}

static void test_bind_refuses_unmapped_regions(void **state)
{
	struct kvm_fixture *f = *state;
	struct guestmem gm;

	NEED_VM(f);
	assert_int_equal(guestmem_layout(4 * MiB, &gm), 0);
	assert_int_equal(guestmem_bind(&gm, f->vm_fd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not mapped"));
}

static void test_guest_memfd_adopt_takes_a_gmem_file_and_refuses_a_memfd(void **state)
{
	struct kvm_fixture *f = *state;
	struct guestmem gm, gm2, mem;
	int fd;

	NEED_VM(f);
	NEED_CAP("guest_memfd");
	assert_int_equal(guestmem_create(&gm, GUESTMEM_GUEST_MEMFD, 8 * MiB, f->vm_fd, "gadopt", err, sizeof(err)), 0);
	memcpy(gm.r[0].hva, "persist", 7);

	gm2 = gm;
	fd = dup(gm.r[0].fd);
	assert_int_equal(guestmem_adopt(&gm2, &fd, err, sizeof(err)), 0);
	assert_memory_equal(gm2.r[0].hva, "persist", 7);
	guestmem_destroy(&gm2);

	/* A region larger than the file: refused, with both sizes named. */
	gm2 = gm;
	gm2.r[0].size = 16 * MiB;
	gm2.total = 16 * MiB;
	assert_int_equal(guestmem_adopt(&gm2, &gm.r[0].fd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "holds 8388608 bytes, region needs 16777216"));

	/* A memfd where a guest_memfd is expected, and the other way round. */
	assert_int_equal(guestmem_create(&mem, GUESTMEM_MEMFD, 8 * MiB, -1, "notgmem", err, sizeof(err)), 0);
	gm2 = gm;
	assert_int_equal(guestmem_adopt(&gm2, &mem.r[0].fd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a guest_memfd"));
	gm2 = mem;
	assert_int_equal(guestmem_adopt(&gm2, &gm.r[0].fd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a memfd"));

	guestmem_destroy(&mem);
	guestmem_destroy(&gm);
}

static void test_checksum_of_guest_memfd_equals_memfd_with_same_bytes(void **state)
{
	struct kvm_fixture *f = *state;
	struct guestmem g, m;
	struct guestmem_checksum cg, cm;
	unsigned int i;

	NEED_VM(f);
	NEED_CAP("guest_memfd");
	assert_int_equal(guestmem_create(&g, GUESTMEM_GUEST_MEMFD, 8 * MiB, f->vm_fd, "gsum", err, sizeof(err)), 0);
	assert_int_equal(guestmem_create(&m, GUESTMEM_MEMFD, 8 * MiB, -1, "msum", err, sizeof(err)), 0);
	/*
	 * Mostly holes: the memfd's are skipped (SEEK_HOLE), the guest_memfd
	 * cannot seek holes (ESPIPE) and is read whole. Same sum either way.
	 */
	((char *)g.r[0].hva)[3 * MiB + 5] = 0x42;
	((char *)m.r[0].hva)[3 * MiB + 5] = 0x42;
	assert_int_equal(guestmem_checksum(&g, 2, &cg), 0);
	assert_int_equal(guestmem_checksum(&m, 2, &cm), 0);
	assert_true(cg.hi == cm.hi && cg.lo == cm.lo);
	for (i = 0; i < 8 * MiB; i += 4096)
		((uint32_t *)g.r[0].hva)[i / 4] = i * 2654435761u;
	memcpy(m.r[0].hva, g.r[0].hva, 8 * MiB);
	assert_int_equal(guestmem_checksum(&g, 2, &cg), 0);
	assert_int_equal(guestmem_checksum(&m, 1, &cm), 0);
	/* The sum is about the guest's memory, not about which file holds it. */
	assert_true(cg.hi == cm.hi && cg.lo == cm.lo);
	((char *)g.r[0].hva)[5 * MiB] ^= 1;
	assert_int_equal(guestmem_checksum(&g, 2, &cg), 0);
	assert_false(cg.hi == cm.hi && cg.lo == cm.lo);
	guestmem_destroy(&m);
	guestmem_destroy(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_guest_memfd_create_maps_file_owned_by_the_vm, kvm_setup, kvm_teardown),
		cmocka_unit_test_setup_teardown(test_guest_memfd_create_needs_a_vm_fd, kvm_setup, kvm_teardown),
		cmocka_unit_test_setup_teardown(test_bind_guest_memfd_lets_the_guest_use_the_file, kvm_setup, kvm_teardown),
		cmocka_unit_test_setup_teardown(test_bind_memfd_lets_the_guest_use_the_file, kvm_setup, kvm_teardown),
		cmocka_unit_test_setup_teardown(test_bind_failure_deletes_the_slots_it_added, kvm_setup, kvm_teardown),
		cmocka_unit_test_setup_teardown(test_bind_refuses_unmapped_regions, kvm_setup, kvm_teardown),
		cmocka_unit_test_setup_teardown(test_guest_memfd_adopt_takes_a_gmem_file_and_refuses_a_memfd, kvm_setup, kvm_teardown),
		cmocka_unit_test_setup_teardown(test_checksum_of_guest_memfd_equals_memfd_with_same_bytes, kvm_setup, kvm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
