#!/bin/bash
# Proves: with 1 and with 4 vCPUs every vCPU runs its own witness loop
# (each prints its own advancing tick), and pause stops all of them.
. "$(dirname "$0")/lib.sh"
kv_init

for n in 1 4; do
	kv_log "$n vCPU(s)"
	kv_start --memory 256M --cpus "$n"
	kv_wait_serial "^witness start boot=[0-9a-f]{16} cpus=$n " 60
	last=$((n - 1))
	for c in $(seq 0 $last); do
		kv_wait_serial "^witness boot=[0-9a-f]{16} cpu=$c tick=" 30 2
	done
	declare -A t1
	for c in $(seq 0 $last); do t1[$c]=$(kv_tick "$c"); done
	for c in $(seq 0 $last); do
		kv_wait_serial "^witness boot=[0-9a-f]{16} cpu=$c tick=" 30 4
		t=$(kv_tick "$c")
		[ "$t" -gt "${t1[$c]}" ] || kv_fail "$n vCPUs: cpu $c tick ${t1[$c]} -> $t"
	done
	kv_ok '{"cmd":"status"}'
	[ "$(kv_ret vcpus)" = "$n" ] || kv_fail "status vcpus $(kv_ret vcpus)"
	kv_ok '{"cmd":"pause"}'
	size=$(stat -c %s "$KV_SERIAL")
	sleep 2.5
	[ "$(stat -c %s "$KV_SERIAL")" = "$size" ] || kv_fail "$n vCPUs: output while paused"
	kv_ok '{"cmd":"resume"}'
	grep -q 'witness FATAL' "$KV_SERIAL" && kv_fail "guest reported FATAL"
	kv_stop
	unset t1
done
kv_pass
