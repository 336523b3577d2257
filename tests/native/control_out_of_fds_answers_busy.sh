#!/bin/bash
# Proves: a VMM out of file descriptors tells a new control client so at
# once (Busy, "out of file descriptors") instead of leaving it in the
# backlog, where the control thread would wake for it again and again;
# once descriptors are free it serves requests again and the VM runs on.
. "$(dirname "$0")/lib.sh"
kv_init
command -v python3 >/dev/null || kv_skip "python3 missing"
kv_start --memory 256M --cpus 1
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60
lines=$(kv_tick_lines)
python3 "$KV_TOP/tests/native/out_of_fds.py" "$KV_SOCK" --pid "$KV_PID" \
	--request '{"cmd":"status"}' || kv_fail "the VMM did not answer when out of descriptors"
kv_ok '{"cmd":"status"}'
[ "$(kv_ret state)" = running ] || kv_fail "state $(kv_ret state) afterwards"
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 30 $((lines + 1))
grep -q 'ERROR: AddressSanitizer' "$KV_STDERR" && kv_fail "sanitizer report"
kv_stop
kv_pass
