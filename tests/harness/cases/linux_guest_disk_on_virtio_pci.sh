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
#   - KVMLU-STOP: the guest unmounts and reboots, e2fsck -fn is clean and
#     /records is rec 1..N with N its last ack.
# Single stage: the host kexec of a virtio-pci VM (its state's 2.2 pci
# nodes through resume_plan_from_state) is not exercised here.
HARNESS_TIMEOUT=900

. /harness/vm_common.sh

LP=lxpci
LP_SERIAL=/tmp/$LP.serial
LP_DISK=/tmp/$LP.disk.raw

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
	_s=$(vm_ctl $LP status)
	echo "$_s" | grep -q '"virtio_transport":"pci"' || lp_fail "upgrade $1: status does not say pci: $_s"
	echo "$_s" | grep -q '"driver_status":15' || lp_fail "upgrade $1: the driver is not live: $_s"
	_n=$(echo "$_s" | json_num msix_sent)
	[ "${_n:-0}" -gt 0 ] || lp_fail "upgrade $1: no MSI sent by the new process: $_s"
	[ "$(echo "$_s" | json_num msix_lost)" = 0 ] || lp_fail "upgrade $1: MSIs lost: $_s"
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
	truncate -s 64M "$LP_DISK"
	/sbin/mke2fs -q -F -t ext4 -L kvmlu-records "$LP_DISK" 60M || fail "mke2fs failed"
	rm -f "$VM_RUN_DIR/$LP.sock"
	$VM_BIN run --name $LP --memory 256M --cpus 1 --virtio-transport pci \
		--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
		--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=5 kvmlu.records=/dev/vda" \
		--disk "$LP_DISK,id=records" \
		--serial "$LP_SERIAL" --control "$VM_RUN_DIR/$LP.sock" >"/tmp/$LP.vmm" 2>&1 &
	echo $! >"/tmp/$LP.pid"
	lp_wait_ack 1 600 "boot"
	grep -aE 'PCI|pci 0000|virtio|vda|KVMLU-GUEST-DISKS' "$LP_SERIAL" | tr -d '\r' | head -n 40 | sed 's/^/guest| /'
	_sectors=$(grep -a -o 'KVMLU-GUEST-DISKS modules=ok vda=[0-9]*' "$LP_SERIAL" | sed 's/.*vda=//')
	[ "$_sectors" = $((64 * 2048)) ] || lp_fail "the guest's vda: '$_sectors' sectors, the disk has $((64 * 2048))"
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

	printf 'KVMLU-STOP' | dd of="$LP_DISK" bs=4096 seek=$((64 * 256 - 1)) conv=notrunc 2>/dev/null
	_until=$(deadline_in 120)
	while lp_alive && before "$_until"; do
		usleep 200000
	done
	lp_alive && lp_fail "the VM did not end after KVMLU-STOP"
	_done=$(grep -a -o 'KVMLU-RECORDS-DONE n=[0-9]*' "$LP_SERIAL" | sed 's/.*n=//')
	[ -n "$_done" ] && [ "$_done" = "$(lp_last_ack)" ] || lp_fail "writer stopped at '$_done', last ack $(lp_last_ack)"
	/sbin/e2fsck -fn "$LP_DISK" >/tmp/$LP.fsck 2>&1 || fail "e2fsck -fn: $(tail -n 1 /tmp/$LP.fsck)"
	/sbin/debugfs -R 'cat /records' "$LP_DISK" >/tmp/$LP.records 2>/dev/null || fail "debugfs cannot read /records"
	_bad=$(awk '$0 != "rec " NR { print "line " NR; exit }' /tmp/$LP.records)
	[ -z "$_bad" ] && [ "$(wc -l </tmp/$LP.records)" = "$_done" ] ||
		fail "/records is not rec 1..$_done: ${_bad:-$(wc -l </tmp/$LP.records) lines}"
	pass "Linux guest on virtio-pci with MSI-X ($_sent MSIs at boot): rec 1..$_done on its disk across 2 live upgrades, e2fsck clean"
}
