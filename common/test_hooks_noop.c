// SPDX-License-Identifier: GPL-2.0
/*
 * The product's test hooks (common/test_hooks.h): none does anything. The
 * test programs link tests/hooks/test_hooks.c instead; this file must
 * define exactly the functions that one does, and nothing else, or the
 * linker pulls both in and fails on the duplicates.
 */
#include "common/test_hooks.h"

void test_hook_stop_at(const char *who, const char *point)
{
	(void)who;
	(void)point;
}

bool test_hook_restore_fail(const char *step, bool consume, char *why, size_t whylen)
{
	(void)step;
	(void)consume;
	(void)why;
	(void)whylen;
	return false;
}

bool test_hook_lazy_fault_only(void)
{
	return false;
}

bool test_hook_lvram_corrupt(void)
{
	return false;
}

bool test_hook_lvram_tcg(void)
{
	return false;
}
