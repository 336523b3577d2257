#!/bin/bash
# Proves: kvmlu-vmm survives SIGHUP (what a VMM started from a shell gets
# when the shell's terminal goes away): it logs that it ignored it, the
# VM keeps running and the control socket keeps answering. SIGTERM still
# stops it cleanly (exit 0) and removes the socket file.
. "$(dirname "$0")/lib.sh"
kv_init
kv_start --memory 256M --cpus 1
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60

kv_log "SIGHUP to pid $KV_PID"
kill -HUP "$KV_PID"
for _ in $(seq 1 50); do grep -q 'SIGHUP ignored' "$KV_STDERR" && break; sleep 0.1; done
kill -0 "$KV_PID" 2>/dev/null || kv_fail "kvmlu-vmm died of SIGHUP"
grep -q 'SIGHUP ignored' "$KV_STDERR" || kv_fail "nothing logged about the SIGHUP"
[ -S "$KV_SOCK" ] || kv_fail "control socket gone after SIGHUP"
kv_ok '{"cmd":"status"}'
[ "$(kv_ret state)" = running ] || kv_fail "state $(kv_ret state) after SIGHUP"
lines=$(kv_tick_lines)
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 30 $((lines + 1))

kv_log "SIGTERM to pid $KV_PID"
kill -TERM "$KV_PID"
for _ in $(seq 1 "$(kv_scaled 300)"); do kill -0 "$KV_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$KV_PID" 2>/dev/null && kv_fail "kvmlu-vmm still running 30 s after SIGTERM"
wait "$KV_PID"
rc=$?
KV_PID=
[ $rc = 0 ] || kv_fail "exit status $rc after SIGTERM, expected 0"
[ -e "$KV_SOCK" ] && kv_fail "control socket $KV_SOCK left behind after SIGTERM"
grep -q 'stopped (signal): stopped by Terminated' "$KV_STDERR" || kv_fail "no stop message for SIGTERM"
grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$KV_STDERR" && kv_fail "sanitizer report"
kv_pass
