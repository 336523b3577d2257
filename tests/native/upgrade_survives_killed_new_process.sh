#!/bin/bash
# Proves: if the new kvmlu-vmm dies before the commit - killed once it has
# the VM's files, once it has the state, or once it has restored it all
# and waits for the commit, or silent past the upgrade timeout - the old
# process takes the VM back: the upgrade is answered with an error naming
# what happened, the same pid runs the same guest (boot id, ticks
# continue), it is not left paused, and a later upgrade still works. The
# faults come from the test-only shim (tests/native/upgrade_fault_shim.c).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init

up_fault_start --memory 256M --cpus 2
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60
up_offsets_prime 2
boot=$(kv_boot_ids)

# kill_at FAULT: start an upgrade that stops the new process at FAULT
# (a shim fault ending in :stop), SIGKILL it there, and expect the old one
# to report and resume.
kill_at() {
	local point=$1 child reply_file=$KV_DIR/reply.$1
	up_before_upgrade 2
	up_fault "$point"
	"$KV_CTL" -t "$(kv_scaled 60)" "$KV_SOCK" '{"cmd":"upgrade"}' >"$reply_file" &
	local ctl=$!
	up_fault_pid "$point"
	child=$UP_FAULT_PID
	[ "$child" != "$UP_FIRST_PID" ] || kv_fail "fault $point fired in the old process"
	kv_log "new kvmlu-vmm $child stopped at $point; killing it"
	kill -KILL "$child"
	wait "$ctl" || kv_fail "no reply to the upgrade after killing $child"
	up_fault ""
	KV_REPLY=$(cat "$reply_file")
	kv_log "upgrade -> $KV_REPLY"
	[ "$(jq -r .ok <<<"$KV_REPLY")" = false ] || kv_fail "upgrade claims success: $KV_REPLY"
	jq -r .error.desc <<<"$KV_REPLY" | grep -q "exited before resuming the VM; VM running here" ||
		kv_fail "error does not say the new process died and the VM resumed: $KV_REPLY"
	kill -0 "$child" 2>/dev/null && kv_fail "killed child $child still there"
	kv_request '{"cmd":"status"}'
	[ "$(kv_ret pid)" = "$UP_FIRST_PID" ] || kv_fail "socket now answered by pid $(kv_ret pid)"
	[ "$(kv_ret state)" = running ] || kv_fail "VM left $(kv_ret state) after failed upgrade"
	up_check_continue 2
	[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed"
}

kill_at recv:prepare:stop
kill_at recv:state:stop
kill_at send:restored:stop

# Silent past the timeout: the old process kills it itself.
up_fault recv:state:stop
kv_request '{"cmd":"upgrade","args":{"timeout_ms":1500}}' 30
[ "$(jq -r .error.class <<<"$KV_REPLY")" = Timeout ] || kv_fail "expected Timeout: $KV_REPLY"
kv_log "timeout -> $KV_REPLY"
child=$(jq -r .error.desc <<<"$KV_REPLY" | grep -oE 'pid [0-9]+' | grep -oE '[0-9]+')
[ -n "$child" ] || kv_fail "timeout error does not name the new process"
kill -0 "$child" 2>/dev/null && kv_fail "new kvmlu-vmm $child still alive after the timeout"
kv_request '{"cmd":"status"}'
[ "$(kv_ret state)" = running ] || kv_fail "VM left $(kv_ret state) after timeout"

# Paused before the upgrade: a failed upgrade leaves it paused, not running.
kv_ok '{"cmd":"pause"}'
kv_request '{"cmd":"upgrade","args":{"timeout_ms":1000}}' 30
jq -r .error.desc <<<"$KV_REPLY" | grep -q 'still paused' || kv_fail "paused VM: $KV_REPLY"
kv_request '{"cmd":"status"}'
[ "$(kv_ret state)" = paused ] || kv_fail "paused VM is $(kv_ret state) after failed upgrade"
kv_ok '{"cmd":"resume"}'

# And a real upgrade still works afterwards.
up_fault ""
up_upgrade
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 30 $(( $(kv_tick_lines) + 2 ))
[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed after the good upgrade"
up_stop
up_check_sanitizers
kv_pass
