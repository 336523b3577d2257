#!/bin/bash
# Proves: guest_memfd is optional. Where this machine's KVM lacks it
# (kvmlu-test-caps asks KVM), kvmlu-vmm refuses a VM that asks for it
# before making one: exit 1, one stderr line naming --memory-backend
# guest_memfd and the capability KVM lacks, no control socket; a memfd VM
# on the same KVM runs (memory_backend_memfd_runs). Where KVM has
# guest_memfd there is no refusal to see: SKIP.
. "$(dirname "$0")/lib.sh"
kv_init
[ -x "$KV_CAPS" ] || kv_fail "$KV_CAPS not built (make)"
why=$("$KV_CAPS" guest_memfd) && kv_skip "this machine's KVM has guest_memfd: no refusal to see"
cap=$(grep -oE 'KVM_CAP_[A-Z0-9_]+' <<<"$why" | head -n 1)
[ -n "$cap" ] || kv_fail "kvmlu-test-caps names no capability: $why"
kv_log "kvmlu-test-caps: $why"
KV_NO_WAIT=1 kv_start --memory 64M --memory-backend guest_memfd
for i in $(seq 1 "$(kv_scaled 300)"); do
	kill -0 "$KV_PID" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$KV_PID" 2>/dev/null && kv_fail "kvmlu-vmm still runs $(kv_scaled 30) s after asking for guest_memfd"
wait "$KV_PID"
rc=$?
KV_PID=
kv_log "kvmlu-vmm exited $rc: $(cat "$KV_STDERR")"
[ $rc = 1 ] || kv_fail "kvmlu-vmm exited $rc, expected 1"
grep -q -- "--memory-backend guest_memfd: .*$cap" "$KV_STDERR" ||
	kv_fail "stderr does not name --memory-backend guest_memfd and $cap"
[ -e "$KV_SOCK" ] && kv_fail "a control socket was left: $KV_SOCK"
kv_pass
