# Harness case: the native test of a guest larger than the RAM below the PCI hole (needs a host with 8 GiB), run inside the QEMU host on a machine without /dev/kvm
# (tests/harness/cases/native_common.inc says how).
HARNESS_TIMEOUT=900
HARNESS_MEM=8G

. /harness/native_common.sh

stage1() {
	# In this QEMU host the 3.5 GiB witness triple-faulted at boot in 2 of
	# 3 tries on 2026-12-04 (#PF error 0x10 on vCPU 0: the nested fault of
	# issue 19), so it runs only when asked: make soak, or
	# KVMLU_HARNESS_FLAKY=1 (tests/harness/check.sh).
	[ -f /harness/run_flaky ] ||
		skip "nested triple fault at boot in 2 of 3 tries under QEMU 7.2 TCG (issue 19); runs with KVMLU_HARNESS_FLAKY=1 and in make soak"
	native_run '^large_guest'
}
