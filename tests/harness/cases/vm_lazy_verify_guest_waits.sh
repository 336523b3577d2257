# Harness case: after a kexec a 4-vCPU witness runs before its memory is
# verified, and every chunk it touches is verified before the touch.
# Stage 1: vm-many (4 vCPUs, 128 MiB memfd, every vCPU ticking) is
# prepared; kexec. Stage 2: restored with lazy verification and no
# background pass (KVMLU_TEST_LAZY_FAULT_ONLY), so that only the guest's
# own touches get chunks verified:
#  - it resumes at once and all four vCPUs tick again (their first
#    touches wait for their chunks, concurrently);
#  - asked to pause while verification runs, it pauses (vCPUs waiting in
#    a fault are kicked out and park); a checksum, which would read all
#    RAM, waits for the verdict and, since nothing verifies while the
#    guest is paused here, answers Busy saying so; resume works;
#  - the guest's own check reads every word of RAM: it passes, and
#    with it every chunk was verified because the guest waited on it
#    (verify_fault_chunks = all 64); the verdict equals the checksum at
#    pause; the session is FINISHed only then; a checksum is now served
#    at once.
# Without userfaultfd in this kernel: SKIP (the fallback is checked by
# vm_checksum_mismatch_keeps_vm_paused and vm_survive_three_kexecs).
HARNESS_MEM=2G
HARNESS_TIMEOUT=700

. /harness/vm_common.sh
[ -x /kvmlu/san/kvmlu-vmm ] && VM_BIN=/kvmlu/san/kvmlu-vmm

stage1() {
	vm_lazy_expected || skip "no /dev/userfaultfd: this kernel has no CONFIG_USERFAULTFD, restores verify synchronously"
	vm_need_binaries
	vm_start vm-many 128M 4
	vm_wait_running vm-many
	for c in 1 2 3; do
		vm_wait_tick vm-many 0 120 $c || fail "vm-many: vCPU $c printed no tick"
	done
	vm_prepare vm-many
	vm_kexec_next_stage
}

stage2() {
	vm_need_binaries
	export KVMLU_TEST_LAZY_FAULT_ONLY=1
	vm_restore vm-many
	unset KVMLU_TEST_LAZY_FAULT_ONLY
	vm_wait_restored vm-many || fail "vm-many: did not resume: $(tail -n 3 /tmp/vm-many.vmm)"
	st=$(vm_ctl vm-many update-status)
	echo "$st" | grep -q '"verify_mode":"lazy"' || fail "vm-many: not verified lazily: $st"
	echo "$st" | grep -q '"verification":"running"' || fail "vm-many: verification not running: $st"
	echo "$st" | grep -q '"session_finished":false' || fail "vm-many: session finished before the verdict: $st"
	for c in 0 1 2 3; do
		# vCPU 0 continues from its tick at pause; the others show any tick (fresh serial).
		after=0
		[ $c = 0 ] && after=$(cat "$HARNESS_CARRY/vm-many.tick")
		vm_wait_tick vm-many "$after" 120 $c ||
			fail "vm-many: vCPU $c did not tick after the lazy resume"
	done
	st=$(vm_ctl vm-many update-status)
	harness_log "vm-many: all 4 vCPUs ticking, $(echo "$st" | json_num verify_chunks_done) of $(echo "$st" | json_num verify_chunks) chunks verified, $(echo "$st" | json_num verify_faults) faults waited"
	report PASS "harness/$HARNESS_CASE/resumed-first" "4 vCPUs tick with $(echo "$st" | json_num verify_chunks_done) of 64 chunks verified"

	# Pause while verifying; a checksum must wait for a verdict that cannot come now.
	r=$(vm_ctl vm-many pause)
	echo "$r" | grep -q '"ok":true' || fail "vm-many: pause while verifying: $r"
	r=$($VM_CTL -t 120 "$VM_RUN_DIR/vm-many.sock" '{"cmd":"checksum"}')
	echo "$r" | grep -q '"class":"Busy"' || fail "vm-many: checksum during verification: $r"
	echo "$r" | grep -q 'still being verified' || fail "vm-many: Busy without the reason: $r"
	r=$(vm_ctl vm-many resume)
	echo "$r" | grep -q '"ok":true' || fail "vm-many: resume while verifying: $r"
	report PASS "harness/$HARNESS_CASE/busy-while-verifying" "pause and resume served; checksum waited 60 s, then Busy"

	v=$($VM_CTL -t 320 "$VM_RUN_DIR/vm-many.sock" '{"cmd":"guest-verify","args":{"timeout_ms":300000}}')
	echo "$v" | grep -q '"verified":true' || fail "vm-many: guest self-verification: $v"
	st=$(vm_wait_verified vm-many)
	echo "$st" | grep -q '"verification":"verified"' || fail "vm-many: verdict: $st"
	echo "$st" | grep -q '"memory_verified":true' || fail "vm-many: memory not verified: $st"
	[ "$(echo "$st" | json_str checksum_now)" = "$(cat "$HARNESS_CARRY/vm-many.checksum")" ] ||
		fail "vm-many: checksum after the kexec differs from the pause's: $st"
	[ "$(echo "$st" | json_num verify_fault_chunks)" = 64 ] ||
		fail "vm-many: not every chunk was verified for a touch of the guest: $st"
	i=0
	while ! vm_ctl vm-many update-status | grep -q '"session_finished":true'; do
		[ $i -lt 20 ] || fail "vm-many: session not finished after the verdict"
		sleep 1
		i=$((i + 1))
	done
	harness_log "vm-many: $st"
	# Served now, at once (the guest has written since: another sum than the pause's).
	r=$(vm_ctl vm-many pause)
	c=$($VM_CTL -t 120 "$VM_RUN_DIR/vm-many.sock" '{"cmd":"checksum"}')
	echo "$c" | grep -q '"digest":"[0-9a-f]\{32\}"' || fail "vm-many: checksum after the verdict: $c"
	vm_ctl vm-many resume >/dev/null
	pass "vm-many: resumed before verification, 4 vCPUs ran, every one of 64 chunks verified for a guest touch, guest verify ok, checksum equal, Busy while verifying"
}
