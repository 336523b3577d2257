#!/bin/bash
# Proves: kvmlu-vmm runs the witness guest on /dev/kvm, its tick counter
# advances from one serial line to the next, the boot id stays the same,
# and `status` describes the VM that was asked for.
. "$(dirname "$0")/lib.sh"
kv_init

kv_log "stage 1: boot a 256M, 1-vCPU witness"
kv_start --memory 256M --cpus 1
kv_wait_serial '^witness start boot=' 60
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 30 1
t1=$(kv_tick 0)
kv_log "first tick $t1"

kv_log "stage 2: wait for two more tick lines"
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 30 3
t2=$(kv_tick 0)
kv_log "later tick $t2"
[ "$t2" -gt "$t1" ] || kv_fail "tick did not advance: $t1 then $t2"
[ "$(kv_boot_ids | wc -l)" = 1 ] || kv_fail "boot id changed: $(kv_boot_ids | tr '\n' ' ')"

kv_log "stage 3: status"
kv_ok '{"cmd":"status","id":1}'
[ "$(kv_ret state)" = running ] || kv_fail "state $(kv_ret state), want running"
[ "$(kv_ret name)" = "$KV_NAME" ] || kv_fail "name $(kv_ret name)"
[ "$(kv_ret vcpus)" = 1 ] || kv_fail "vcpus $(kv_ret vcpus)"
[ "$(kv_ret memory)" = 268435456 ] || kv_fail "memory $(kv_ret memory)"
[ "$(kv_ret backend)" = memfd ] || kv_fail "backend $(kv_ret backend)"
[ "$(jq -r .id <<<"$KV_REPLY")" = 1 ] || kv_fail "id not echoed: $KV_REPLY"
[ "$(kv_ret uptime_ns)" -gt 0 ] 2>/dev/null || kv_fail "uptime_ns $(kv_ret uptime_ns)"

kv_stop
kv_pass
