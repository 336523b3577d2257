#!/bin/bash
# Proves: --virtio-transport pci starts a VM whose disks are virtio-pci
# functions (status: virtio_transport "pci", the disk at PCI device 1 with
# its BAR0 at 0xd0000000 and no GSI), its save-state is format 2.2 with
# /devices virtio-transport "pci" and the disk's pci node, and two live
# upgrades keep it so: the new process holds the same open disk, status
# still says pci, the guest ticks on with the same boot id. A bad
# --virtio-transport value starts nothing and says why; a VM without the
# option is on virtio-pci too (the default), one with
# --virtio-transport mmio on virtio-mmio. The witness guest drives no device: the
# guest side of virtio-pci (config cycles, MSI-X, its state moved to a
# new VM) is test_vm_virtio_pci's, and the Linux guest's in the harness
# (linux_guest_disk_on_virtio_pci). No sanitizer report.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init
disk=$KV_DIR/d.raw
dd if=/dev/zero of="$disk" bs=1M count=4 2>/dev/null || kv_fail "make $disk"

"$KV_VMM" run --name refused --memory 64M --cpus 1 --payload "$KV_WITNESS" \
	--serial "$KV_DIR/refused.log" --virtio-transport isa 2>"$KV_DIR/refused.err"
rc=$?
[ $rc = 64 ] || kv_fail "--virtio-transport isa exited $rc, want 64: $(cat "$KV_DIR/refused.err")"
grep -qF -- "--virtio-transport 'isa': mmio or pci" "$KV_DIR/refused.err" ||
	kv_fail "bad transport: $(cat "$KV_DIR/refused.err")"
kv_log "refused: $(head -n 1 "$KV_DIR/refused.err")"

up_start --memory 128M --cpus 1 --virtio-transport pci --disk "$disk,id=d0"
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60
boot=$(kv_boot_ids)

check_pci() { # check_pci WHEN: status shows the disk on virtio-pci
	kv_request '{"cmd":"status"}'
	[ "$(kv_ret virtio_transport)" = pci ] || kv_fail "$1: transport: $KV_REPLY"
	[ "$(kv_ret preservable)" = true ] || kv_fail "$1: not preservable: $KV_REPLY"
	[ "$(kv_ret 'disks[0].pci_device')" = 1 ] || kv_fail "$1: pci device: $KV_REPLY"
	[ "$(kv_ret 'disks[0].mmio_base')" = $((0xd0000000)) ] || kv_fail "$1: BAR0: $KV_REPLY"
	[ "$(kv_ret 'disks[0].gsi')" = null ] || kv_fail "$1: a pci disk with a GSI: $KV_REPLY"
	[ "$(kv_ret 'disks[0].id')" = d0 ] || kv_fail "$1: disk id: $KV_REPLY"
	[ "$(kv_ret 'disks[0].msix_lost')" = 0 ] || kv_fail "$1: msix_lost: $KV_REPLY"
}
check_pci "before the upgrades"

kv_ok '{"cmd":"pause"}'
kv_ok "{\"cmd\":\"save-state\",\"args\":{\"path\":\"$KV_DIR/s.dtb\"}}"
kv_ok '{"cmd":"resume"}'
dtc -I dtb -O dts -o "$KV_DIR/s.dts" "$KV_DIR/s.dtb" 2>/dev/null || kv_fail "dtc cannot read the state"
grep -q 'kvmlu,format = <0x02 0x02>' "$KV_DIR/s.dts" || kv_fail "state is not format 2.2"
grep -q 'virtio-transport = "pci"' "$KV_DIR/s.dts" || kv_fail "no virtio-transport in /devices"
grep -q 'compatible = "kvmlu,virtio-pci-function-v1"' "$KV_DIR/s.dts" || kv_fail "no pci node"
grep -q 'bar0 = <0x00 0xd0000004>' "$KV_DIR/s.dts" || kv_fail "no BAR0 in the pci node"

for round in 1 2; do
	tick=$(kv_tick 0)
	up_upgrade
	kv_log "upgrade $round: pid $KV_PID, blackout ${UP_BLACKOUT} ms"
	check_pci "after upgrade $round"
	up_wait_ticks 0 "$tick"
	[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed"
	[ "$(readlink "/proc/$KV_PID/fd/"* 2>/dev/null | grep -c "^$(readlink -f "$disk")\$")" -ge 1 ] ||
		kv_fail "new pid $KV_PID does not hold $disk"
done
up_stop
up_check_sanitizers

# Without the option: virtio-pci, the default.
kv_start --memory 64M --cpus 1 --disk "$disk"
kv_ok '{"cmd":"status"}'
[ "$(kv_ret virtio_transport)" = pci ] || kv_fail "default transport: $KV_REPLY"
[ "$(kv_ret 'disks[0].pci_device')" = 1 ] || kv_fail "default: no pci device 1: $KV_REPLY"
kv_stop
# --virtio-transport mmio: a virtio-mmio window with its GSI.
kv_start --memory 64M --cpus 1 --virtio-transport mmio --disk "$disk"
kv_ok '{"cmd":"status"}'
[ "$(kv_ret virtio_transport)" = mmio ] || kv_fail "mmio transport: $KV_REPLY"
[ "$(kv_ret 'disks[0].gsi')" = 16 ] || kv_fail "mmio disk gsi: $KV_REPLY"
[ "$(kv_ret 'disks[0].pci_device')" = null ] || kv_fail "mmio disk with a pci device: $KV_REPLY"
kv_stop
kv_pass
