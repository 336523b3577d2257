// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/kvm.c: opening /dev/kvm must fail with a message a
 * user can act on, different for a missing node and for a file that is
 * not KVM; on this machine's real /dev/kvm the checks for a memfd VM
 * pass, and those for a guest_memfd VM pass where KVM has guest_memfd
 * (else the QEMU host runs that test) and refuse clearly where it lacks it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/need_cap.h"
#include "vmm/kvm.h"

static void test_kvm_open_missing_node_says_so(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(kvm_open("/nonexistent/kvm", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/kvm"));
	assert_non_null(strstr(err, "kvm module"));
}

static void test_kvm_open_not_kvm_is_refused(void **state)
{
	char err[256] = "";

	(void)state;
	/* /dev/null opens fine but is no KVM: the API version check catches it. */
	assert_int_equal(kvm_open("/dev/null", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "KVM_GET_API_VERSION"));
}

/* What every VM needs, whatever its memory backend: memfd RAM works with it. */
static void test_kvm_real_device_has_what_kvmlu_needs(void **state)
{
	char err[256] = "";
	int fd, size;

	(void)state;
	if (access("/dev/kvm", R_OK | W_OK)) {
		printf("SKIP: no VM: /dev/kvm: %s\n", strerror(errno));
		skip();
		return;
	}
	fd = kvm_open(NULL, err, sizeof(err));
	if (fd < 0)
		fail_msg("kvm_open: %s", err);
	assert_int_equal(kvm_check_caps(fd, GUESTMEM_MEMFD, err, sizeof(err)), 0);
	size = kvm_vcpu_mmap_size(fd, err, sizeof(err));
	assert_true(size >= 4096);
	assert_int_equal(kvm_check_cap(fd, -1), 0);
	close(fd);
}

/* Where KVM has guest_memfd (tests/caps/caps.h asks it), the VMM accepts it. */
static void test_kvm_guest_memfd_check_passes_where_kvm_has_it(void **state)
{
	char err[256] = "";
	int fd;

	(void)state;
	NEED_CAP("guest_memfd");
	fd = kvm_open(NULL, err, sizeof(err));
	if (fd < 0)
		fail_msg("kvm_open: %s", err);
	if (kvm_check_caps(fd, GUESTMEM_GUEST_MEMFD, err, sizeof(err)))
		fail_msg("guest_memfd: %s", err);
	close(fd);
}

/*
 * guest_memfd is optional: where KVM lacks it, only a VM that asks for it
 * is refused, with the flag named and the capability that is missing.
 */
static void test_kvm_guest_memfd_refused_clearly_where_kvm_lacks_it(void **state)
{
	char err[256] = "", why[256] = "", cap[64];
	const char *c;
	size_t n;
	int fd;

	(void)state;
	if (access("/dev/kvm", R_OK | W_OK)) {
		printf("SKIP: no VM: /dev/kvm: %s\n", strerror(errno));
		skip();
		return;
	}
	if (caps_have("guest_memfd", why, sizeof(why)) == 1) {
		printf("SKIP: this machine's KVM has guest_memfd: no refusal to see\n");
		skip();
		return;
	}
	fd = kvm_open(NULL, err, sizeof(err));
	if (fd < 0)
		fail_msg("kvm_open: %s", err);
	assert_int_equal(kvm_check_caps(fd, GUESTMEM_GUEST_MEMFD, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "--memory-backend guest_memfd: "));
	/* The capability the probe found missing is the one named. */
	c = strstr(why, "KVM_CAP_");
	assert_non_null(c);
	n = strcspn(c, " (");
	assert_true(n < sizeof(cap));
	memcpy(cap, c, n);
	cap[n] = '\0';
	if (!strstr(err, cap))
		fail_msg("probe: %s; kvm_check_caps: %s", why, err);
	/* A memfd VM on the same KVM is fine. */
	err[0] = '\0';
	assert_int_equal(kvm_check_caps(fd, GUESTMEM_MEMFD, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kvm_open_missing_node_says_so),
		cmocka_unit_test(test_kvm_open_not_kvm_is_refused),
		cmocka_unit_test(test_kvm_real_device_has_what_kvmlu_needs),
		cmocka_unit_test(test_kvm_guest_memfd_check_passes_where_kvm_has_it),
		cmocka_unit_test(test_kvm_guest_memfd_refused_clearly_where_kvm_lacks_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
