# Harness case for `make soak` only (tests/soak/run.sh writes
# build/harness/soak-linux-boots as "COUNT"; without it the case skips):
# boots the stock Debian guest on 2 vCPUs with its records disk, as
# linux_guest_disk_keeps_acked_records did before its guest went to one
# vCPU, that many times one after another, each until its writer acked a
# record. That case's boot hung 4 times in 17 runs, the guest's vCPU 0
# spinning for the other while the QEMU host's CPU took no interrupts
# (tests/harness/README.md). This case counts such boots and, on the
# first one, says what the host sees (vm_stuck_report: each VMM thread's
# state, KVM's counters for the VM, the host's interrupt counts).
HARNESS_TIMEOUT=5400
HARNESS_MEM=2G
HARNESS_DISK=64M

. /harness/vm_common.sh

SB=lxboot

sb_watch() { # a line on the console every 5 s: is the host's userspace running?
	while :; do
		echo "KVMLU-HARNESS: watch up=$(cut -d' ' -f1 /proc/uptime) $(grep -E '^ *LOC:' /proc/interrupts | tr -s ' ')" >/dev/console
		sleep 5
	done
}

sb_hang_report() { # sb_hang_report PID
	vm_stuck_report "$1"
	echo "== the guest's last lines"
	tail -n 12 /tmp/$SB.serial | tr -d '\r'
	echo "== the VMM says"
	vm_ctl $SB status
	tail -n 5 /tmp/$SB.vmm
}

stage1() {
	[ -f /harness/soak_linux_boots ] || skip "a soak case: run by tests/soak/run.sh"
	read -r count </harness/soak_linux_boots
	vm_need_binaries
	[ -e /kvmlu/linux/vmlinuz ] || skip "no Linux guest (tests/guest/linux/)"
	sb_watch &
	disk=/dev/vda
	i=1
	while [ $i -le "$count" ]; do
		/sbin/mke2fs -q -F -t ext4 -L kvmlu-records "$disk" 60M || fail "mke2fs on $disk failed"
		: >/tmp/$SB.serial
		rm -f "/run/$SB.sock"
		$VM_BIN run --name $SB --memory 256M --cpus 2 \
			--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
			--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=5 kvmlu.records=/dev/vda" \
			--disk "$disk,id=records" \
			--serial /tmp/$SB.serial --control "/run/$SB.sock" >/tmp/$SB.vmm 2>&1 &
		pid=$!
		start=$(uptime_s)
		_until=$(deadline_in 300)
		# Polled as linux_guest_disk_keeps_acked_records polls (a few
		# processes every 0.2 s): the host's one CPU as busy as there.
		while [ "$(rec_last_ack /tmp/$SB.serial)" -lt 1 ]; do
			kill -0 "$pid" 2>/dev/null || break
			before "$_until" || break
			usleep 200000
		done
		took=$(($(uptime_s) - start))
		if [ "$(rec_last_ack /tmp/$SB.serial)" -ge 1 ]; then
			echo "boot $i: first record acked after $took s"
		else
			echo "boot $i: FAILED after $took s (VMM $(kill -0 "$pid" 2>/dev/null && echo running || echo gone))"
			sb_hang_report "$pid"
			fail "Linux guest boot $i of $count made no progress in $took s"
		fi
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		i=$((i + 1))
	done
	pass "$count Linux guest boots (256 MiB, 2 vCPUs, records disk), none hung"
}
