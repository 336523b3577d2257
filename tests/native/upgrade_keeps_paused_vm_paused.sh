#!/bin/bash
# Proves: an upgrade keeps the VM's run state. A paused VM comes out
# paused in the new process (its guest prints nothing until resume there,
# then continues the same boot); a pause sent while an upgrade runs is
# refused with Busy (the upgrade decides the run state and carries it
# over) and the VM comes out running.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init

up_fault_start --memory 256M --cpus 2
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60
up_offsets_prime 2
boot=$(kv_boot_ids)

# Paused, then upgraded: paused in the new process.
kv_ok '{"cmd":"pause"}'
lines=$(kv_tick_lines)
old=$KV_PID
kv_ok '{"cmd":"upgrade"}' 30
new=$(kv_ret pid)
[ "$(kv_ret state)" = paused ] || kv_fail "upgrade reply says the VM is $(kv_ret state)"
kv_request '{"cmd":"status"}'
[ "$(kv_ret pid)" = "$new" ] || kv_fail "socket answered by pid $(kv_ret pid), not the new $new"
[ "$(kv_ret state)" = paused ] || kv_fail "paused VM is $(kv_ret state) after the upgrade"
KV_PID=$new
sleep 2
[ "$(kv_tick_lines)" = "$lines" ] || kv_fail "the paused guest printed $(( $(kv_tick_lines) - lines )) tick lines across the upgrade"
up_alive "$old" && { sleep 3; up_alive "$old" && kv_fail "old kvmlu-vmm $old still there"; }
kv_ok '{"cmd":"resume"}'
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 30 $((lines + 4))
up_check_monotonic
[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed"
kv_log "paused VM: paused in pid $new after the upgrade, resumed there"

# A pause while an upgrade runs: Busy, and the VM comes out running. The
# new process waits 3 s with the VM's files so the pause lands mid-upgrade.
up_fault recv:prepare:delay:3000
"$KV_CTL" -t "$(kv_scaled 60)" "$KV_SOCK" '{"cmd":"upgrade"}' >"$KV_DIR/upgrade.reply" &
ctl=$!
up_fault_pid recv:prepare:delay:3000
kv_request '{"cmd":"pause"}'
kv_log "pause during the upgrade -> $KV_REPLY"
[ "$(jq -r .error.class <<<"$KV_REPLY")" = Busy ] || kv_fail "pause during an upgrade: $KV_REPLY"
wait "$ctl" || kv_fail "no reply to the upgrade"
up_fault ""
KV_REPLY=$(cat "$KV_DIR/upgrade.reply")
[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] || kv_fail "upgrade failed: $KV_REPLY"
KV_PID=$(kv_ret pid)
kv_request '{"cmd":"status"}'
[ "$(kv_ret pid)" = "$KV_PID" ] || kv_fail "socket answered by pid $(kv_ret pid), not $KV_PID"
[ "$(kv_ret state)" = running ] || kv_fail "VM is $(kv_ret state) after an upgrade that refused the pause"
lines=$(kv_tick_lines)
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 30 $((lines + 4))
up_check_monotonic

kv_verify
up_stop
up_check_sanitizers
kv_pass
