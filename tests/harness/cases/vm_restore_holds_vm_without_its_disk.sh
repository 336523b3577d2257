# Harness case: after a host kexec, a VM whose disk is not the one it had
# at pause is held, not run on another disk. Disk fds do not cross a
# kexec: the restore reopens each disk by the path in the state and
# checks it is the recorded file (device, inode, size). Stage 1: two
# witness VMs, each with a virtio-blk disk on the rootfs, are prepared
# and the host kexecs. The rootfs comes back as a new copy, so every
# disk is a different file with the same bytes at its old path. Stage 2:
# d-other's disk is there but is another file (also grown by 1 MiB);
# d-gone's disk was removed. Each restore holds its VM: status says held
# with the disk's path and why, the guest does not tick, and `resume`
# answers Held with the same reason.
HARNESS_MEM=2G
HARNESS_TIMEOUT=700

. /harness/vm_common.sh
[ -x /kvmlu/san/kvmlu-vmm ] && VM_BIN=/kvmlu/san/kvmlu-vmm

stage1() {
	vm_need_binaries
	for v in d-other d-gone; do
		dd if=/dev/zero of="$HARNESS_CARRY/$v.raw" bs=1M count=4 2>/dev/null ||
			fail "$v: cannot make its disk"
		rm -f "$VM_RUN_DIR/$v.sock"
		$VM_BIN run --name "$v" --memory 48M --cpus 1 --payload $VM_WITNESS \
			--serial "$VM_SERIAL_DIR/$v.serial" --control "$VM_RUN_DIR/$v.sock" \
			--disk "$HARNESS_CARRY/$v.raw,id=$v" >"/tmp/$v.vmm" 2>&1 &
		echo $! >"/tmp/$v.pid"
	done
	for v in d-other d-gone; do
		vm_wait_running "$v"
		vm_ctl "$v" status | grep -q "\"path\":\"$HARNESS_CARRY/$v.raw\"" ||
			fail "$v: status does not list its disk: $(vm_ctl "$v" status)"
		vm_prepare "$v"
	done
	vm_kexec_next_stage
}

stage2() {
	vm_need_binaries
	dd if=/dev/zero of="$HARNESS_CARRY/d-other.raw" bs=1M count=1 seek=4 conv=notrunc 2>/dev/null ||
		fail "cannot grow d-other's disk"
	rm -f "$HARNESS_CARRY/d-gone.raw"
	for v in d-other d-gone; do
		vm_restore "$v"
	done
	for v in d-other d-gone; do
		i=0
		until vm_ctl "$v" status 2>/dev/null | grep -q '"state":"held"'; do
			kill -0 "$(cat /tmp/$v.pid)" 2>/dev/null || fail "$v: restore exited: $(tail -n 3 /tmp/$v.vmm)"
			[ $i -lt 300 ] || fail "$v: not held within 300 s: $(vm_ctl "$v" status 2>&1)"
			sleep 1
			i=$((i + 1))
		done
		st=$(vm_ctl "$v" status)
		harness_log "$v held: $st"
		case $v in
		d-other) echo "$st" | grep -qE "disk $HARNESS_CARRY/d-other.raw (is not the same file|changed size)" ||
				fail "$v: held for another reason: $st" ;;
		d-gone) echo "$st" | grep -q "disk $HARNESS_CARRY/d-gone.raw: No such file or directory" ||
				fail "$v: held for another reason: $st" ;;
		esac
		r=$(vm_ctl "$v" resume)
		echo "$r" | grep -q '"class":"Held"' || fail "$v: resume on the wrong disk: $r"
		grep -q 'tick=' "$VM_SERIAL_DIR/$v.serial" 2>/dev/null && fail "$v: the guest ran while held"
		vm_ctl "$v" status | grep -q '"state":"held"' || fail "$v: not held after resume: $(vm_ctl "$v" status)"
	done
	pass "after the kexec a replaced disk and a missing disk each held their VM, paused, with the disk's path and the cause in status"
}
