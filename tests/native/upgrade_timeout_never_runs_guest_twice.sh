#!/bin/bash
# Proves: an upgrade whose deadline passes at any message of the
# hand-over never runs the guest in both processes. Each case delays one
# message (test-only shim, tests/native/upgrade_fault_shim.c) past a
# 2.5 s timeout; after it exactly one kvmlu-vmm runs the VM, the one the
# reply names, and every vCPU's ticks and uptime rise strictly over the
# whole serial log (a stale copy resumed after the other ran would print
# a tick it printed before).
#   send:resumed  the new process is slow to confirm AFTER the commit:
#                 the old one must not resume (before the commit point
#                 existed, it killed the new process, which had already
#                 run the guest, and resumed its stale vCPUs);
#   send:restored the new process is slow BEFORE the commit: the old one
#                 times out, kills it (it never ran the guest), resumes;
#   recv:restored the old process itself is late to commit: same.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init

up_fault_start --memory 256M --cpus 2
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60
up_offsets_prime 2
boot=$(kv_boot_ids)

# late FAULT WHO: upgrade with FAULT (a 3 s delay) and timeout_ms 2500;
# WHO (old or new) must run the VM afterwards, alone.
late() {
	local fault=$1 who=$2 old=$KV_PID new i desc
	up_before_upgrade 2
	up_fault "$fault"
	kv_request '{"cmd":"upgrade","args":{"timeout_ms":2500}}' 30
	up_fault ""
	kv_log "$fault -> $KV_REPLY"
	[ "$(jq -r .error.class <<<"$KV_REPLY")" = Timeout ] || kv_fail "$fault: expected Timeout: $KV_REPLY"
	desc=$(jq -r .error.desc <<<"$KV_REPLY")
	new=$(grep -oE 'pid [0-9]+' <<<"$desc" | head -n 1 | grep -oE '[0-9]+')
	[ -n "$new" ] || kv_fail "$fault: the reply names no new process: $desc"
	# Let the delayed message go and whatever follows it happen.
	sleep 4
	up_check_monotonic
	if [ "$who" = new ]; then
		grep -q "the VM is pid $new's now, not resumed here" <<<"$desc" ||
			kv_fail "$fault: the reply does not say the VM is $new's: $desc"
		for i in $(seq 1 "$(kv_scaled 100)"); do
			up_alive "$old" || break
			sleep 0.1
		done
		up_alive "$old" && kv_fail "$fault: old kvmlu-vmm $old still there after the commit"
		KV_PID=$new
	else
		grep -q 'VM running here' <<<"$desc" || kv_fail "$fault: VM not resumed here: $desc"
		up_alive "$new" && kv_fail "$fault: new kvmlu-vmm $new still there"
	fi
	kill -0 "$KV_PID" 2>/dev/null || kv_fail "$fault: kvmlu-vmm $KV_PID is gone"
	kv_request '{"cmd":"status"}'
	[ "$(kv_ret pid)" = "$KV_PID" ] || kv_fail "$fault: socket answered by pid $(kv_ret pid), not $KV_PID"
	[ "$(kv_ret state)" = running ] || kv_fail "$fault: VM is $(kv_ret state)"
	up_check_continue 2
	up_check_monotonic
	[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "$fault: boot id changed"
}

late send:resumed:delay:3000 new
late send:restored:delay:3000 old
late recv:restored:delay:3000 old

up_upgrade
up_check_continue 2
up_check_monotonic
kv_verify
up_stop
up_check_sanitizers
kv_pass
