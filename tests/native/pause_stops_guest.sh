#!/bin/bash
# Proves: `pause` stops every vCPU: no serial output while paused, the
# memory checksum is identical twice in a row while paused, and checksum
# is refused (NotPaused) while the guest runs.
. "$(dirname "$0")/lib.sh"
kv_init

kv_start --memory 256M --cpus 2
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60

kv_log "stage 1: checksum while running is refused"
kv_err '{"cmd":"checksum"}' NotPaused

kv_log "stage 2: pause"
kv_ok '{"cmd":"pause","id":"p1"}'
[ "$(kv_ret state)" = paused ] || kv_fail "pause reply state $(kv_ret state)"
kv_ok '{"cmd":"status"}'
[ "$(kv_ret state)" = paused ] || kv_fail "status says $(kv_ret state) after pause"
size1=$(stat -c %s "$KV_SERIAL")

kv_log "stage 3: two checksums while paused"
kv_ok '{"cmd":"checksum"}'
d1=$(kv_ret digest); b1=$(kv_ret bytes)
kv_ok '{"cmd":"checksum"}'
d2=$(kv_ret digest)
[[ $d1 =~ ^[0-9a-f]{32}$ ]] || kv_fail "digest '$d1' is not 32 hex digits"
[ "$d1" = "$d2" ] || kv_fail "checksum changed while paused: $d1 then $d2"
[ "$b1" = 268435456 ] || kv_fail "checksum covered $b1 bytes, want 268435456"

kv_log "stage 4: no serial output for 3 s while paused (the guest prints every second)"
sleep 3
size2=$(stat -c %s "$KV_SERIAL")
[ "$size1" = "$size2" ] || kv_fail "serial grew from $size1 to $size2 bytes while paused"
kv_ok '{"cmd":"checksum"}'
[ "$(kv_ret digest)" = "$d1" ] || kv_fail "checksum changed after 3 s paused"

kv_log "stage 5: resume, then the memory changes again"
kv_ok '{"cmd":"resume"}'
kv_wait_serial '^witness boot=' 30 $(( $(kv_tick_lines) + 2 ))
kv_ok '{"cmd":"pause"}'
kv_ok '{"cmd":"checksum"}'
[ "$(kv_ret digest)" != "$d1" ] || kv_fail "checksum did not change while the guest ran"
kv_ok '{"cmd":"resume"}'

kv_stop
kv_pass
