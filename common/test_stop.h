/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test hook: KVMLU_TEST_STOP_AT=<who>:<point> in a process's environment
 * stops that process (SIGSTOP, the whole process) when <who> reaches
 * <point>, after one line on stderr:
 *
 *   kvmlu: KVMLU_TEST_STOP_AT=vm-a:restore-taken: pid 412 stopped
 *
 * so that a test can SIGKILL it at exactly that point instead of at a
 * moment found by timing. <who> is a VM name (kvmlu-vmm) or "kvmlu-agent".
 * The points (docs/control-protocol.md, docs/agent.md):
 *   <vm>:prepare-preserved   prepare-update: every file is in the session,
 *                            the reply not sent yet
 *   <vm>:restore-taken       kvmlu-vmm restore: the session retrieved,
 *                            nothing built from it yet
 *   kvmlu-agent:kexec        the journal stored in LUO and the kexec
 *                            allowed, right before reboot()
 * SIGCONT lets it go on. Nothing kvmlu ships sets the variable.
 */
#ifndef KVMLU_COMMON_TEST_STOP_H
#define KVMLU_COMMON_TEST_STOP_H

#define KVMLU_TEST_STOP_ENV "KVMLU_TEST_STOP_AT"

/* Stop here if KVMLU_TEST_STOP_AT is exactly "<who>:<point>". */
void test_stop_at(const char *who, const char *point);

#endif /* KVMLU_COMMON_TEST_STOP_H */
