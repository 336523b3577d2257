/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test hooks: the points where a test steers a program from outside, to
 * reach a state it could not reach by timing or by a real fault.
 *
 * The product links the no-ops of common/test_hooks_noop.c (they are in
 * libcommon): nothing in build/bin can be steered, and no hook's name is
 * in it. The test programs (build/test/bin, build/san/bin and the unit
 * tests) are the same objects linked with tests/hooks/test_hooks.c ahead
 * of the libraries, whose definitions the linker takes instead; that file
 * says which environment variable drives each hook.
 */
#ifndef KVMLU_COMMON_TEST_HOOKS_H
#define KVMLU_COMMON_TEST_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Stop the whole process (SIGSTOP) when a test asked for exactly
 * <who>:<point>, so that it can SIGKILL it there. <who> is a VM name
 * (kvmlu-vmm) or "kvmlu-agent". The points (docs/control-protocol.md,
 * docs/agent.md):
 *   <vm>:prepare-preserved   prepare-update: every file is in the session,
 *                            the reply not sent yet
 *   <vm>:restore-taken       kvmlu-vmm restore: the session retrieved,
 *                            nothing built from it yet
 *   kvmlu-agent:kexec        the journal stored in LUO and the kexec
 *                            allowed, right before reboot()
 *   kvmlu-agent:replace-suspended  domain-replace-qemu: the domain
 *                            suspended, its managed save not begun
 *   kvmlu-agent:replace-held domain-replace-qemu: the domain saved and its
 *                            RAM held, before its start on a new QEMU
 */
void test_hook_stop_at(const char *who, const char *point);

/*
 * True when a test asked the restore step <step> (files, serial, control,
 * build, start) to fail as its real causes would; then why says so. With
 * consume, each named step fails once only (a resume then gets past it).
 */
bool test_hook_restore_fail(const char *step, bool consume, char *why, size_t whylen);

/*
 * True when a test asked lazy verification to run no background pass, so
 * that only the guest's touches verify chunks.
 */
bool test_hook_lazy_fault_only(void);
/*
 * True when a test asked the agent to change one byte of the RAM it holds
 * for a domain-replace-qemu, after the sum at the pause: the verification
 * before the guest runs again must catch it.
 */
bool test_hook_lvram_corrupt(void);
/*
 * True when a test asked host-update to take a QEMU/TCG libvirt domain's
 * RAM in place as if it were KVM: the test's libvirtd runs as nobody,
 * which cannot open /dev/kvm. Every other reason still counts.
 */
bool test_hook_lvram_tcg(void);

#endif /* KVMLU_COMMON_TEST_HOOKS_H */
