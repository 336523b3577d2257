#!/bin/bash
# Proves: after pause and resume the same guest continues: same boot id,
# each vCPU's tick higher than before the pause; repeated pause/resume
# cycles keep it so; a second pause or resume is harmless.
. "$(dirname "$0")/lib.sh"
kv_init

kv_start --memory 256M --cpus 2
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60
boot=$(kv_boot_ids)
[ "$(wc -l <<<"$boot")" = 1 ] || kv_fail "more than one boot id: $boot"

for round in 1 2 3; do
	kv_log "round $round: pause"
	kv_ok '{"cmd":"pause"}'
	kv_ok '{"cmd":"pause"}'
	[ "$(kv_ret changed)" = false ] || kv_fail "second pause claims a change"
	before0=$(kv_tick 0); before1=$(kv_tick 1)
	lines=$(kv_tick_lines)
	sleep 1
	kv_ok '{"cmd":"resume"}'
	[ "$(kv_ret state)" = running ] || kv_fail "resume reply $(kv_ret state)"
	kv_ok '{"cmd":"resume"}'
	[ "$(kv_ret changed)" = false ] || kv_fail "second resume claims a change"
	kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=[01] tick=' 30 $((lines + 4))
	after0=$(kv_tick 0); after1=$(kv_tick 1)
	kv_log "cpu0 $before0 -> $after0, cpu1 $before1 -> $after1"
	[ "$after0" -gt "$before0" ] || kv_fail "cpu 0 tick did not advance after resume"
	[ "$after1" -gt "$before1" ] || kv_fail "cpu 1 tick did not advance after resume"
	[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed: $(kv_boot_ids | tr '\n' ' ')"
done
grep -q 'witness FATAL' "$KV_SERIAL" && kv_fail "guest reported FATAL"

kv_stop
kv_pass
