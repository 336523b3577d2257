#!/bin/bash
# Proves: `guest-verify` reaches the guest through the kvmlu test port,
# the witness checks its whole memory pattern and answers ok, and its
# serial line agrees; while paused the command is refused (NotRunning).
. "$(dirname "$0")/lib.sh"
kv_init

kv_start --memory 256M --cpus 2
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60
boot=$(kv_boot_ids)

kv_verify 42
[ "$(kv_ret result)" = ok ] || kv_fail "result $(kv_ret result)"
[ "$(jq -r .id <<<"$KV_REPLY")" = 42 ] || kv_fail "id not echoed"
kv_wait_serial "^witness verify boot=$boot result=ok pages=[0-9]+" 10

kv_ok '{"cmd":"pause"}'
kv_err '{"cmd":"guest-verify"}' NotRunning
kv_ok '{"cmd":"resume"}'
kv_verify
kv_wait_serial "^witness verify boot=$boot result=ok" 10 2
grep -q 'result=FAILED' "$KV_SERIAL" && kv_fail "guest reported a failed verify"

kv_stop
kv_pass
