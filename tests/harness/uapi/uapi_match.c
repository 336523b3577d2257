/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compile-time check that kvmlu's uAPI headers agree with the kernel it
 * builds: include/kvmlu/kvm_uapi.h and liveupdate_uapi.h, on this system's
 * own (older) linux-libc-dev, must give every value of uapi_facts.h that
 * the kernel's installed headers give (KERNEL_* from uapi_dump.c, passed
 * with -include). A mismatch is a compile error naming the fact; compiling
 * at all is the pass. Nothing runs.
 */
#include "include/kvmlu/kvm_uapi.h"
#include "include/kvmlu/liveupdate_uapi.h"

#include "uapi_facts.h"

#define KVMLU_MATCH_FACT(name, expr)					\
	_Static_assert((unsigned long long)(expr) == KERNEL_##name,	\
		       "kvmlu uAPI differs from the kernel's: " #name);

KVMLU_UAPI_FACTS(KVMLU_MATCH_FACT)

int main(void)
{
	return 0;
}
