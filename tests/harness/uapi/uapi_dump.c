/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prints every fact of uapi_facts.h, evaluated against the kernel's own
 * installed uAPI headers, as "#define KERNEL_<name> <value>ULL" lines: the
 * header uapi_match.c is checked against. Built and run on the build
 * machine by uapi/check.sh; compiled with -isystem <kernel headers> and
 * without the project's include/ directory, so nothing of kvmlu leaks in.
 */
#include <stdio.h>
#include <linux/kvm.h>
#include <linux/liveupdate.h>

#include "uapi_facts.h"

#define KVMLU_DUMP_FACT(name, expr) \
	printf("#define KERNEL_%s %lluULL\n", #name, (unsigned long long)(expr));

int main(void)
{
	KVMLU_UAPI_FACTS(KVMLU_DUMP_FACT)
	return 0;
}
