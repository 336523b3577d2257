/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The environment variables that drive the test hooks of the test
 * programs (tests/hooks/test_hooks.c, common/test_hooks.h). Nothing
 * kvmlu ships reads them: the release programs (build/bin) link no-ops
 * (tests/lint/test_hooks_out_of_release.sh checks it).
 *
 * KVMLU_TEST_STOP_AT=<who>:<point>
 *     test_hook_stop_at: one line on stderr, then SIGSTOP, at exactly that
 *     point, e.g.
 *       kvmlu: KVMLU_TEST_STOP_AT=vm-a:restore-taken: pid 412 stopped
 *     SIGCONT lets it go on.
 * KVMLU_TEST_RESTORE_FAIL=step[,step...]
 *     test_hook_restore_fail: each named restore step fails once, with
 *     "<step>: failure injected by KVMLU_TEST_RESTORE_FAIL".
 * KVMLU_TEST_LAZY_FAULT_ONLY (set at all)
 *     test_hook_lazy_fault_only: no background verification pass.
 * KVMLU_TEST_LVRAM_CORRUPT (set at all)
 *     test_hook_lvram_corrupt: kvmlu-agent changes one byte of the RAM it
 *     holds for domain-replace-qemu.
 * KVMLU_TEST_LVRAM_TCG (set at all)
 *     test_hook_lvram_tcg: host-update judges a QEMU/TCG libvirt domain's
 *     RAM as if the domain were KVM.
 */
#ifndef KVMLU_TESTS_HOOKS_TEST_HOOKS_ENV_H
#define KVMLU_TESTS_HOOKS_TEST_HOOKS_ENV_H

#define TEST_HOOK_STOP_AT_ENV		"KVMLU_TEST_STOP_AT"
#define TEST_HOOK_RESTORE_FAIL_ENV	"KVMLU_TEST_RESTORE_FAIL"
#define TEST_HOOK_LAZY_FAULT_ONLY_ENV	"KVMLU_TEST_LAZY_FAULT_ONLY"
#define TEST_HOOK_LVRAM_CORRUPT_ENV	"KVMLU_TEST_LVRAM_CORRUPT"
#define TEST_HOOK_LVRAM_TCG_ENV		"KVMLU_TEST_LVRAM_TCG"

#endif /* KVMLU_TESTS_HOOKS_TEST_HOOKS_ENV_H */
