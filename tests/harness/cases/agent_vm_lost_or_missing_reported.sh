# Harness case: a VM whose VMM dies in the middle of a host update, or
# whose session is not there after the kexec, is reported for what it is,
# and the other VMs survive. Each VMM and the agent are stopped at a known
# point by the KVMLU_TEST_STOP_AT hook (common/test_hooks.h) and SIGKILLed
# there, so nothing depends on timing.
# Stage 1, four witness VMs and the agent:
#  - update 1: vm-pkill's VMM is killed in the middle of prepare-update
#    (its files in the session, the reply not sent). Meanwhile the
#    agent's status answers with the update in phase prepare, and a
#    second host-update is refused with Busy. The update rolls back:
#    vm-pkill reported lost, the three others aborted and running.
#  - update 2 (vm-pkill's dead socket removed): the agent is stopped right
#    before reboot(); its status is not asked then (it is stopped).
#    vm-gone's VMM is killed, so its session is gone from the kernel;
#    the agent goes on and kexecs.
# Stage 2: `kvmlu-agent --restore` with vm-rkill's restoring VMM killed
# right after it took its session. The report: outcome partial, vm-rkill
# lost (killed), vm-gone missing (its session not in this kernel) and
# nothing started in its place, vm-keep verified with equal checksums,
# its guest the same and running.
HARNESS_MEM=3G
HARNESS_TIMEOUT=1200

. /harness/agent_common.sh

stage1() {
	ag_need
	ag_config
	vm_start vm-keep 48M 1
	vm_start vm-rkill 48M 1
	vm_start vm-gone 48M 1
	export KVMLU_TEST_STOP_AT=vm-pkill:prepare-preserved
	vm_start vm-pkill 48M 1
	export KVMLU_TEST_STOP_AT=kvmlu-agent:kexec
	ag_start
	unset KVMLU_TEST_STOP_AT
	for vm in vm-keep vm-rkill vm-gone vm-pkill; do vm_wait_running $vm; done
	vm_last vm-keep boot >"$HARNESS_CARRY/vm-keep.boot"
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build the next initramfs"
	cmdline=$(ag_next_cmdline)

	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$cmdline" >/tmp/pkill.out 2>&1 &
	cli=$!
	pid=$(ag_wait_test_stop /tmp/vm-pkill.vmm vm-pkill:prepare-preserved) ||
		fail "vm-pkill's VMM did not stop in prepare-update"
	# The update waits on vm-pkill: the agent must still answer.
	st=$($VM_CTL -t 60 "$AG_SOCK" '{"cmd":"status","id":7}')
	echo "$st" | grep -q '"update":{"update_id":"[^"]*","phase":"prepare"}' ||
		fail "agent status during the update: $st"
	echo "$st" | grep -q '"id":7' || fail "agent status reply without its id: $st"
	b=$($VM_CTL -t 60 "$AG_SOCK" "{\"cmd\":\"host-update\",\"args\":{\"kernel\":\"$HARNESS_KERNEL\"}}")
	echo "$b" | grep -q '"class":"Busy"' || fail "a second host-update during the first: $b"
	report PASS harness/agent_vm_lost_or_missing_reported/status_during_update \
		"status answered with the update in phase prepare; a second host-update Busy"
	harness_log "vm-pkill: VMM $pid stopped in prepare-update; SIGKILL"
	ag_kill_stopped "$pid"
	wait $cli
	rc=$?
	cat /tmp/pkill.out
	[ $rc = 1 ] || fail "update 1: host-update exited $rc, expected 1"
	grep -q 'rolled-back' /tmp/pkill.out || fail "update 1: not rolled back"
	grep -qE '^  vm-pkill +lost ' /tmp/pkill.out || fail "update 1: vm-pkill not reported lost"
	grep -q 'error: its VMM is gone' /tmp/pkill.out || fail "update 1: vm-pkill's error does not say its VMM is gone"
	for vm in vm-keep vm-rkill vm-gone; do
		grep -qE "^  $vm +aborted " /tmp/pkill.out || fail "update 1: $vm not aborted"
		ag_running $vm
	done
	# Rolled back before store-journal: no marker was left.
	[ -e /tmp/kvmlu-history/kexec-pending ] && fail "update 1 left a kexec marker"
	report PASS harness/agent_vm_lost_or_missing_reported/killed_in_prepare \
		"vm-pkill lost, rolled back, the other three running"

	# The dead VMM's socket would refuse the next update (nobody answers).
	rm -f /run/vm-pkill.sock
	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$cmdline" >/tmp/kexec.out 2>&1 &
	cli=$!
	apid=$(ag_wait_test_stop /tmp/agent.log kvmlu-agent:kexec) ||
		fail "the agent did not stop before the kexec: $(tail -n 5 /tmp/kexec.out)"
	# The kexec marker is on disk before the jump, naming every VM it takes.
	for vm in vm-keep vm-rkill vm-gone; do
		grep -q "\"session\":\"kvmlu/vm/$vm\"" /tmp/kvmlu-history/kexec-pending ||
			fail "the kexec marker does not name $vm: $(cat /tmp/kvmlu-history/kexec-pending)"
	done
	gone=$(cat /tmp/vm-gone.pid)
	harness_log "agent $apid stopped before reboot(); SIGKILL to vm-gone's VMM $gone"
	ag_kill_stopped "$gone"
	kill -CONT "$apid"
	wait $cli
	sleep 120
	fail "the agent did not kexec: $(tail -n 5 /tmp/kexec.out; tail -n 3 /tmp/agent.log)"
}

stage2() {
	ag_need
	ag_config
	export KVMLU_TEST_STOP_AT=vm-rkill:restore-taken
	$KVMLU_AGENT --config "$AG_CONF" --restore >/tmp/restore.out 2>&1 &
	restorer=$!
	unset KVMLU_TEST_STOP_AT
	pid=$(ag_wait_test_stop "$AG_STATE/vm-rkill.restore.log" vm-rkill:restore-taken) ||
		fail "vm-rkill's restore did not stop after taking its session"
	harness_log "vm-rkill: restoring VMM $pid stopped with its session taken; SIGKILL"
	ag_kill_stopped "$pid"
	wait $restorer
	rc=$?
	cat /tmp/restore.out
	[ $rc != 0 ] || fail "kvmlu-agent --restore exited 0 with a VM lost and one missing"
	ag_start
	kvmlu report | tee /tmp/report.out
	grep -q ': partial' /tmp/report.out || fail "report: outcome not partial"
	grep -qE '^  vm-rkill +lost ' /tmp/report.out || fail "report: vm-rkill not lost"
	grep -q 'error: restore: kvmlu-vmm restore exited with signal 9' /tmp/report.out ||
		fail "report: vm-rkill's error does not say its restore was killed"
	report PASS harness/agent_vm_lost_or_missing_reported/killed_in_restore "vm-rkill reported lost"

	grep -qE '^  vm-gone +missing ' /tmp/report.out || fail "report: vm-gone not missing"
	grep -q 'error: restore: session kvmlu/vm/vm-gone is not in this kernel: nothing restored, nothing started' \
		/tmp/report.out || fail "report: vm-gone's error does not name its session"
	grep -q 'note: 1 VM(s) missing' /tmp/report.out || fail "report: no note on the missing VM"
	grep -q 'RETRIEVE_SESSION failed.*ENOENT' "$AG_STATE/vm-gone.restore.log" ||
		fail "vm-gone's restore log does not say the kernel had no such session"
	# Not guessed: no VMM for it, no guest started in its place.
	ps | grep -v grep | grep -q 'vm-gone' && fail "a process for vm-gone runs: $(ps | grep vm-gone)"
	[ -e /tmp/vm-gone.serial ] && fail "vm-gone has a serial log: something ran in its place"
	$VM_CTL -t 5 /run/vm-gone.sock '{"cmd":"status"}' >/dev/null 2>&1 &&
		fail "something answers on vm-gone's control socket"
	report PASS harness/agent_vm_lost_or_missing_reported/session_missing \
		"vm-gone missing with its session named; nothing started in its place"

	grep -qE '^  vm-keep +verified .* equal$' /tmp/report.out ||
		fail "report: vm-keep not verified with equal checksums"
	vm_wait_tick vm-keep 0 120 || fail "vm-keep: no tick after the restore"
	[ "$(vm_last vm-keep boot)" = "$(cat "$HARNESS_CARRY/vm-keep.boot")" ] ||
		fail "vm-keep: boot id changed: guest restarted"
	ag_running vm-keep
	v=$($VM_CTL -t 320 /run/vm-keep.sock '{"cmd":"guest-verify","args":{"timeout_ms":300000}}')
	echo "$v" | grep -q '"verified":true' || fail "vm-keep: guest self-verification: $v"
	pass "VMM killed in prepare-update and in restore: each VM lost; a session gone before the kexec: missing, nothing started; vm-keep survived both updates"
}
