#!/bin/bash
# Proves: a long command on the control socket does not hold up another
# client's status or pause, and what may not run beside it is refused
# with Busy. The long command is a guest-verify of a 2 GiB witness (the
# guest walks all its memory before it answers); a pause from a second
# client stops the guest, so the verify provably cannot have finished
# while the other requests are sent: status, pause and update-status are
# answered (latency printed), resume, checksum and upgrade get Busy
# naming guest-verify. The verify then ends by its own timeout, the VM
# resumes and runs on.
. "$(dirname "$0")/lib.sh"
kv_init

kv_start --memory 2G --cpus 1
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 120
reply_file=$KV_DIR/verify.reply
"$KV_CTL" -t 120 "$KV_SOCK" '{"cmd":"guest-verify","id":1,"args":{"timeout_ms":20000}}' >"$reply_file" &
ctl=$!
ms() { echo $(( $(date +%s%N) / 1000000 )); }
t0=$(ms)
kv_ok '{"cmd":"status"}'
t_status=$(( $(ms) - t0 ))
t0=$(ms)
kv_ok '{"cmd":"pause"}'
t_pause=$(( $(ms) - t0 ))
[ -s "$reply_file" ] &&
	kv_fail "guest-verify answered before the pause: $(cat "$reply_file") (guest too fast to judge)"
kv_ok '{"cmd":"update-status"}'
kv_err '{"cmd":"resume"}' Busy
jq -r .error.desc <<<"$KV_REPLY" | grep -q 'guest-verify from another request is running' ||
	kv_fail "Busy does not name the command that runs: $KV_REPLY"
kv_err '{"cmd":"checksum"}' Busy
kv_err '{"cmd":"upgrade"}' Busy
# The guest is paused: its verify cannot answer, only time out.
kill -0 "$ctl" 2>/dev/null || kv_fail "guest-verify finished while its guest was paused: $(cat "$reply_file")"
kv_log "during guest-verify: status answered in $t_status ms, pause in $t_pause ms (kvmlu-ctl start-up included)"

wait "$ctl" || kv_fail "no reply to guest-verify"
[ "$(jq -r .error.class <"$reply_file")" = Timeout ] ||
	kv_fail "guest-verify of a paused guest: $(cat "$reply_file")"
[ "$(jq -r .id <"$reply_file")" = 1 ] || kv_fail "guest-verify reply without its id: $(cat "$reply_file")"
kv_ok '{"cmd":"resume"}'
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 30 $(( $(kv_tick_lines) + 2 ))
kv_stop
kv_pass
