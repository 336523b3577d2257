# Harness case: memory that changed between the pause and the restore is
# never run. Stage 1 prepares two witness VMs, then writes 8 bytes into
# each one's preserved RAM memfd from outside (through /proc/PID/fd, as a
# bad actor or a kernel bug would) and kexecs. Stage 2:
#  - vm-bad, restored with --verify sync: `kvmlu-vmm restore` must see
#    the memory checksum differ from the one recorded at pause, keep the
#    VM paused (no tick line ever), keep the session unfinished (files
#    held), say so on update-status and stderr (naming the one 2 MiB
#    chunk that changed, from the chunk digests in the state), and exit 2
#    on shutdown.
#  - vm-lazy, verified lazily (where this kernel has userfaultfd) with no
#    background pass (KVMLU_TEST_LAZY_FAULT_ONLY), so that the guest
#    itself meets the changed chunk: it runs (ticks) on the chunks it
#    touches, each verified first; then its own memory check walks into
#    chunk 16 and must never get past it: the VM is held as
#    checksum-mismatch and paused, the guest prints no verify result
#    (it would have found the 8 bytes), ticks stop, resume is refused,
#    session kept, exit 2. Without userfaultfd it must fall back to the
#    synchronous check, say so, and behave as vm-bad.
HARNESS_MEM=2G
HARNESS_TIMEOUT=400

. /harness/vm_common.sh
# The sanitizer build (ASan+UBSan) when it is there: these paths must be clean.
[ -x /kvmlu/san/kvmlu-vmm ] && VM_BIN=/kvmlu/san/kvmlu-vmm

stage1() {
	vm_need_binaries
	vm_start vm-bad 64M 1
	vm_start vm-lazy 64M 1
	vm_wait_running vm-bad
	vm_wait_running vm-lazy
	vm_prepare vm-bad
	vm_prepare vm-lazy
	vm_corrupt_ram vm-bad
	vm_corrupt_ram vm-lazy
	vm_kexec_next_stage
}

stage2_lazy() {
	pid=$(cat /tmp/vm-lazy.pid)
	if ! vm_lazy_expected; then
		vm_wait_mismatch vm-lazy
		grep -q "lazy verification not used" /tmp/vm-lazy.vmm ||
			fail "vm-lazy: no userfaultfd here, but no fallback said so: $(head -n 3 /tmp/vm-lazy.vmm)"
		grep -q 'tick=' /tmp/vm-lazy.serial 2>/dev/null && fail "vm-lazy: the guest ran on changed memory"
		vm_ctl vm-lazy shutdown >/dev/null
		wait "$pid"
		rc=$?
		[ $rc -eq 2 ] || fail "vm-lazy: restore exited $rc after shutdown, expected 2"
		report PASS "harness/$HARNESS_CASE/lazy-fallback" "no userfaultfd in this kernel: verified before resuming, mismatch held, exit 2"
		return 0
	fi
	vm_lazy_touch_held vm-lazy
	t1=$VM_HELD_TICK
	grep -q 'witness verify' /tmp/vm-lazy.serial &&
		fail "vm-lazy: the guest finished reading its memory: $(grep 'witness verify' /tmp/vm-lazy.serial)"
	st=$(vm_ctl vm-lazy update-status)
	echo "$st" | grep -q '"phase":"checksum-mismatch"' || fail "vm-lazy: update-status: $st"
	echo "$st" | grep -q '"verification":"mismatch"' || fail "vm-lazy: verification: $st"
	echo "$st" | grep -q '"session_finished":false' || fail "vm-lazy: session finished: $st"
	s=$(vm_ctl vm-lazy status)
	echo "$s" | grep -q '"state":"held"' || fail "vm-lazy: status: $s"
	r=$(vm_ctl vm-lazy resume)
	echo "$r" | grep -q 'ChecksumMismatch' || fail "vm-lazy: resume not refused as a mismatch: $r"
	sleep 2
	[ "$(vm_last vm-lazy tick)" = "$t1" ] || fail "vm-lazy: resume ran the guest on changed memory"
	vm_ctl vm-lazy shutdown >/dev/null
	wait "$pid"
	rc=$?
	[ $rc -eq 2 ] || fail "vm-lazy: restore exited $rc after shutdown, expected 2"
	grep -q 'witness verify' /tmp/vm-lazy.serial &&
		fail "vm-lazy: the guest read chunk 16 before the end: $(grep 'witness verify' /tmp/vm-lazy.serial)"
	report PASS "harness/$HARNESS_CASE/lazy" "guest ran lazily verified, its touch of the changed chunk 16 never completed: held, paused, resume refused, session kept, exit 2"
}

stage2() {
	vm_need_binaries
	vm_restore vm-bad --verify sync
	export KVMLU_TEST_LAZY_FAULT_ONLY=1
	vm_restore vm-lazy
	unset KVMLU_TEST_LAZY_FAULT_ONLY
	pid=$(cat /tmp/vm-bad.pid)
	i=0
	while ! grep -q "MEMORY CHECKSUM MISMATCH" /tmp/vm-bad.vmm 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || fail "vm-bad: restore exited instead of holding the VM: $(tail -n 2 /tmp/vm-bad.vmm)"
		[ $i -lt 300 ] || fail "vm-bad: no checksum verdict within 300 s"
		sleep 1
		i=$((i + 1))
	done
	harness_log "vm-bad: $(cat /tmp/vm-bad.vmm)"
	# The state's chunk digests name what changed: 8 bytes at 32 MiB of 64 MiB.
	grep -q "1 of 32 chunks of 2 MiB differ, the first is chunk 16" /tmp/vm-bad.vmm ||
		fail "vm-bad: the mismatch does not name chunk 16: $(grep MISMATCH /tmp/vm-bad.vmm)"
	sleep 3
	grep -q 'tick=' /tmp/vm-bad.serial 2>/dev/null && fail "vm-bad: the guest ran on changed memory"
	st=$(vm_ctl vm-bad update-status)
	echo "$st" | grep -q '"phase":"checksum-mismatch"' || fail "vm-bad: update-status: $st"
	echo "$st" | grep -q '"session_finished":false' || fail "vm-bad: session finished: $st"
	[ "$(echo "$st" | json_str checksum_recorded)" = "$(cat "$HARNESS_CARRY/vm-bad.checksum")" ] ||
		fail "vm-bad: recorded checksum is not the one prepare-update gave: $st"
	r=$(vm_ctl vm-bad resume)
	sleep 2
	grep -q 'tick=' /tmp/vm-bad.serial 2>/dev/null && fail "vm-bad: resume ran the guest on changed memory ($r)"
	vm_ctl vm-bad shutdown >/dev/null
	wait "$pid"
	rc=$?
	[ $rc -eq 2 ] || fail "vm-bad: restore exited $rc after shutdown, expected 2 (never resumed)"
	report PASS "harness/$HARNESS_CASE/sync" "verified before resuming: mismatch held, never ran, exit 2"
	stage2_lazy
	pass "checksum mismatch after the kexec: never run on changed memory (sync and lazy), session kept, exit 2"
}
