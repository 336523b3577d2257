#!/bin/bash
# Proves: the incremental memory checksum (hashed while the guest runs
# with KVM dirty logging, only the chunks written since hashed in the
# pause; vmm/memory_digest.c, what prepare-update uses) equals the full
# checksum of the same paused memory, while the witness fills its memory
# (started right after boot) and while it ticks; every chunk is hashed
# at least once; dirty logging leaves the guest's memory intact
# (guest-verify ok after each round). That the pause rehashes only what
# was written is the unit test's (test_digest_table.c): here how much is
# left for the pause depends on the running phase's time budget.
. "$(dirname "$0")/lib.sh"
kv_init

kv_start --memory 256M --cpus 2
chunks=128	# 256 MiB in 2 MiB chunks

check_round() { # check_round NAME: one incremental checksum, VM left paused
	kv_ok '{"cmd":"checksum","args":{"incremental":true}}' 120
	[ "$(kv_ret state)" = paused ] || kv_fail "$1: state $(kv_ret state) after the checksum"
	[ "$(kv_ret equal)" = true ] ||
		kv_fail "$1: incremental $(kv_ret digest) != full $(kv_ret full_digest)"
	[ "$(kv_ret digest)" = "$(kv_ret full_digest)" ] || kv_fail "$1: digests differ: $KV_REPLY"
	[ "$(kv_ret checksum_incremental)" = true ] ||
		kv_fail "$1: not incremental: $(kv_ret checksum_full_reason)"
	# Every chunk hashed at least once; how many before the pause depends
	# on the time budget of the running phase (vmm/memory_digest.c).
	[ "$(kv_ret checksum_running_chunks)" -gt 0 ] ||
		kv_fail "$1: nothing hashed while running"
	[ "$(kv_ret checksum_running_budget_ms)" = 10000 ] ||
		kv_fail "$1: running budget $(kv_ret checksum_running_budget_ms), not the default 10000 ms"
	[ $(( $(kv_ret checksum_running_chunks) + $(kv_ret checksum_paused_chunks) )) -ge $chunks ] ||
		kv_fail "$1: fewer than $chunks chunks hashed in all: $KV_REPLY"
	[ "$(kv_ret full_digest)" = "$LAST_FULL" ] && kv_fail "$1: memory did not change between rounds"
	LAST_FULL=$(kv_ret full_digest)
	# Still paused: a second full checksum sees the same memory.
	kv_ok '{"cmd":"checksum"}'
	[ "$(kv_ret digest)" = "$LAST_FULL" ] || kv_fail "$1: memory changed while paused"
}
LAST_FULL=none

kv_log "round 1: right after start, while the witness fills its memory"
check_round fill
kv_ok '{"cmd":"resume"}'
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60

for r in 2 3 4; do
	kv_log "round $r: while the witness ticks"
	check_round "tick$r"
	kv_ok '{"cmd":"resume"}'
	kv_wait_serial '^witness boot=' 30 $(( $(kv_tick_lines) + 2 ))
	kv_verify
	[ "$(kv_ret result)" = ok ] || kv_fail "round $r: guest-verify $KV_REPLY"
done

kv_log "running_hash_ms 0: nothing hashed while running, all of it in the pause, still equal"
kv_ok '{"cmd":"checksum","args":{"incremental":true,"running_hash_ms":0}}' 120
[ "$(kv_ret equal)" = true ] || kv_fail "budget 0: incremental != full: $KV_REPLY"
[ "$(kv_ret checksum_running_chunks)" = 0 ] && [ "$(kv_ret checksum_paused_chunks)" = $chunks ] ||
	kv_fail "budget 0: chunks hashed while running: $KV_REPLY"
[ "$(kv_ret checksum_incremental)" = false ] || kv_fail "budget 0: called incremental: $KV_REPLY"
kv_ok '{"cmd":"resume"}'

kv_log "refused while paused (NotRunning), and a non-boolean argument (InvalidRequest)"
kv_ok '{"cmd":"pause"}'
kv_err '{"cmd":"checksum","args":{"incremental":true}}' NotRunning
kv_err '{"cmd":"checksum","args":{"incremental":1}}' InvalidRequest
kv_err '{"cmd":"checksum","args":{"incremental":true,"running_hash_ms":"10"}}' InvalidRequest
kv_err '{"cmd":"checksum","args":{"incremental":true,"running_hash_ms":3600001}}' InvalidRequest
kv_ok '{"cmd":"resume"}'
kv_stop
kv_pass
