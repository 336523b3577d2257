#!/bin/bash
# Proves: --disk gives a VM virtio-blk disks, and a live upgrade hands them
# over as the same open files. The VM is on virtio-mmio
# (upgrade_keeps_virtio_pci_vm.sh covers the default, pci). Bad --disk arguments start nothing and say
# why (missing file, unknown option, a disk another VM writes). status
# lists the disks. save-state of a VM with disks is format 2.0 with one
# virtio-blk node per disk. After an upgrade the new process holds the
# disks (the same files, read-write and read-only as given), status still
# lists them, and the guest ticks on. No sanitizer report.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init
rw=$KV_DIR/root.raw ro=$KV_DIR/data.raw
dd if=/dev/zero of="$rw" bs=1M count=8 2>/dev/null || kv_fail "make $rw"
dd if=/dev/zero of="$ro" bs=1M count=4 2>/dev/null || kv_fail "make $ro"

# refuse_start WANT_STATUS TEXT ARGS...: kvmlu-vmm run must exit with that status saying TEXT.
refuse_start() {
	local want=$1 text=$2 rc
	shift 2
	"$KV_VMM" run --name refused --memory 64M --cpus 1 --payload "$KV_WITNESS" \
		--serial "$KV_DIR/refused.log" "$@" 2>"$KV_DIR/refused.err"
	rc=$?
	[ $rc = "$want" ] || kv_fail "kvmlu-vmm run $* exited $rc, want $want: $(cat "$KV_DIR/refused.err")"
	grep -qF -- "$text" "$KV_DIR/refused.err" ||
		kv_fail "kvmlu-vmm run $*: does not say '$text': $(cat "$KV_DIR/refused.err")"
	kv_log "refused ($rc): $(head -n 1 "$KV_DIR/refused.err")"
}
refuse_start 1 "disk $KV_DIR/missing.raw: No such file or directory" --disk "$KV_DIR/missing.raw"
refuse_start 64 "unknown or repeated option 'rw' (readonly, id=NAME)" --disk "$rw,rw"

up_start --memory 256M --cpus 2 --virtio-transport mmio --disk "$rw,id=root" --disk "$ro,readonly,id=data"
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60
boot=$(kv_boot_ids)
refuse_start 1 "another VM has it open?" --disk "$rw"

check_disks() { # check_disks WHEN: status lists both disks as given
	kv_request '{"cmd":"status"}'
	[ "$(jq -r '.return.disks | length' <<<"$KV_REPLY")" = 2 ] || kv_fail "$1: disks: $KV_REPLY"
	[ "$(jq -r '.return.disks[0].path' <<<"$KV_REPLY")" = "$(readlink -f "$rw")" ] ||
		kv_fail "$1: disk 0 path: $KV_REPLY"
	[ "$(jq -r '.return.disks[0].readonly' <<<"$KV_REPLY")" = false ] || kv_fail "$1: disk 0 readonly"
	[ "$(jq -r '.return.disks[1].readonly' <<<"$KV_REPLY")" = true ] || kv_fail "$1: disk 1 not readonly"
	[ "$(jq -r '.return.disks[1].id' <<<"$KV_REPLY")" = data ] || kv_fail "$1: disk 1 id"
	[ "$(jq -r '.return.disks[1].mmio_base' <<<"$KV_REPLY")" = $((0xd0001000)) ] ||
		kv_fail "$1: disk 1 base: $KV_REPLY"
	[ "$(jq -r '.return.disks[1].gsi' <<<"$KV_REPLY")" = 17 ] || kv_fail "$1: disk 1 gsi"
	[ "$(jq -r '.return.disks[0].device_error' <<<"$KV_REPLY")" = null ] || kv_fail "$1: device error"
}
check_disks "before the upgrade"

kv_ok '{"cmd":"pause"}'
kv_ok "{\"cmd\":\"save-state\",\"args\":{\"path\":\"$KV_DIR/s.dtb\"}}"
kv_ok '{"cmd":"resume"}'
dtc -I dtb -O dts -o "$KV_DIR/s.dts" "$KV_DIR/s.dtb" 2>/dev/null || kv_fail "dtc cannot read the state"
grep -q 'compatible = "kvmlu,vm-state-v2"' "$KV_DIR/s.dts" || kv_fail "state is not format 2"
grep -q 'virtio-blk@d0000000 {' "$KV_DIR/s.dts" || kv_fail "no virtio-blk@d0000000 node"
grep -q 'virtio-blk@d0001000 {' "$KV_DIR/s.dts" || kv_fail "no virtio-blk@d0001000 node"
grep -q "disk-path = \"$(readlink -f "$ro")\"" "$KV_DIR/s.dts" || kv_fail "no disk-path of $ro"

# holds PID FILE MODE: PID has FILE open, read-write (w) or read-only (r).
holds() {
	local fd flags
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd")" = "$(readlink -f "$2")" ] || continue
		flags=$(awk '/^flags:/ {print $2}' /proc/"$1"/fdinfo/"${fd##*/}")
		case $3 in
		w) (( (8#$flags & 3) == 2 )) && return 0 ;;
		r) (( (8#$flags & 3) == 0 )) && return 0 ;;
		esac
	done
	return 1
}
holds "$KV_PID" "$rw" w || kv_fail "pid $KV_PID does not hold $rw read-write"

for round in 1 2; do
	tick=$(kv_tick 1)
	up_upgrade
	kv_log "upgrade $round: pid $KV_PID, blackout ${UP_BLACKOUT} ms"
	holds "$KV_PID" "$rw" w || kv_fail "new pid $KV_PID does not hold $rw read-write"
	holds "$KV_PID" "$ro" r || kv_fail "new pid $KV_PID does not hold $ro read-only"
	check_disks "after upgrade $round"
	up_wait_ticks 1 "$tick"
	[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed"
done
# The flock came along with the open file: still nobody else may write.
refuse_start 1 "another VM has it open?" --disk "$rw"

up_stop
up_check_sanitizers
kv_pass
