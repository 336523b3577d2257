#!/bin/bash
# Shared helpers for tests/native/agent_*.sh (sourced, not run; not
# executable so the runner skips it): witness VMs whose control sockets sit
# in a run dir, a kvmlu-agent (sanitizer build) with its own config, the
# kvmlu CLI. Every wait is bounded; the EXIT trap kills what the test
# started, by pid, and removes the work dir.
#
# The agent config written here never allows a kexec (allow_kexec false),
# and on this machine preflight also refuses for lack of /dev/liveupdate.
set -u

AG_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AG_BIN=$AG_TOP/build/san/bin
AG_VMM=${KVMLU_VMM:-$AG_BIN/kvmlu-vmm}
AG_CTL=${KVMLU_CTL:-$AG_TOP/build/bin/kvmlu-ctl}
AG_WITNESS=${KVMLU_WITNESS:-$AG_TOP/build/guest/witness.bin}
AG_NAME=$(basename "$0" .sh)
AG_DIR=
AG_PIDS=()
AG_AGENT_PID=
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}

ag_log() { echo "[$AG_NAME] $*"; }

ag_fail() {
	ag_log "failed: $*"
	if [ -n "$AG_DIR" ] && [ -f "$AG_DIR/agent.err" ]; then
		ag_log "agent stderr (last 20 lines):"; tail -n 20 "$AG_DIR/agent.err"
	fi
	echo "FAIL: $AG_NAME: $*"
	exit 1
}

ag_pass() { echo "PASS: $AG_NAME"; exit 0; }
ag_skip() { echo "$*"; exit 77; }

ag_cleanup() {
	local p
	for p in "${AG_PIDS[@]}" $AG_AGENT_PID; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -n "$AG_DIR" ] && [ -z "${AG_KEEP:-}" ] && rm -rf "$AG_DIR"
}

# ag_init [group]: work dir, config (group default "users"), binaries checked.
ag_init() {
	local b
	for b in "$AG_BIN/kvmlu-agent" "$AG_BIN/kvmlu" "$AG_VMM" "$AG_CTL"; do
		[ -x "$b" ] || ag_fail "$b not built (make tests-build)"
	done
	[ -f "$AG_WITNESS" ] || ag_fail "$AG_WITNESS not built (make)"
	command -v jq >/dev/null || ag_fail "jq missing"
	[ -c /dev/kvm ] || ag_skip "no /dev/kvm on this machine"
	AG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kvmlu-$AG_NAME.XXXXXX")
	chmod 755 "$AG_DIR"
	trap ag_cleanup EXIT
	mkdir -p "$AG_DIR/vms"
	AG_SOCK=$AG_DIR/agent.sock
	cat >"$AG_DIR/agent.json" <<-JSON
	{
	  "socket": "$AG_SOCK",
	  "group": "${1:-users}",
	  "run_dir": "$AG_DIR/vms",
	  "history_dir": "$AG_DIR/history",
	  "state_dir": "$AG_DIR/state",
	  "vmm_binary": "$AG_VMM",
	  "timeouts": { "vmm_ms": 2000 },
	  "allow_kexec": false
	}
	JSON
}

# ag_vm NAME [kvmlu-vmm run options]: a witness VM with its socket in the run dir.
ag_vm() {
	local name=$1 i cpus=(--cpus 1)
	shift
	[[ " $* " == *" --cpus "* ]] && cpus=()
	"$AG_VMM" run --name "$name" --memory 64M "${cpus[@]}" --payload "$AG_WITNESS" \
		--serial "$AG_DIR/$name.serial" --control "$AG_DIR/vms/$name.sock" "$@" \
		2>"$AG_DIR/$name.err" &
	AG_PIDS+=($!)
	for i in $(seq 1 300); do
		"$AG_CTL" -t 2 "$AG_DIR/vms/$name.sock" '{"cmd":"status"}' >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	ag_fail "VM $name: control socket did not answer within 30 s"
}

ag_agent() {
	local i
	"$AG_BIN/kvmlu-agent" --config "$AG_DIR/agent.json" 2>"$AG_DIR/agent.err" &
	AG_AGENT_PID=$!
	for i in $(seq 1 100); do
		[ -S "$AG_SOCK" ] && return 0
		kill -0 "$AG_AGENT_PID" 2>/dev/null || ag_fail "kvmlu-agent exited at start"
		sleep 0.1
	done
	ag_fail "agent socket $AG_SOCK did not appear within 10 s"
}

# ag_kvmlu ARGS...: the CLI against this test's agent; output in $AG_OUT, status in $AG_RC.
ag_kvmlu() {
	AG_OUT=$("$AG_BIN/kvmlu" --socket "$AG_SOCK" "$@" 2>&1)
	AG_RC=$?
	ag_log "kvmlu $* -> exit $AG_RC"
	echo "$AG_OUT" | sed 's/^/    /'
}

ag_vm_state() { # ag_vm_state NAME: "state" from the VMM's own status
	"$AG_CTL" -t 5 "$AG_DIR/vms/$1.sock" '{"cmd":"status"}' | jq -r .return.state
}

ag_ticks() { # ag_ticks NAME: the number of tick lines on its serial
	grep -cE '^witness boot=[0-9a-f]{16} cpu=0 tick=' "$AG_DIR/$1.serial"
}

# ag_wait_ticks NAME MIN [SECONDS]: wait until the VM printed MIN tick lines.
ag_wait_ticks() {
	local i
	for i in $(seq 1 $((${3:-30} * 10))); do
		[ "$(ag_ticks "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	ag_fail "VM $1: fewer than $2 tick lines after ${3:-30} s (has $(ag_ticks "$1"))"
}
