# Harness case: the stock Linux guest on --virtio-transport pci. Its
# kernel finds the PCI root bridge in kvmlu-vmm's DSDT (PNP0A03, conf1),
# tests/guest/linux/init loads virtio_pci (with virtio_pci_legacy_dev and
# virtio_pci_modern_dev) and virtio_blk, and the guest appends fsync'd
# records to an ext4 on its disk (kvmlu.records=/dev/vda, as in
# linux_guest_disk_keeps_acked_records). Judged:
#   - the guest sees vda with the disk's size and its acks go on;
#   - `status` says virtio_transport "pci", the disk at PCI device 1 with
#     driver_status 15, MSIs sent (msix_sent > 0: its interrupts are
#     MSI-X) and none lost, and no unhandled MMIO exits;
#   - two live upgrades: after each the acks go on (the same writer, its
#     interrupts still arriving: msix_sent grows in the new process, the
#     MSI-X table and vectors came with the state) and status still says
#     pci;
#   - prepare-update and a host kexec (stage 2): `kvmlu-vmm restore`
#     builds the VM on virtio-pci again from the state (2.2, its pci node)
#     and the same writer's acks go on, with MSIs from the new process;
#   - KVMLU-STOP: the guest unmounts and reboots, e2fsck -fn is clean and
#     /records is rec 1..N with N its last ack.
# The disk is the QEMU host's own virtio disk (HARNESS_DISK, /dev/vda in
# here), which keeps its data across the kexec; without one, a file in
# tmpfs, and the kexec part is skipped.
HARNESS_TIMEOUT=1500
HARNESS_DISK=64M

. /harness/vm_common.sh

LP=lxpci
LP_SERIAL=/tmp/$LP.serial

lp_disk() { # the host's virtio disk, or a 64 MiB file in tmpfs
	for _b in /sys/block/vd*; do
		[ -e "$_b" ] && { echo "/dev/${_b##*/}"; return; }
	done
	truncate -s 64M /tmp/$LP.disk.raw
	echo /tmp/$LP.disk.raw
}

lp_stop_block() { # the disk's last 4 KiB block, where KVMLU-STOP goes
	if [ -b "$1" ]; then
		echo $(($(blockdev --getsize64 "$1") / 4096 - 1))
	else
		echo $(($(wc -c <"$1") / 4096 - 1))
	fi
}

lp_msis() { # lp_msis WHAT: status says pci, the driver live, MSIs sent and none lost
	_s=$(vm_ctl $LP status)
	echo "$_s" | grep -q '"virtio_transport":"pci"' || lp_fail "$1: status does not say pci: $_s"
	echo "$_s" | grep -q '"driver_status":15' || lp_fail "$1: the driver is not live: $_s"
	_n=$(echo "$_s" | json_num msix_sent)
	[ "${_n:-0}" -gt 0 ] || lp_fail "$1: no MSI sent by this process: $_s"
	[ "$(echo "$_s" | json_num msix_lost)" = 0 ] || lp_fail "$1: MSIs lost: $_s"
	echo "$_n"
}

# lp_finish DISK FIRST_ACK WHAT: stop the writer, let the guest end, judge the disk.
lp_finish() {
	printf 'KVMLU-STOP' | dd of="$1" bs=4096 seek="$(lp_stop_block "$1")" conv=notrunc 2>/dev/null
	_until=$(deadline_in 120)
	while lp_alive && before "$_until"; do
		usleep 200000
	done
	lp_alive && lp_fail "$3: the VM did not end after KVMLU-STOP"
	_bad=$(rec_acks "$LP_SERIAL" | awk -v f="$2" '$1 != f + NR - 1 { print "ack " $1 " where " f + NR - 1 " was due"; exit }')
	[ -z "$_bad" ] || lp_fail "$3: $_bad (the writer restarted or a line was lost)"
	_done=$(grep -a -o 'KVMLU-RECORDS-DONE n=[0-9]*' "$LP_SERIAL" | sed 's/.*n=//')
	[ -n "$_done" ] && [ "$_done" = "$(lp_last_ack)" ] || lp_fail "$3: writer stopped at '$_done', last ack $(lp_last_ack)"
	/sbin/e2fsck -fn "$1" >/tmp/$LP.fsck 2>&1 || fail "e2fsck -fn: $(tail -n 1 /tmp/$LP.fsck)"
	/sbin/debugfs -R 'cat /records' "$1" >/tmp/$LP.records 2>/dev/null || fail "debugfs cannot read /records"
	_bad=$(awk '$0 != "rec " NR { print "line " NR; exit }' /tmp/$LP.records)
	[ -z "$_bad" ] && [ "$(wc -l </tmp/$LP.records)" = "$_done" ] ||
		fail "/records is not rec 1..$_done: ${_bad:-$(wc -l </tmp/$LP.records) lines}"
	LP_DONE=$_done
}

lp_alive() { kill -0 "$(cat /tmp/$LP.pid)" 2>/dev/null; }
lp_last_ack() { rec_last_ack "$LP_SERIAL"; }

lp_fail() {
	grep -a -v 'KVMLU-REC-ACK' "$LP_SERIAL" | tail -n 20 | tr -d '\r' | sed 's/^/guest| /'
	tail -n 8 "/tmp/$LP.vmm" | sed 's/^/vmm| /'
	fail "$1"
}

lp_wait_ack() { # lp_wait_ack N SECONDS WHAT
	_until=$(deadline_in "$2")
	while before "$_until"; do
		[ "$(lp_last_ack)" -ge "$1" ] && return 0
		grep -aqs 'KVMLU-RECORDS-ERROR' "$LP_SERIAL" && lp_fail "$3: the guest's writer failed"
		lp_alive || lp_fail "$3: kvmlu-vmm exited"
		usleep 200000
	done
	lp_fail "$3: no ack >= $1 within $2 s (last $(lp_last_ack))"
}

lp_upgrade() { # lp_upgrade I: a live upgrade, then acks and MSIs go on in the new process
	_before=$(lp_last_ack)
	_r=$($VM_CTL -t 180 "$VM_RUN_DIR/$LP.sock" '{"cmd":"upgrade","args":{"timeout_ms":90000}}')
	echo "$_r" | grep -q '"ok": *true' || lp_fail "upgrade $1 refused: $_r"
	echo "$_r" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' >"/tmp/$LP.pid"
	lp_wait_ack $((_before + 5)) 300 "upgrade $1"
	_n=$(lp_msis "upgrade $1")
	report PASS "harness/$HARNESS_CASE/upgrade$1" "acks $_before -> $(lp_last_ack), $_n MSIs in pid $(cat /tmp/$LP.pid)"
}

stage1() {
	vm_need_binaries
	for f in /kvmlu/linux/vmlinuz /kvmlu/linux/initramfs.cpio.gz; do
		[ -e "$f" ] || skip "$f missing (tests/guest/linux/fetch-kernel.sh, build-initramfs.sh)"
	done
	for f in /sbin/mke2fs /sbin/e2fsck /sbin/debugfs; do
		[ -x "$f" ] || skip "$f missing (e2fsprogs on the machine that built the initramfs)"
	done
	disk=$(lp_disk)
	/sbin/mke2fs -q -F -t ext4 -L kvmlu-records "$disk" 60M || fail "mke2fs on $disk failed"
	dd if=/dev/zero of="$disk" bs=4096 seek="$(lp_stop_block "$disk")" count=1 conv=notrunc 2>/dev/null
	sync
	rm -f "$VM_RUN_DIR/$LP.sock"
	$VM_BIN run --name $LP --memory 256M --cpus 1 --virtio-transport pci \
		--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
		--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=5 kvmlu.records=/dev/vda" \
		--disk "$disk,id=records" \
		--serial "$LP_SERIAL" --control "$VM_RUN_DIR/$LP.sock" >"/tmp/$LP.vmm" 2>&1 &
	echo $! >"/tmp/$LP.pid"
	lp_wait_ack 1 600 "boot"
	grep -aE 'PCI|pci 0000|virtio|vda|KVMLU-GUEST-DISKS' "$LP_SERIAL" | tr -d '\r' | head -n 40 | sed 's/^/guest| /'
	_sectors=$(grep -a -o 'KVMLU-GUEST-DISKS modules=ok vda=[0-9]*' "$LP_SERIAL" | sed 's/.*vda=//')
	_want=$((($(lp_stop_block "$disk") + 1) * 8))
	[ "$_sectors" = "$_want" ] || lp_fail "the guest's vda: '$_sectors' sectors, the disk has $_want"
	lp_wait_ack 5 300 "boot"
	_s=$(vm_ctl $LP status)
	harness_log "status: $_s"
	echo "$_s" | grep -q '"virtio_transport":"pci"' || lp_fail "status does not say pci: $_s"
	echo "$_s" | grep -q '"pci_device":1' || lp_fail "the disk is not PCI device 1: $_s"
	echo "$_s" | grep -q '"driver_status":15' || lp_fail "the driver is not live: $_s"
	_sent=$(echo "$_s" | json_num msix_sent)
	_lost=$(echo "$_s" | json_num msix_lost)
	[ "${_sent:-0}" -gt 0 ] || lp_fail "no MSI sent: the guest's interrupts are not MSI-X ($_s)"
	[ "$_lost" = 0 ] || lp_fail "$_lost interrupts lost (no vector or MSI-X off): $_s"
	_um=$(echo "$_s" | json_num mmio_reads)
	report PASS "harness/$HARNESS_CASE/boot" "vda $_sectors sectors on virtio-pci, $_sent MSIs, ack $(lp_last_ack), unhandled MMIO reads $_um"

	lp_upgrade 1
	lp_upgrade 2
	case $disk in
	/tmp/*)
		lp_finish "$disk" 1 "after the upgrades"
		skip "no virtio disk in the QEMU host: boot and upgrades on virtio-pci passed (rec 1..$LP_DONE, e2fsck clean), the host kexec part did not run"
		;;
	esac
	r=$(vm_ctl $LP prepare-update)
	echo "$r" | grep -q '"ok":true' || lp_fail "prepare-update refused: $r"
	a=$(lp_last_ack)
	harness_log "$LP prepared at ack $a: $r"
	echo "$a" >"$HARNESS_CARRY/$LP.ack"
	echo "$disk" >"$HARNESS_CARRY/$LP.disk"
	# A line cut by the pause ends after the restore: carry its first half.
	if [ -n "$(tail -c 1 "$LP_SERIAL")" ]; then
		tail -n 1 "$LP_SERIAL" >"$HARNESS_CARRY/$LP.serial-tail"
	else
		: >"$HARNESS_CARRY/$LP.serial-tail"
	fi
	kexec_next_stage
}

stage2() {
	vm_need_binaries
	a=$(cat "$HARNESS_CARRY/$LP.ack")
	disk=$(cat "$HARNESS_CARRY/$LP.disk")
	[ -b "$disk" ] || fail "$disk is not there after the kexec"
	cat "$HARNESS_CARRY/$LP.serial-tail" >"$LP_SERIAL"
	vm_restore $LP
	vm_wait_restored $LP || {
		cat "/tmp/$LP.vmm"
		fail "restore --session kvmlu/vm/$LP failed: $(tail -n 1 "/tmp/$LP.vmm")"
	}
	lp_wait_ack $((a + 5)) 300 "after the host kexec"
	grep -aq 'KVMLU-RECORDS-START' "$LP_SERIAL" && lp_fail "the guest's writer started again after the kexec"
	_n=$(lp_msis "after the host kexec")
	report PASS "harness/$HARNESS_CASE/kexec" "acks $a -> $(lp_last_ack) on virtio-pci again, $_n MSIs from the restored VMM"
	lp_finish "$disk" $((a + 1)) "after the host kexec"
	pass "Linux guest on virtio-pci with MSI-X: rec 1..$LP_DONE on its disk across 2 live upgrades and a host kexec, e2fsck clean"
}
