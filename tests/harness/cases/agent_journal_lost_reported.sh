# Harness case: the agent's journal does not survive the kexec. The
# restore reports the update failed from the kexec marker on disk, names
# the VM and the command that brings it back, and restores nothing by
# guesswork; the VM's session, left alone, is still whole in the kernel.
# Stage 1: witness vm-a; host-update with the agent stopped right before
# reboot() (KVMLU_TEST_STOP_AT=kvmlu-agent:kexec): the marker names vm-a.
# The agent is SIGKILLed there, so the kernel drops its journal session
# with it; vm-a's VMM still holds vm-a's. Then the harness kexecs (the
# kernel the agent loaded is replaced by the same one with this stage's
# initramfs, which carries history_dir, as a disk would).
# Stage 2: `kvmlu-agent --restore` exits 1 saying the journal did not
# survive; the marker is gone; nothing runs for vm-a; `kvmlu report`
# shows the update failed in kexec, vm-a unrestored with its session and
# the command. Running that command brings vm-a back, the same guest with
# its memory verified. A second --restore has nothing to restore.
HARNESS_MEM=2G
HARNESS_TIMEOUT=900

. /harness/agent_common.sh

# On the rootfs, not /tmp: it goes into the next stage's initramfs.
AG_HISTORY=/var/lib/kvmlu-test/history

ag_config_history() {
	ag_config
	sed -i "s|\"history_dir\": \"[^\"]*\"|\"history_dir\": \"$AG_HISTORY\"|" "$AG_CONF"
	grep -q "$AG_HISTORY" "$AG_CONF" || fail "history_dir not set in $AG_CONF"
}

stage1() {
	ag_need
	ag_config_history
	vm_start vm-a 48M 1
	export KVMLU_TEST_STOP_AT=kvmlu-agent:kexec
	ag_start
	unset KVMLU_TEST_STOP_AT
	vm_wait_running vm-a
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build the next initramfs"
	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$(ag_next_cmdline)" >/tmp/kexec.out 2>&1 &
	cli=$!
	apid=$(ag_wait_test_stop /tmp/agent.log kvmlu-agent:kexec) ||
		fail "the agent did not stop before the kexec: $(tail -n 5 /tmp/kexec.out)"
	cat "$AG_HISTORY/kexec-pending"; echo
	grep -q '"session":"kvmlu/vm/vm-a"' "$AG_HISTORY/kexec-pending" ||
		fail "the kexec marker does not name vm-a's session"
	id=$(sed -n 's/.*"update_id":"\([^"]*\)".*/\1/p' "$AG_HISTORY/kexec-pending")
	[ -n "$id" ] || fail "the kexec marker has no update id"
	echo "$id" >"$HARNESS_CARRY/update_id"
	# vm-a is paused now: what the guest had done, to compare after.
	vm_last vm-a boot >"$HARNESS_CARRY/vm-a.boot"
	vm_last vm-a tick >"$HARNESS_CARRY/vm-a.tick"
	report PASS harness/agent_journal_lost_reported/marker_written "update $id, vm-a named"
	harness_log "agent $apid stopped before reboot(), journal in LUO: SIGKILL"
	ag_kill_stopped "$apid"
	wait $cli
	kexec_next_stage
}

stage2() {
	ag_need
	ag_config_history
	id=$(cat "$HARNESS_CARRY/update_id")
	[ -e "$AG_HISTORY/kexec-pending" ] || fail "the marker did not reach this stage"
	$KVMLU_AGENT --config "$AG_CONF" --restore >/tmp/restore.out 2>&1
	rc=$?
	cat /tmp/restore.out
	[ $rc = 1 ] || fail "kvmlu-agent --restore exited $rc without its journal, expected 1"
	grep -q "restore: update $id: the journal did not survive the kexec (no session kvmlu/vm/kvmlu-agent-journal in this kernel)" \
		/tmp/restore.out || fail "--restore does not say the journal of $id did not survive the kexec"
	# The marker is gone only because the report is in the history.
	[ -e "$AG_HISTORY/$id.json" ] || fail "no history file for $id"
	[ -e "$AG_HISTORY/kexec-pending" ] && fail "the kexec marker is still there after the restore"
	# Not guessed: no VMM for vm-a, nothing on its socket, no serial log.
	ps | grep -v grep | grep -q 'vm-a' && fail "a process for vm-a runs: $(ps | grep vm-a)"
	[ -e /tmp/vm-a.serial ] && fail "vm-a has a serial log: something ran in its place"
	$VM_CTL -t 5 /run/vm-a.sock '{"cmd":"status"}' >/dev/null 2>&1 &&
		fail "something answers on vm-a's control socket"

	ag_start
	kvmlu report | tee /tmp/report.out
	grep -q "^update $id: failed\$" /tmp/report.out || fail "report: update $id not failed"
	grep -q 'failed in kexec: the journal did not survive the kexec' /tmp/report.out ||
		fail "report: no reason"
	grep -qE '^  vm-a +unrestored ' /tmp/report.out || fail "report: vm-a not unrestored"
	grep -q 'by hand: kvmlu-vmm restore --session kvmlu/vm/vm-a --control /run/vm-a.sock' \
		/tmp/report.out || fail "report: no command for vm-a"
	grep -q 'note: sessions the kernel kept (kvmlu/vm/<name>) stay held' /tmp/report.out ||
		fail "report: no note on what the kernel holds"
	report PASS harness/agent_journal_lost_reported/journal_lost_reported \
		"update $id failed in kexec, vm-a unrestored, nothing started, marker removed"

	# The report's command: the session the agent left alone is whole.
	vm_restore vm-a
	vm_wait_restored vm-a || fail "vm-a: restore by hand failed: $(tail -n 3 /tmp/vm-a.vmm)"
	vm_wait_tick vm-a "$(cat "$HARNESS_CARRY/vm-a.tick")" 120 || fail "vm-a: no tick after the restore"
	[ "$(vm_last vm-a boot)" = "$(cat "$HARNESS_CARRY/vm-a.boot")" ] ||
		fail "vm-a: boot id changed: the guest restarted"
	# Restored lazily, the guest runs before its RAM is all verified.
	st=$(vm_wait_verified vm-a)
	echo "$st" | grep -q '"memory_verified":true' || fail "vm-a: memory not verified: $st"
	report PASS harness/agent_journal_lost_reported/session_left_whole \
		"vm-a restored by hand from its session: same guest, memory verified"

	$KVMLU_AGENT --config "$AG_CONF" --restore >/tmp/restore2.out 2>&1
	rc=$?
	cat /tmp/restore2.out
	[ $rc = 0 ] && grep -q 'nothing to restore' /tmp/restore2.out ||
		fail "a second --restore: exit $rc, not nothing to restore"
	pass "journal lost in the kexec: reported failed with vm-a's session and command, nothing guessed; the session was whole"
}
