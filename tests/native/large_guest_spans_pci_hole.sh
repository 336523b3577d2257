#!/bin/bash
# Proves: a guest larger than the RAM below the x86 PCI hole (3.5 GiB:
# 3 GiB below 4 GiB, the rest above) boots with the payload ABI's page
# tables covering the high region, and the witness fills and verifies
# memory on both sides of the hole. Slow here (first touch of every page
# is a fault through the nested host, ~100 MB/s), so one run only.
. "$(dirname "$0")/lib.sh"
kv_init
avail=$(awk '/MemAvailable/ { print int($2 / 1024) }' /proc/meminfo)
[ "$avail" -gt 6000 ] || kv_skip "needs ~4 GiB free RAM, $avail MiB available"

kv_start --memory 3584M --cpus 2
kv_ok '{"cmd":"status"}'
[ "$(kv_ret memory)" = 3758096384 ] || kv_fail "memory $(kv_ret memory)"
kv_wait_serial '^witness start boot=[0-9a-f]{16} cpus=2 mem=3584 ' 400
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60
kv_ok '{"cmd":"guest-verify","args":{"timeout_ms":300000}}' 320
[ "$(kv_ret verified)" = true ] || kv_fail "guest-verify: $KV_REPLY"
kv_wait_serial '^witness verify boot=[0-9a-f]{16} result=ok' 10
kv_ok '{"cmd":"pause"}'
kv_ok '{"cmd":"checksum"}' 120
[ "$(kv_ret bytes)" = 3758096384 ] || kv_fail "checksum covered $(kv_ret bytes) bytes"
kv_ok '{"cmd":"resume"}'
kv_stop
kv_pass
