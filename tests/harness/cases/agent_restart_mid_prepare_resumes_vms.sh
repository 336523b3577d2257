# Harness case: the agent killed in the middle of preparing VMs, and
# started again, finds the VMs it paused in its journal (state_dir) and
# resumes them. vm-a is prepared; vm-b's VMM is stopped (SIGSTOP) so its
# prepare-update hangs; the agent is killed (SIGKILL) with vm-a paused
# and vm-b preparing; vm-b continues (SIGCONT) and completes the prepare
# nobody waits for. The new agent rolls both back at start: both run,
# no update held, the report says the agent stopped during prepare.
HARNESS_MEM=3G
HARNESS_TIMEOUT=600

. /harness/agent_common.sh

wait_for() { # wait_for SECONDS CMD...: until CMD succeeds
	_n=$(($1 * 5))
	shift
	while [ $_n -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		_n=$((_n - 1))
	done
	return 1
}

phase_is() { kvmlu status 2>/dev/null | grep -q "phase $1"; }
vm_prepared() { vm_ctl "$1" update-status | grep -q '"phase":"prepared"'; }
journal_has() { grep -q "$1" "$AG_STATE/journal.json" 2>/dev/null; }
# The orphaned prepare-update of vm-b has run to its end, one way or the other.
vm_settled() {
	vm_prepared "$1" && return 0
	vm_ctl "$1" status | grep -q '"state":"running"' &&
		vm_ctl "$1" update-status | grep -q '"phase":"none"'
}

stage1() {
	ag_need
	vm_start vm-a 256M 1
	vm_start vm-b 64M 1
	vm_wait_running vm-a
	vm_wait_running vm-b
	ag_config
	ag_start
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build the next initramfs"

	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$(ag_next_cmdline)" >/tmp/update.out 2>&1 &
	cli=$!
	wait_for 120 phase_is prepare || fail "the update never reached prepare: $(cat /tmp/update.out)"
	kill -STOP "$(cat /tmp/vm-b.pid)"
	wait_for 120 vm_prepared vm-a || fail "vm-a was not prepared"
	# The body is JSON inside a JSON string: its quotes are escaped.
	wait_for 60 journal_has 'vm-b\\",[^}]*\\"state\\":\\"preparing' ||
		fail "the journal never showed vm-b preparing"
	kill -KILL "$(cat /tmp/agent.pid)"
	harness_log "agent killed during prepare: vm-a prepared, vm-b preparing"
	journal_has '\\"phase\\":\\"prepare\\"' || fail "journal not in phase prepare at the kill"
	kill -CONT "$(cat /tmp/vm-b.pid)"
	wait "$cli"
	cat /tmp/update.out
	wait_for 120 vm_settled vm-b || fail "vm-b neither prepared nor running after SIGCONT"
	harness_log "vm-b after SIGCONT: $(vm_ctl vm-b update-status)"
	vm_ctl vm-a status | grep -q '"state":"paused"' || fail "vm-a was not left paused by the dead agent"

	ag_start
	kvmlu report | tee /tmp/report.out
	grep -q 'rolled-back' /tmp/report.out || fail "report: not rolled back"
	grep -q 'the agent stopped during prepare' /tmp/report.out || fail "report: no reason"
	[ "$(grep -cE '^  vm-[ab] +aborted' /tmp/report.out)" = 2 ] || fail "report: not both VMs aborted"
	ag_running vm-a
	ag_running vm-b
	[ -e "$AG_STATE/journal.json" ] && fail "journal still in state_dir after the recovery"
	pass "agent killed mid-prepare, restarted: both VMs resumed from its journal, report says why"
}
