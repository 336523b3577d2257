#!/bin/bash
# Proves: an upgrade keeps the VM's run state. A paused VM comes out
# paused in the new process (its guest prints nothing until resume there,
# then continues the same boot); a pause sent while an upgrade runs, on a
# connection to the old process, is refused with Busy (the upgrade
# decides the run state and carries it over) and the VM comes out
# running; one from a client that connects during the upgrade is served
# by the new process once it has the VM.
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
reply_state=$(kv_ret state)
KV_PID=$new
kv_request '{"cmd":"status"}'
[ "$(kv_ret pid)" = "$new" ] || kv_fail "socket answered by pid $(kv_ret pid), not the new $new"
[ "$(kv_ret state)" = paused ] || kv_fail "paused VM is $(kv_ret state) after the upgrade"
[ "$reply_state" = paused ] || kv_fail "upgrade reply says the VM is $reply_state"
sleep 2
[ "$(kv_tick_lines)" = "$lines" ] || kv_fail "the paused guest printed $(( $(kv_tick_lines) - lines )) tick lines across the upgrade"
up_alive "$old" && { sleep 3; up_alive "$old" && kv_fail "old kvmlu-vmm $old still there"; }
kv_ok '{"cmd":"resume"}'
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 30 $((lines + 4))
up_check_monotonic
[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed"
kv_log "paused VM: paused in pid $new after the upgrade, resumed there"

# A pause while an upgrade runs, on a connection the old process had
# before: Busy, and the VM comes out running. One made during the upgrade
# waits in the backlog and is honoured by the new process once it has
# the VM. The new process waits 3 s with the VM's files so both land
# mid-upgrade.
up_fault recv:prepare:delay:3000
mkfifo "$KV_DIR/in"
"$KV_CTL" -t "$(kv_scaled 60)" -n 2 "$KV_SOCK" <"$KV_DIR/in" >"$KV_DIR/replies" &
ctl=$!
exec 3>"$KV_DIR/in"
echo '{"cmd":"upgrade","id":1}' >&3
up_fault_pid recv:prepare:delay:3000
echo '{"cmd":"pause","id":2}' >&3
exec 3>&-
"$KV_CTL" -t "$(kv_scaled 60)" "$KV_SOCK" '{"cmd":"pause","id":3}' >"$KV_DIR/late_pause" &
late=$!
wait "$ctl" || kv_fail "no replies to the upgrade and the pause: $(cat "$KV_DIR/replies")"
up_fault ""
KV_REPLY=$(jq -c 'select(.id == 2)' "$KV_DIR/replies")
kv_log "pause on the old process's connection during the upgrade -> $KV_REPLY"
[ "$(jq -r .error.class <<<"$KV_REPLY")" = Busy ] || kv_fail "pause during an upgrade: $KV_REPLY"
KV_REPLY=$(jq -c 'select(.id == 1)' "$KV_DIR/replies")
[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] || kv_fail "upgrade failed: $KV_REPLY"
[ "$(kv_ret state)" = running ] || kv_fail "upgrade reply says the VM is $(kv_ret state)"
KV_PID=$(kv_ret pid)
wait "$late" || kv_fail "no reply to the pause sent during the upgrade"
KV_REPLY=$(cat "$KV_DIR/late_pause")
kv_log "pause on a connection made during the upgrade -> $KV_REPLY"
[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] || kv_fail "pause queued for the new process: $KV_REPLY"
kv_request '{"cmd":"status"}'
[ "$(kv_ret pid)" = "$KV_PID" ] || kv_fail "socket answered by pid $(kv_ret pid), not $KV_PID"
[ "$(kv_ret state)" = paused ] || kv_fail "VM is $(kv_ret state) after the new process took the pause"
kv_ok '{"cmd":"resume"}'
lines=$(kv_tick_lines)
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 30 $((lines + 4))
up_check_monotonic

kv_verify
up_stop
up_check_sanitizers
kv_pass
