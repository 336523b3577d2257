#!/bin/bash
# Shared by tests/native/memory_backend_*_runs.sh (sourced, not run; not
# executable so the runner skips it). mb_runs BACKEND proves: the witness
# runs with guest RAM in that backend (status names it), ticks advance,
# the guest verifies its own memory, and a paused checksum is stable.
mb_runs() {
	local backend=$1 d1 d2
	kv_log "backend $backend"
	kv_start --memory 256M --cpus 1 --memory-backend "$backend"
	kv_ok '{"cmd":"status"}'
	[ "$(kv_ret backend)" = "$backend" ] || kv_fail "status backend $(kv_ret backend)"
	kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60 2
	kv_verify
	kv_ok '{"cmd":"pause"}'
	kv_ok '{"cmd":"checksum"}'; d1=$(kv_ret digest)
	kv_ok '{"cmd":"checksum"}'; d2=$(kv_ret digest)
	[ "$d1" = "$d2" ] || kv_fail "$backend: checksum unstable while paused"
	kv_ok '{"cmd":"resume"}'
	kv_stop
}
