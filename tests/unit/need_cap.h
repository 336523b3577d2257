/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NEED_CAP("guest_memfd"): a cmocka test that needs a capability this
 * machine lacks (tests/caps/caps.h names them) SKIPs with the reason: it
 * runs in the QEMU host on the project's kernel, as
 * harness/unit_on_nested_kvm/<binary>/<case>. There (KVMLU_TEST_REQUIRE_CAPS=1,
 * set by that case) a missing capability FAILs instead: the test was moved
 * there to run, and a skip would drop it unseen. The unit test binary must
 * be listed in tests/harness/cases/unit_on_nested_kvm.files (tests/run-tests.sh
 * turns such a SKIP of a binary not listed there into a FAIL).
 * cmocka_results.awk takes the reason from the "SKIP: " line.
 */
#ifndef KVMLU_TESTS_UNIT_NEED_CAP_H
#define KVMLU_TESTS_UNIT_NEED_CAP_H

#include <stdlib.h>
#include <string.h>

#include "tests/caps/caps.h"

static inline int need_cap_required(void)
{
	const char *v = getenv("KVMLU_TEST_REQUIRE_CAPS");

	return v && !strcmp(v, "1");
}

#define NEED_CAP(name)                                                        \
	do {                                                                  \
		char need_cap_why_[256];                                      \
		int need_cap_r_ = caps_have((name), need_cap_why_,            \
					    sizeof(need_cap_why_));           \
		if (need_cap_r_ < 0)                                          \
			fail_msg("NEED_CAP: %s", need_cap_why_);              \
		if (!need_cap_r_ && need_cap_required())                      \
			fail_msg("needs %s, and this host (where it was moved to run) lacks it: %s", \
				 (name), need_cap_why_);                      \
		if (!need_cap_r_) {                                           \
			print_message("SKIP: needs %s, this machine lacks it (%s); "  \
				      "runs in the QEMU host as harness/unit_on_nested_kvm\n", \
				      (name), need_cap_why_);                 \
			skip();                                               \
		}                                                             \
	} while (0)

#endif /* KVMLU_TESTS_UNIT_NEED_CAP_H */
