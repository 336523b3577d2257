// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of guestmem/gmem_link.c on this machine's /dev/kvm. The
 * stock kernel here has no KVM_CAP_GUEST_MEMFD_LINK, so what runs is the
 * refusal: the clear message, -EOPNOTSUPP, and a VM left as it was. On a
 * kernel with the kvmlu patch the same tests check the link shares memory
 * (the kexec path itself runs in the harness). Without /dev/kvm: SKIP;
 * the tests that make a guest_memfd SKIP where this machine's KVM has none
 * (NEED_CAP: the QEMU host runs them).
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
#include <unistd.h>

#include "guestmem/gmem_link.h"
#include "guestmem/guestmem.h"
#include "kvmlu/kvm_uapi.h"
#include "tests/unit/need_cap.h"

#define MiB (1ULL << 20)

static char err[512];

struct vm_pair {
	int kvm_fd;
	int vm_a;	/* the VM that made the memory */
	int vm_b;	/* the VM that links it */
};

static int vms_setup(void **state)
{
	static struct vm_pair p;

	p.kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	p.vm_a = p.vm_b = -1;
	if (p.kvm_fd >= 0) {
		p.vm_a = ioctl(p.kvm_fd, KVM_CREATE_VM, 0);
		p.vm_b = ioctl(p.kvm_fd, KVM_CREATE_VM, 0);
	}
	*state = &p;
	return 0;
}

static int vms_teardown(void **state)
{
	struct vm_pair *p = *state;

	if (p->vm_b >= 0)
		close(p->vm_b);
	if (p->vm_a >= 0)
		close(p->vm_a);
	if (p->kvm_fd >= 0)
		close(p->kvm_fd);
	return 0;
}

#define NEED_VMS(p)                                                           \
	do {                                                                  \
		if ((p)->vm_a < 0 || (p)->vm_b < 0) {                         \
			print_message("no VM: /dev/kvm: %s\n", strerror(errno)); \
			skip();                                               \
		}                                                             \
	} while (0)

static int kernel_can_link(int vm_fd)
{
	int r = guestmem_gmem_can_link(vm_fd, err, sizeof(err));

	assert_true(r == 0 || r == 1);
	return r;
}

static void test_gmem_link_says_the_kernel_needs_the_patch_or_shares_memory(void **state)
{
	struct vm_pair *p = *state;
	struct guestmem a = { 0 };
	int fd;

	NEED_VMS(p);
	NEED_CAP("guest_memfd");
	assert_int_equal(guestmem_create(&a, GUESTMEM_GUEST_MEMFD, 8 * MiB, p->vm_a, "linksrc",
					 err, sizeof(err)), 0);
	memcpy(a.r[0].hva, "linked!", 8);
	err[0] = '\0';
	fd = guestmem_gmem_link(p->vm_b, a.r[0].fd, err, sizeof(err));
	if (!kernel_can_link(p->vm_b)) {
		assert_int_equal(fd, -EOPNOTSUPP);
		assert_non_null(strstr(err, "kernel cannot link guest_memfd (needs kvmlu kernel patch)"));
		assert_non_null(strstr(err, "KVM_CAP_GUEST_MEMFD_LINK (252)"));
	} else {
		char *q;

		assert_true(fd >= 0);
		q = mmap(NULL, 8 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		assert_ptr_not_equal(q, MAP_FAILED);
		assert_memory_equal(q, "linked!", 8);
		memcpy(q + 4096, "back", 4);
		assert_memory_equal((char *)a.r[0].hva + 4096, "back", 4);
		munmap(q, 8 * MiB);
		close(fd);
	}
	guestmem_destroy(&a);
}

static void test_gmem_link_refuses_a_memfd(void **state)
{
	struct vm_pair *p = *state;
	struct guestmem m = { 0 };
	int fd;

	NEED_VMS(p);
	assert_int_equal(guestmem_create(&m, GUESTMEM_MEMFD, 2 * MiB, -1, "notgmem",
					 err, sizeof(err)), 0);
	fd = guestmem_gmem_link(p->vm_b, m.r[0].fd, err, sizeof(err));
	/* Without the patch: refused before the ioctl; with it: EINVAL. */
	assert_int_equal(fd, kernel_can_link(p->vm_b) ? -EINVAL : -EOPNOTSUPP);
	guestmem_destroy(&m);
}

static void test_gmem_link_names_a_bad_vm_fd(void **state)
{
	int fd;

	(void)state;
	fd = guestmem_gmem_link(-1, 0, err, sizeof(err));
	assert_int_equal(fd, -EBADF);
	assert_non_null(strstr(err, "KVM_CHECK_EXTENSION(KVM_CAP_GUEST_MEMFD_LINK 252) on vm fd -1"));
}

static void test_gmem_relink_refused_leaves_ram_and_slots_as_they_were(void **state)
{
	struct vm_pair *p = *state;
	struct guestmem a = { 0 }, b = { 0 };
	int src[1], fd_before;
	void *hva_before;
	int ret;

	NEED_VMS(p);
	NEED_CAP("guest_memfd");
	assert_int_equal(guestmem_create(&a, GUESTMEM_GUEST_MEMFD, 8 * MiB, p->vm_a, "src",
					 err, sizeof(err)), 0);
	assert_int_equal(guestmem_create(&b, GUESTMEM_GUEST_MEMFD, 8 * MiB, p->vm_b, "dst",
					 err, sizeof(err)), 0);
	assert_int_equal(guestmem_bind(&b, p->vm_b, err, sizeof(err)), 0);
	memcpy(a.r[0].hva, "from a", 6);
	memcpy(b.r[0].hva, "own b", 5);
	fd_before = b.r[0].fd;
	hva_before = b.r[0].hva;
	src[0] = a.r[0].fd;

	ret = guestmem_gmem_relink(&b, p->vm_b, src, err, sizeof(err));
	if (!kernel_can_link(p->vm_b)) {
		struct kvm_userspace_memory_region2 m;

		assert_int_equal(ret, -EOPNOTSUPP);
		assert_non_null(strstr(err, "region 0: kernel cannot link guest_memfd"));
		assert_int_equal(b.r[0].fd, fd_before);
		assert_ptr_equal(b.r[0].hva, hva_before);
		assert_memory_equal(b.r[0].hva, "own b", 5);
		assert_true(fcntl(src[0], F_GETFD) >= 0);
		/* Still bound: the slot cannot be added a second time over itself. */
		memset(&m, 0, sizeof(m));
		m.slot = b.r[0].slot + 1;
		m.guest_phys_addr = b.r[0].gpa;
		m.memory_size = 2 * MiB;
		m.userspace_addr = (uint64_t)(uintptr_t)b.r[0].hva;
		assert_int_equal(ioctl(p->vm_b, KVM_SET_USER_MEMORY_REGION2, &m), -1);
		assert_int_equal(errno, EEXIST);
	} else {
		assert_int_equal(ret, 0);
		assert_memory_equal(b.r[0].hva, "from a", 6);
		memcpy(b.r[0].hva, "b wrote", 7);
		assert_memory_equal(a.r[0].hva, "b wrote", 7);
	}
	guestmem_destroy(&b);
	guestmem_destroy(&a);
}

static void test_gmem_relink_refuses_memfd_ram(void **state)
{
	struct guestmem m = { 0 };
	int src[1] = { -1 };

	(void)state;
	assert_int_equal(guestmem_create(&m, GUESTMEM_MEMFD, 2 * MiB, -1, "memfdram",
					 err, sizeof(err)), 0);
	assert_int_equal(guestmem_gmem_relink(&m, -1, src, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "need guest_memfd"));
	assert_true(m.r[0].fd >= 0);
	guestmem_destroy(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gmem_link_says_the_kernel_needs_the_patch_or_shares_memory,
						vms_setup, vms_teardown),
		cmocka_unit_test_setup_teardown(test_gmem_link_refuses_a_memfd, vms_setup, vms_teardown),
		cmocka_unit_test(test_gmem_link_names_a_bad_vm_fd),
		cmocka_unit_test_setup_teardown(test_gmem_relink_refused_leaves_ram_and_slots_as_they_were,
						vms_setup, vms_teardown),
		cmocka_unit_test(test_gmem_relink_refuses_memfd_ram),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
