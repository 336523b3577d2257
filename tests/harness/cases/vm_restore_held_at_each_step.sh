# Harness case: a restore that fails half-way, at each of its steps after
# the session is taken, keeps the VM: paused (no tick), reachable (status
# says held and names the step), and it resumes once the cause is gone,
# with the memory checksum equal to the one at pause and the same guest.
# One witness VM per step; each step's failure is injected once with
# kvmlu-vmm's test hook KVMLU_TEST_RESTORE_FAIL (the real causes of two
# of them, a serial file and a control path, are in
# agent_restore_holds_vm_until_fixed).
HARNESS_MEM=3G
HARNESS_TIMEOUT=900

. /harness/vm_common.sh
[ -x /kvmlu/san/kvmlu-vmm ] && VM_BIN=/kvmlu/san/kvmlu-vmm

STEPS="files serial control build start"

stage1() {
	vm_need_binaries
	for s in $STEPS; do vm_start "st-$s" 48M 1; done
	for s in $STEPS; do vm_wait_running "st-$s"; done
	for s in $STEPS; do vm_prepare "st-$s"; done
	vm_kexec_next_stage
}

stage2() {
	vm_need_binaries
	for s in $STEPS; do
		rm -f "/run/st-$s.sock"
		KVMLU_TEST_RESTORE_FAIL=$s $VM_BIN restore --session "kvmlu/vm/st-$s" \
			--control "/run/st-$s.sock" --serial "/tmp/st-$s.serial" >"/tmp/st-$s.vmm" 2>&1 &
		echo $! >"/tmp/st-$s.pid"
	done
	for s in $STEPS; do
		vm=st-$s
		# The control step holds on the held name until the path binds.
		sock=/run/$vm.sock
		[ $s = control ] && sock=@kvmlu/held/$vm
		i=0
		until $VM_CTL -t 5 "$sock" '{"cmd":"status"}' 2>/dev/null | grep -q '"state":"held"'; do
			kill -0 "$(cat /tmp/$vm.pid)" 2>/dev/null || fail "$vm: restore exited: $(tail -n 2 /tmp/$vm.vmm)"
			[ $i -lt 300 ] || fail "$vm: not held within 300 s: $($VM_CTL -t 5 "$sock" '{"cmd":"status"}' 2>&1)"
			sleep 1
			i=$((i + 1))
		done
		st=$($VM_CTL -t 5 "$sock" '{"cmd":"status"}')
		echo "$st" | grep -q "\"reason\":\"[^\"]*$s: failure injected" || fail "$vm: held for another reason: $st"
		grep -q 'tick=' "/tmp/$vm.serial" 2>/dev/null && fail "$vm: the guest ran while held"
		r=$($VM_CTL -t 300 "$sock" '{"cmd":"resume"}')
		echo "$r" | grep -q '"state":"running"' || fail "$vm: resume after the failed $s step: $r"
		harness_log "$vm: held at $s, resumed: $r"
		vm_check_continued "$vm"
	done
	pass "a restore failing at each step (files, serial, control, build, start) held its VM, which resumed with its checksum equal"
}
