#!/bin/bash
# Proves: the witness runs with guest RAM in a memfd and in a guest_memfd
# (mmap-able, shared): ticks advance, the guest verifies its own memory,
# and a paused checksum is stable, for each backend.
. "$(dirname "$0")/lib.sh"
kv_init

for backend in memfd guest_memfd; do
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
done
kv_pass
