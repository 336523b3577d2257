#!/bin/bash
# Proves: --virtio-transport pci starts a VM whose disks are virtio-pci
# functions (status: virtio_transport "pci", the disk at PCI device 1 with
# its BAR0 at 0xd0000000, no GSI, not preservable), and, because the
# transport's PCI and MSI-X state is not in the state format yet, that a
# live upgrade, a prepare-update and a save-state of it are refused before
# anything pauses, naming the transport, with the VM running on in the
# same process (ticks advance, same boot id, no state file written). A
# bad --virtio-transport value starts nothing and says why; a VM without
# the option is still virtio-mmio. The witness guest drives no device:
# the guest side of virtio-pci is the unit tests' (test_virtio_pci,
# test_vm_virtio_pci) and the Linux guest's in the harness
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
pid=$KV_PID

kv_ok '{"cmd":"status"}'
[ "$(kv_ret virtio_transport)" = pci ] || kv_fail "transport: $KV_REPLY"
[ "$(kv_ret preservable)" = false ] || kv_fail "a pci VM says it is preservable: $KV_REPLY"
[ "$(kv_ret 'disks[0].pci_device')" = 1 ] || kv_fail "pci device: $KV_REPLY"
[ "$(kv_ret 'disks[0].mmio_base')" = $((0xd0000000)) ] || kv_fail "BAR0: $KV_REPLY"
[ "$(kv_ret 'disks[0].gsi')" = null ] || kv_fail "a pci disk with a GSI: $KV_REPLY"
[ "$(kv_ret 'disks[0].msix_lost')" = 0 ] || kv_fail "msix_lost: $KV_REPLY"

# refused JSON CLASS: refused with CLASS, naming the transport; the VM runs on here.
refused() {
	local tick
	tick=$(kv_tick 0)
	kv_err "$1" "$2"
	jq -r .error.desc <<<"$KV_REPLY" | grep -qF -- '--virtio-transport pci' ||
		kv_fail "$1: the refusal does not name the transport: $KV_REPLY"
	[ "$KV_PID" = "$pid" ] && kill -0 "$pid" || kv_fail "$1: the VMM is gone"
	up_wait_ticks 0 "$tick"
}
refused '{"cmd":"upgrade"}' NotPreservable
refused '{"cmd":"prepare-update"}' NotPreservable
kv_ok '{"cmd":"pause"}'
kv_err "{\"cmd\":\"save-state\",\"args\":{\"path\":\"$KV_DIR/s.dtb\"}}" Failed
jq -r .error.desc <<<"$KV_REPLY" | grep -qF -- '--virtio-transport pci' || kv_fail "save-state: $KV_REPLY"
[ -e "$KV_DIR/s.dtb" ] && kv_fail "save-state wrote $KV_DIR/s.dtb"
kv_ok '{"cmd":"resume"}'
up_wait_ticks 0 "$(kv_tick 0)"
[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed"
up_stop
up_check_sanitizers

# Without the option: virtio-mmio as before.
kv_start --memory 64M --cpus 1 --disk "$disk"
kv_ok '{"cmd":"status"}'
[ "$(kv_ret virtio_transport)" = mmio ] || kv_fail "default transport: $KV_REPLY"
[ "$(kv_ret 'disks[0].gsi')" = 16 ] || kv_fail "mmio disk gsi: $KV_REPLY"
[ "$(kv_ret 'disks[0].pci_device')" = null ] || kv_fail "mmio disk with a pci device: $KV_REPLY"
kv_stop
kv_pass
