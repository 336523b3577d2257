# Harness case: two witness VMs survive a host kexec through LUO.
# Stage 1: vm-a (1 vCPU, 256 MiB memfd) and vm-b (2 vCPUs, 512 MiB memfd)
# run; a third VM on guest_memfd is refused cleanly by prepare-update
# (class NotPreservable: this kernel has no LUO handler for guest_memfd)
# and keeps running unchanged; vm-a and vm-b are prepared (paused, state
# and RAM files in sessions kvmlu/vm/vm-a, kvmlu/vm/vm-b) and the host
# kexecs. Stage 2: `kvmlu-vmm restore --session` brings each back: same
# boot id, ticks and guest uptime continue, the memory checksum after the
# kexec equals the one at pause, the guest's own verification passes.
HARNESS_MEM=3G
HARNESS_TIMEOUT=600

. /harness/vm_common.sh

stage1() {
	vm_need_binaries
	vm_start vm-a 256M 1
	vm_start vm-b 512M 2
	vm_start vm-g 64M 1 guest_memfd
	vm_wait_running vm-a
	vm_wait_running vm-b
	vm_wait_tick vm-b 0 60 1 || fail "vm-b: vCPU 1 printed no tick"
	vm_wait_running vm-g

	r=$(vm_ctl vm-g prepare-update)
	if echo "$r" | grep -q '"ok":true'; then
		# A kernel with guest_memfd preservation (kernel/patches, issue 9):
		# kvmlu-vmm restore does not take guest_memfd back yet.
		a=$(vm_ctl vm-g abort-update)
		echo "$a" | grep -q '"ok":true' || fail "vm-g: abort-update after a prepared guest_memfd: $a"
		report SKIP harness/vm_survive_kexec/guest_memfd_refused \
			"this kernel preserves guest_memfd; prepared and aborted instead"
	else
		echo "$r" | grep -q '"class":"NotPreservable"' ||
			fail "vm-g (guest_memfd): prepare-update should be refused as NotPreservable: $r"
		harness_log "vm-g refused as expected: $r"
		report PASS harness/vm_survive_kexec/guest_memfd_refused "NotPreservable, VM kept running"
	fi
	s=$(vm_ctl vm-g status)
	echo "$s" | grep -q '"state":"running"' || fail "vm-g not running after the refusal: $s"
	t=$(vm_last vm-g tick)
	vm_wait_tick vm-g "$t" 30 || fail "vm-g ticks stuck at $t after the refusal"
	vm_ctl vm-g shutdown >/dev/null

	vm_prepare vm-a
	vm_prepare vm-b
	harness_log "both VMs prepared; kexec"
	vm_kexec_next_stage
}

stage2() {
	vm_need_binaries
	vm_restore vm-a
	vm_restore vm-b
	vm_check_continued vm-a
	vm_check_continued vm-b
	pass "vm-a and vm-b survived the kexec: same boot ids, ticks on, checksums equal, guest verify ok; guest_memfd refused cleanly"
}
