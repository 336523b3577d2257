# guest_memfd survives a kexec through LUO (the project's kernel patches,
# CONFIG_LIVEUPDATE_GUEST_MEMFD + KVM_LINK_GUEST_MEMFD). Runs the project's
# two-stage selftest kernel/selftests/gmem_luo_kexec.c (built by
# kernel/selftests/build.sh): stage 1 writes a pattern into a shared
# guest_memfd, checks it from a guest in a linked VM, checks the refusals
# (private guest_memfd: EOPNOTSUPP and a log line; PUNCH_HOLE after
# preserve: EPERM), preserves it and kexecs; stage 2 retrieves it, links it
# to a new VM and checks the pattern from inside that VM's guest.
HARNESS_NAME=harness/gmem_luo_kexec
HARNESS_TIMEOUT=240

gmem_selftest=/kvmlu/kselftest/gmem_luo_kexec

gmem_run() { # gmem_run STAGE: run the selftest stage, end the case on failure
	local rc
	"$gmem_selftest" -s "$1" >/tmp/gmem.out 2>&1
	rc=$?
	cat /tmp/gmem.out
	[ $rc -eq 4 ] && skip "$(grep 'TEST SKIPPED' /tmp/gmem.out | sed 's/^TEST SKIPPED: //')"
	[ $rc -eq 0 ] || fail "gmem_luo_kexec -s $1 exited $rc: $(grep 'TEST FAILED' /tmp/gmem.out | tail -n 1)"
}

stage1() {
	[ -x "$gmem_selftest" ] ||
		skip "$gmem_selftest missing (kernel/selftests/build.sh builds it only against headers of a kernel with the guest_memfd patches)"
	gmem_run 1
	dmesg_has 'guest_memfd: cannot preserve private memory' ||
		fail "no kernel log line saying why the private guest_memfd was refused"
	kexec_next_stage
}

stage2() {
	gmem_run 2
	grep -q 'TEST PASSED' /tmp/gmem.out || fail "gmem_luo_kexec -s 2 printed no 'TEST PASSED'"
	dmesg_has 'guest_memfd:.*(not restorable|no preserved folio)' &&
		fail "kernel logged a guest_memfd restore error"
	pass "guest_memfd pattern seen by a guest in a new VM after kexec"
}
