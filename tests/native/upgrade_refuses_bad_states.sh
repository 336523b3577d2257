#!/bin/bash
# Proves: states that are hostile or do not fit are refused by the new
# kvmlu-vmm before it creates anything, the refusal names the problem,
# and nothing changes: the old process keeps running the same guest.
# Also: a binary that is not kvmlu-vmm, or not there, is refused; and
# save-state writes an FDT dtc can read, only while paused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init
corpus=$KV_TOP/tests/state-corpus

up_fault_start --memory 256M --cpus 2
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60
boot=$(kv_boot_ids)

# save-state: NotPaused while running; a dtc-readable FDT while paused.
kv_err "{\"cmd\":\"save-state\",\"args\":{\"path\":\"$KV_DIR/s.dtb\"}}" NotPaused
kv_ok '{"cmd":"pause"}'
kv_ok "{\"cmd\":\"save-state\",\"args\":{\"path\":\"$KV_DIR/s.dtb\",\"checksum\":true}}"
[ "$(kv_ret vcpus)" = 2 ] || kv_fail "save-state reports $(kv_ret vcpus) vCPUs"
dtc -I dtb -O dts -o "$KV_DIR/s.dts" "$KV_DIR/s.dtb" 2>"$KV_DIR/dtc.err" ||
	kv_fail "dtc cannot read the state: $(cat "$KV_DIR/dtc.err")"
grep -q 'compatible = "kvmlu,vm-state-v1"' "$KV_DIR/s.dts" || kv_fail "no root compatible"
grep -q 'cpu@1 {' "$KV_DIR/s.dts" || kv_fail "no cpu@1 node"
kv_ok '{"cmd":"checksum"}'
sum=$(kv_ret digest)
grep -q "checksum = \"$sum\"" "$KV_DIR/s.dts" || kv_fail "state checksum is not the checksum command's $sum"
kv_ok '{"cmd":"resume"}'

# refuse FILE TEXT: upgrade with that state (sent instead of the captured
# one by the test-only shim) must fail saying TEXT.
refuse() {
	local tick1
	tick1=$(kv_tick 1)
	up_fault "send:state:replace:$1"
	kv_request '{"cmd":"upgrade"}' 60
	up_fault ""
	[ "$(jq -r .ok <<<"$KV_REPLY")" = false ] || kv_fail "$(basename "$1") accepted: $KV_REPLY"
	jq -r .error.desc <<<"$KV_REPLY" | grep -qF -- "$2" ||
		kv_fail "$(basename "$1"): error does not say '$2': $KV_REPLY"
	jq -r .error.desc <<<"$KV_REPLY" | grep -q 'VM running here' ||
		kv_fail "$(basename "$1"): VM not resumed: $KV_REPLY"
	kv_log "$(basename "$1") refused: $(jq -r .error.desc <<<"$KV_REPLY")"
	kv_request '{"cmd":"status"}'
	[ "$(kv_ret pid)" = "$UP_FIRST_PID" ] || kv_fail "VM moved to pid $(kv_ret pid)"
	[ "$(kv_ret state)" = running ] || kv_fail "VM $(kv_ret state) after a refused state"
	# Fails unless a tick above tick1 comes: the guest continues.
	up_wait_ticks 1 "$tick1"
}

for f in truncated_fdt corrupted_struct wrong_property_size missing_node overlapping_regions \
	 future_major_version vcpu_count_mismatch unknown_node_compatible; do
	refuse "$corpus/bad/$f.dtb" "$(cat "$corpus/bad/$f.expect")"
done
# Well-formed but for another VM: 2 regions (3 GiB + 1 GiB), this one has 256 MiB in 1.
refuse "$corpus/good/two_vcpus.dtb" "state has 2 memory regions, VM 1"
# Our own state with its checksum, after the guest has run on: memory differs.
refuse "$KV_DIR/s.dtb" "differs from"

kv_err '{"cmd":"upgrade","args":{"binary":"/nonexistent/kvmlu-vmm"}}' InvalidRequest
# The test hooks of old are not on the public protocol.
kv_err "{\"cmd\":\"upgrade\",\"args\":{\"state_file\":\"$corpus/good/two_vcpus.dtb\"}}" InvalidRequest
kv_err '{"cmd":"upgrade","args":{"stop_at":"restore"}}' InvalidRequest
kv_request '{"cmd":"upgrade","args":{"binary":"/bin/true","timeout_ms":5000}}' 30
jq -r .error.desc <<<"$KV_REPLY" | grep -q 'exited' || kv_fail "/bin/true as new VMM: $KV_REPLY"
kv_log "/bin/true -> $(jq -r .error.desc <<<"$KV_REPLY")"
kv_request '{"cmd":"status"}'
[ "$(kv_ret state)" = running ] || kv_fail "VM $(kv_ret state) after a bad binary"
[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed"

kv_verify
up_stop
up_check_sanitizers
kv_pass
