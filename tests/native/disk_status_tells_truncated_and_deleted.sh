#!/bin/bash
# Proves: status reports each disk as it is now, not only as it was at
# start: after the file is truncated under the VM, size stays what the
# guest was told while size_now is the file's and problem says so and
# how to fix it; a live upgrade is then refused naming what changed and
# the way out, and the VM runs on in the same process; once the size is
# put back the problem is gone and the upgrade goes through. A deleted
# disk file shows deleted true and a problem that says it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init
disk=$KV_DIR/d.raw
truncate -s 64M "$disk"
full=$((64 << 20))

up_start --memory 64M --disk "$disk,id=d0"
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60

disk0() { kv_request '{"cmd":"status"}'; jq -r ".return.disks[0].$1" <<<"$KV_REPLY"; }
[ "$(disk0 size)" = $full ] || kv_fail "size at start: $(disk0 size)"
[ "$(disk0 size_now)" = $full ] || kv_fail "size_now at start"
[ "$(disk0 problem)" = null ] || kv_fail "a problem at start: $(disk0 problem)"
[ "$(disk0 deleted)" = false ] || kv_fail "deleted at start"

kv_log "stage 1: the file is truncated to 1 MiB under the VM"
truncate -s 1M "$disk"
[ "$(disk0 size)" = $full ] || kv_fail "size is no longer what the guest was told"
[ "$(disk0 size_now)" = 1048576 ] || kv_fail "size_now $(disk0 size_now), want 1048576"
problem=$(disk0 problem)
grep -qF "1048576 bytes now, the guest was told $full" <<<"$problem" || kv_fail "problem: $problem"
grep -qF "truncate -s $full" <<<"$problem" || kv_fail "problem names no way out: $problem"

pid=$KV_PID
kv_request '{"cmd":"upgrade"}' 40
kv_log "upgrade -> $KV_REPLY"
[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] && KV_PID=$(kv_ret pid) && kv_fail "upgrade of a truncated disk went through"
desc=$(jq -r .error.desc <<<"$KV_REPLY")
for want in "changed size: 1048576 bytes now, $full recorded" "truncate -s $full $(readlink -f "$disk")" \
	"shut the VM down"; do
	grep -qF -- "$want" <<<"$desc" || kv_fail "upgrade refusal does not say '$want': $desc"
done
kv_ok '{"cmd":"status"}'
[ "$(kv_ret state)" = running ] && [ "$(kv_ret pid)" = "$pid" ] ||
	kv_fail "after the refusal: state $(kv_ret state), pid $(kv_ret pid) (was $pid)"

kv_log "stage 2: the size put back"
truncate -s 64M "$disk"
[ "$(disk0 problem)" = null ] || kv_fail "problem after the size was put back: $(disk0 problem)"
tick=$(kv_tick 0)
up_upgrade
up_wait_ticks 0 "$tick"

kv_log "stage 3: the file is deleted"
rm "$disk"
[ "$(disk0 deleted)" = true ] || kv_fail "status does not say the disk is deleted"
grep -qF "deleted: the VM still reads and writes the open file" <<<"$(disk0 problem)" ||
	kv_fail "problem: $(disk0 problem)"
up_stop
up_check_sanitizers
kv_pass
