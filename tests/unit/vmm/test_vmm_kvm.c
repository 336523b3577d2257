// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vmm/kvm.c: opening /dev/kvm must fail with a message a
 * user can act on, different for a missing node and for a file that is
 * not KVM; on this machine's real /dev/kvm the capability checks pass
 * for both memory backends (guest_memfd with MMAP|INIT_SHARED
 * works here).
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
	if (kvm_check_caps(fd, GUESTMEM_GUEST_MEMFD, err, sizeof(err)))
		fail_msg("guest_memfd: %s", err);
	size = kvm_vcpu_mmap_size(fd, err, sizeof(err));
	assert_true(size >= 4096);
	assert_int_equal(kvm_check_cap(fd, -1), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kvm_open_missing_node_says_so),
		cmocka_unit_test(test_kvm_open_not_kvm_is_refused),
		cmocka_unit_test(test_kvm_real_device_has_what_kvmlu_needs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
