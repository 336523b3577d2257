# Harness case: the stock Linux guest writes numbered, fsync'd records to
# its virtio disk without pause, across live upgrades and then a host
# kexec, and every record it saw acknowledged is on the disk afterwards,
# in order, in a file system that fsck finds clean.
#
# The disk is the QEMU host's own virtio disk (HARNESS_DISK: a raw image
# file on the outer machine, /dev/vda in here), given to kvmlu-vmm as
# `--disk /dev/vda`: it keeps its data across the kexec, which the host's
# tmpfs would not. The host makes an ext4 on it (mke2fs, 4 MiB short of
# the disk's end); the VM is on virtio-mmio (the other cases' Linux guests
# are on the default, pci); in the guest, tests/guest/linux/init loads
# virtio_mmio and virtio_blk (the devices are in the ACPI DSDT), mounts the disk's
# /dev/vda and appends "rec N" lines to /records, printing
# `KVMLU-REC-ACK n=N` after each fsync returned (kvmlu.records=/dev/vda).
#
# Stage 1: boot, LD_UPGRADES live upgrades; after each the guest's acks
# go on (same writer, more records); the agent's preflight (a dry run of
# `kvmlu host-update`) accepts the VM on its block device;
# prepare-update, kexec. Stage 2:
# `kvmlu-vmm restore`; the acks go on from the last one seen before the
# kexec (the same guest, not a reboot); then the host writes KVMLU-STOP
# into the disk's last 4 KiB: the guest stops, unmounts, reboots (the VM
# ends). Judged on the disk: `e2fsck -fn` exits 0, and /records (read
# with debugfs, not mounted) is exactly "rec 1" .. "rec M" with M = the
# guest's last ack, which is at least every ack seen on the serial before
# the kexec and after it. The serial's acks must also run 1, 2, 3 ...
# without a gap or a repeat in each stage (the writer never restarted).
#
# Beside it, qdwrite (tests/guest/linux/qdwrite.c, kvmlu.qd=) keeps
# LD_QD_WRITERS O_DIRECT|O_DSYNC writes in flight on a raw region of the
# same disk past the file system, each writer cycling its records through
# its own slots and reading each slot back before overwriting it (so every
# record, those acked before an upgrade or the kexec included, is checked
# on the disk). The guest reports the records acknowledged and the most
# requests its block layer had in flight; after the end every slot must
# hold the latest record its writer wrote there (DONE line), which is at
# least every ack seen before.
#
# A host kernel without a virtio disk (no CONFIG_VIRTIO_BLK/BLOCK) gets a
# disk file in its tmpfs instead: the upgrades and the final checks run
# on that, and the case says SKIP for the kexec part.
HARNESS_MEM=2G
HARNESS_TIMEOUT=1500
HARNESS_DISK=64M

. /harness/agent_common.sh

LD=lxdisk
LD_SERIAL=/tmp/$LD.serial
LD_UPGRADES=2
LD_FS=60M		# the ext4; the disk's last MiBs stay outside it
LD_MORE=5		# acks to see after each step before the next

# qdwrite's region: 61 MiB on (past the file system), 32 slots of 23 blocks.
LD_QD_FIRST=15616
LD_QD_BLOCKS=736
LD_QD_WRITERS=32

ld_acks() { rec_acks "$LD_SERIAL"; }

ld_qd_last() { # ld_qd_last [TAG]: the k= list of qdwrite's last ACKS (or TAG) line
	serial_lines "$LD_SERIAL" | grep -a -o "${1:-KVMLU-QD-ACKS} inflight_max=[0-9]* k=[0-9,]*" |
		tail -n 1 | sed 's/.* k=//'
}

ld_qd_inflight() { # the most requests in flight the guest reported
	serial_lines "$LD_SERIAL" | grep -a -o 'KVMLU-QD-[A-Z]* inflight_max=[0-9]*' |
		sed 's/.*=//' | sort -n | tail -n 1
}

# ld_qd_after OLD NEW WHAT: every writer's ack in NEW is above its ack in
# OLD (ABOVE=1) or at least it (ABOVE=0)
ld_qd_after() {
	_bad=$(echo "$1 $2" | awk -v above="$4" '{
		n = split($1, o, ","); m = split($2, w, ",")
		if (n != m) { print "writer lists differ in length"; exit }
		for (i = 1; i <= n; i++)
			if ((above && w[i] + 0 <= o[i] + 0) || (!above && w[i] + 0 < o[i] + 0)) {
				print "writer " i - 1 ": " o[i] " then " w[i]; exit } }')
	[ -z "$_bad" ] || ld_fail "$3: qdwrite's acks did not go on: $_bad"
}

ld_qd_wait() { # ld_qd_wait OLD SECONDS WHAT: every writer acked past OLD
	_until=$(deadline_in "$2")
	while before "$_until"; do
		_k=$(ld_qd_last)
		grep -aqs 'KVMLU-QD-ERROR' "$LD_SERIAL" &&
			ld_fail "$3: qdwrite failed: $(grep -a 'KVMLU-QD-ERROR' "$LD_SERIAL" | head -n 1 | tr -d '\r')"
		if [ -n "$_k" ] && [ -z "$(echo "$1 $_k" | awk '{ n = split($1, o, ","); split($2, w, ",")
			for (i = 1; i <= n; i++) if (w[i] + 0 <= o[i] + 0) { print "no"; exit } }')" ]; then
			return 0
		fi
		ld_vmm_alive || ld_fail "$3: kvmlu-vmm exited"
		usleep 500000
	done
	ld_fail "$3: qdwrite's writers did not all go on within $2 s: $1 -> $(ld_qd_last)"
}

# ld_qd_check DISK MIN WHAT: after the guest ended, every slot holds the
# last record its writer wrote there, and those are at least MIN's acks.
ld_qd_check() {
	grep -aqs 'KVMLU-QD-ERROR' "$LD_SERIAL" &&
		fail "$3: qdwrite failed: $(grep -a 'KVMLU-QD-ERROR' "$LD_SERIAL" | head -n 1 | tr -d '\r')"
	_qdone=$(ld_qd_last KVMLU-QD-DONE)
	[ -n "$_qdone" ] || ld_fail "$3: qdwrite printed no KVMLU-QD-DONE line"
	ld_qd_after "$2" "$_qdone" "$3: DONE against the acks seen" 0
	_bad=$(dd if="$1" bs=4096 skip=$LD_QD_FIRST count=$LD_QD_BLOCKS 2>/dev/null | tr '\000' '\n' |
		awk -v done="$_qdone" -v slots=$((LD_QD_BLOCKS / LD_QD_WRITERS)) '
		/^qd / { split($2, a, "="); split($3, b, "="); split($4, c, "=")
			key = a[2] "," c[2]
			if (key in got) { print "slot " key " twice"; exit }
			got[key] = b[2] }
		END {
			n = split(done, d, ",")
			for (w = 0; w < n; w++)
				for (s = 0; s < slots; s++) {
					key = w "," s; last = d[w + 1] + 0; want = ""
					if (last >= s + 1) want = s + 1 + slots * int((last - 1 - s) / slots)
					if (got[key] "" != want "") {
						print "writer " w " slot " s ": record " (key in got ? got[key] : "none") ", due " (want == "" ? "none" : want)
						exit } } }')
	[ -z "$_bad" ] || fail "$3: qdwrite's region on the disk lost an acknowledged write: $_bad"
	_in=$(ld_qd_inflight)
	[ "${_in:-0}" -ge 8 ] || fail "$3: the guest never had 8 writes in flight (most: ${_in:-0})"
	report PASS "harness/$HARNESS_CASE/inflight_writes" "$LD_QD_WRITERS writers, up to $_in requests in flight: every slot holds its writer's last record (DONE $(echo "$_qdone" | cut -c1-60)...)"
}

ld_last_ack() { rec_last_ack "$LD_SERIAL"; }

ld_vmm_alive() { kill -0 "$(cat /tmp/$LD.pid)" 2>/dev/null; }

ld_fail() { # ld_fail REASON: with the guest's and the VMM's last lines
	grep -a -v 'KVMLU-REC-ACK' "$LD_SERIAL" | tail -n 15 | tr -d '\r' | sed 's/^/guest| /'
	echo "last ack: $(ld_last_ack)"
	tail -n 8 "/tmp/$LD.vmm" | sed 's/^/vmm| /'
	ld_vmm_alive && vm_stuck_report "$(cat /tmp/$LD.pid)"
	fail "$1"
}

ld_wait_ack() { # ld_wait_ack N SECONDS WHAT: an ack >= N
	_until=$(deadline_in "$2")
	while before "$_until"; do
		[ "$(ld_last_ack)" -ge "$1" ] && return 0
		grep -aqs 'KVMLU-RECORDS-ERROR' "$LD_SERIAL" &&
			ld_fail "$3: the guest's writer failed: $(grep -a 'KVMLU-RECORDS-ERROR' "$LD_SERIAL" | head -n 1 | tr -d '\r')"
		ld_vmm_alive || ld_fail "$3: kvmlu-vmm exited"
		usleep 200000
	done
	ld_fail "$3: no ack >= $1 within $2 s (last $(ld_last_ack))"
}

ld_check_sequence() { # ld_check_sequence FIRST WHAT: this serial's acks are FIRST, FIRST+1, ...
	_bad=$(ld_acks | awk -v f="$1" '$1 != f + NR - 1 { print "ack " $1 " where " f + NR - 1 " was due"; exit }')
	[ -z "$_bad" ] || ld_fail "$2: $_bad (the writer restarted or a line was lost)"
}

ld_status_disk() { # the disk as `status` reports it: requests, errors
	_s=$(vm_ctl $LD status)
	echo "$_s" | grep -q '"device_error":null' ||
		ld_fail "$1: virtio-blk reports a device error: $_s"
	harness_log "$1: status disks: $(echo "$_s" | sed -n 's/.*\("disks":\[[^]]*\]\).*/\1/p')"
}

ld_upgrade() { # ld_upgrade I
	_what="live upgrade $1/$LD_UPGRADES"
	_before=$(ld_last_ack)
	_qd=$(ld_qd_last)
	_r=$($VM_CTL -t 180 "/run/$LD.sock" '{"cmd":"upgrade","args":{"timeout_ms":90000}}')
	echo "$_r" | grep -q '"ok": *true' || ld_fail "$_what refused: $_r"
	echo "$_r" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' >"/tmp/$LD.pid"
	_bo=$(echo "$_r" | sed -n 's/.*"blackout_ns": *\([0-9]*\).*/\1/p' | ns_ms)
	ld_wait_ack $((_before + LD_MORE)) 300 "$_what"
	ld_qd_wait "$_qd" 300 "$_what"
	ld_check_sequence 1 "$_what"
	ld_status_disk "$_what"
	harness_log "$_what: new VMM pid $(cat /tmp/$LD.pid), blackout $_bo ms, acks $_before -> $(ld_last_ack)"
	report PASS "harness/$HARNESS_CASE/upgrade$1" "blackout $_bo ms, acks $_before -> $(ld_last_ack)"
}

ld_disk() { # the host's virtio disk, or nothing
	for _b in /sys/block/vd*; do
		[ -e "$_b" ] && { echo "/dev/${_b##*/}"; return; }
	done
}

ld_stop_block() { # the disk's last 4 KiB block, where KVMLU-STOP goes
	if [ -b "$1" ]; then
		echo $(($(blockdev --getsize64 "$1") / 4096 - 1))
	else
		echo $(($(wc -c <"$1") / 4096 - 1))
	fi
}

ld_need_tools() {
	for f in /kvmlu/linux/vmlinuz /kvmlu/linux/initramfs.cpio.gz; do
		[ -e "$f" ] || skip "$f missing (tests/guest/linux/fetch-kernel.sh, build-initramfs.sh)"
	done
	for f in /sbin/mke2fs /sbin/e2fsck /sbin/debugfs; do
		[ -x "$f" ] || skip "$f missing (e2fsprogs on the machine that built the initramfs)"
	done
}

# ld_finish DISK FIRST_ACK MIN_ACK WHAT QD_MIN: stop the writers, let the
# guest end, judge the disk. FIRST_ACK: the first ack due on this stage's
# serial; MIN_ACK: the highest ack an earlier stage saw; QD_MIN: qdwrite's
# acks seen last (this stage's, or the earlier stage's).
ld_finish() {
	_disk=$1
	ld_check_sequence "$2" "$4"
	_last=$(ld_last_ack)
	[ "$_last" -ge "$3" ] || ld_fail "$4: last ack $_last below $3, seen before"
	harness_log "$4: acks $2..$_last on this serial; asking the guest to stop"
	printf 'KVMLU-STOP' | dd of="$_disk" bs=4096 seek="$(ld_stop_block "$_disk")" conv=notrunc 2>/dev/null ||
		fail "could not write the stop mark to $_disk"
	_until=$(deadline_in 120)
	while ! grep -aq 'KVMLU-RECORDS-DONE' "$LD_SERIAL" && before "$_until"; do
		ld_vmm_alive || break
		usleep 200000
	done
	_done=$(grep -a -o 'KVMLU-RECORDS-DONE n=[0-9]*' "$LD_SERIAL" | sed 's/.*n=//')
	[ -n "$_done" ] || ld_fail "$4: the guest did not stop its writer within 120 s"
	_until=$(deadline_in 60)
	while ld_vmm_alive && before "$_until"; do
		usleep 200000
	done
	ld_vmm_alive && ld_fail "$4: the VM did not end after the guest's reboot"
	ld_qd_check "$_disk" "$5" "$4"
	harness_log "$4: the guest wrote up to record $_done, unmounted and rebooted; VMM: $(tail -n 1 /tmp/$LD.vmm)"
	_last=$(ld_last_ack)
	[ "$_done" = "$_last" ] || ld_fail "$4: the writer stopped at $_done, its last ack was $_last"

	/sbin/e2fsck -fn "$_disk" >/tmp/$LD.fsck 2>&1
	_rc=$?
	sed 's/^/fsck| /' /tmp/$LD.fsck
	[ $_rc = 0 ] || fail "e2fsck -fn $_disk exited $_rc: $(tail -n 1 /tmp/$LD.fsck)"
	report PASS "harness/$HARNESS_CASE/fsck_clean" "e2fsck -fn exit 0: $(tail -n 1 /tmp/$LD.fsck)"

	/sbin/debugfs -R 'cat /records' "$_disk" >/tmp/$LD.records 2>/tmp/$LD.debugfs ||
		fail "debugfs could not read /records: $(cat /tmp/$LD.debugfs)"
	_bad=$(awk '$0 != "rec " NR { print "line " NR " is \"" $0 "\""; exit }' /tmp/$LD.records)
	_m=$(wc -l </tmp/$LD.records)
	harness_log "disk: /records has $_m lines, $(head -n 1 /tmp/$LD.records) .. $(tail -n 1 /tmp/$LD.records)"
	[ -z "$_bad" ] || fail "/records on the disk is not rec 1..N in order: $_bad"
	[ "$_m" -ge "$_last" ] || fail "/records on the disk ends at rec $_m, but the guest saw rec $_last acknowledged"
	[ "$_m" = "$_done" ] || fail "/records on the disk ends at rec $_m, the guest wrote $_done"
	report PASS "harness/$HARNESS_CASE/records" "rec 1..$_m on the disk in order; last ack $_last"
}

ld_preflight() { # the agent's preflight passes the VM on its disk DISK
	ag_config
	ag_start
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build an initramfs for the dry run"
	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$(ag_next_cmdline)" --dry-run >/tmp/dry.out 2>&1
	_rc=$?
	sed 's/^/dry-run| /' /tmp/dry.out
	rm -f /tmp/next-initrd.cpio
	kill "$(cat /tmp/agent.pid)" 2>/dev/null
	[ $_rc = 0 ] || ld_fail "the agent's preflight refused the VM on $1 (exit $_rc): $(grep -i 'disk' /tmp/dry.out | head -n 1)"
	report PASS "harness/$HARNESS_CASE/preflight" "a dry run of kvmlu host-update accepts the VM on $1"
}

stage1() {
	vm_need_binaries
	ld_need_tools
	disk=$(ld_disk)
	if [ -z "$disk" ]; then
		disk=/tmp/$LD.disk.raw
		truncate -s 64M "$disk"
		harness_log "no virtio disk in this host (kernel without CONFIG_VIRTIO_BLK?): $disk in tmpfs, upgrades only"
	fi
	/sbin/mke2fs -q -F -t ext4 -L kvmlu-records "$disk" $LD_FS || fail "mke2fs on $disk failed"
	dd if=/dev/zero of="$disk" bs=4096 seek="$(ld_stop_block "$disk")" count=1 conv=notrunc 2>/dev/null
	dd if=/dev/zero of="$disk" bs=4096 seek=$LD_QD_FIRST count=$LD_QD_BLOCKS conv=notrunc 2>/dev/null
	sync
	harness_log "disk $disk: $(/sbin/dumpe2fs -h "$disk" 2>/dev/null | grep -E '^(Block count|Filesystem features)' | tr -s ' ' | tr '\n' ';')"

	rm -f "/run/$LD.sock"
	# One vCPU: with two, this guest's boot hung in 4 of 17 runs on the
	# QEMU host's emulator, its vCPU 0 spinning for another CPU while the
	# host's own CPU took no interrupts (tests/harness/README.md). Guests
	# on two vCPUs: linux_guest_survives_upgrade_and_kexec and the TCP case.
	$VM_BIN run --name $LD --memory 256M --cpus 1 --virtio-transport mmio \
		--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
		--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=5 kvmlu.records=/dev/vda kvmlu.qd=$LD_QD_FIRST,$LD_QD_BLOCKS,$LD_QD_WRITERS" \
		--disk "$disk,id=records" \
		--serial "$LD_SERIAL" --control "/run/$LD.sock" >"/tmp/$LD.vmm" 2>&1 &
	echo $! >"/tmp/$LD.pid"
	ld_wait_ack 1 900 "boot"
	grep -aE 'virtio|vda|KVMLU-GUEST-DISKS|KVMLU-RECORDS-START|EXT4-fs' "$LD_SERIAL" | tr -d '\r' | sed 's/^/guest| /'
	_sectors=$(grep -a -o 'KVMLU-GUEST-DISKS modules=ok vda=[0-9]*' "$LD_SERIAL" | sed 's/.*vda=//')
	[ -n "$_sectors" ] || ld_fail "the guest did not report /dev/vda with its modules loaded"
	_want=$(($(ld_stop_block "$disk") + 1))
	[ "$_sectors" = $((_want * 8)) ] ||
		ld_fail "the guest's vda has $_sectors sectors, the disk $((_want * 8))"
	ld_wait_ack $LD_MORE 300 "boot"
	grep -aq 'KVMLU-QD-START' "$LD_SERIAL" || ld_fail "boot: qdwrite did not start"
	ld_qd_wait "$(awk -v n=$LD_QD_WRITERS 'BEGIN { for (i = 1; i < n; i++) printf "0,"; print 0 }')" 300 "boot"
	ld_status_disk "boot"
	report PASS "harness/$HARNESS_CASE/boot" "guest sees vda ($_sectors sectors) and writes: ack $(ld_last_ack)"

	i=1
	while [ $i -le $LD_UPGRADES ]; do
		ld_upgrade $i
		i=$((i + 1))
	done

	case $disk in
	/tmp/*)
		ld_finish "$disk" 1 0 "after the upgrades" "$(ld_qd_last)"
		skip "no virtio disk in the QEMU host (kernel without CONFIG_VIRTIO_BLK or BLOCK): upgrades and checks passed on a tmpfs disk, the host kexec part did not run"
		;;
	esac

	ld_preflight "$disk"
	harness_log "$LD pausing: prepare-update"
	r=$(vm_ctl $LD prepare-update)
	echo "$r" | grep -q '"ok":true' || ld_fail "prepare-update refused: $r"
	# Paused: no ack may follow the last one now.
	a=$(ld_last_ack)
	sleep 2
	[ "$(ld_last_ack)" = "$a" ] || ld_fail "acks went on after prepare-update: $a -> $(ld_last_ack)"
	ld_check_sequence 1 "before the kexec"
	harness_log "$LD prepared at ack $a: $r"
	echo "$a" >"$HARNESS_CARRY/$LD.ack"
	ld_qd_last >"$HARNESS_CARRY/$LD.qd"
	echo "$disk" >"$HARNESS_CARRY/$LD.disk"
	# A line the guest was half way through at the pause ("KVMLU-REC")
	# ends after the restore ("-ACK n=78"): the next stage's serial starts
	# with its first half, as a serial log kept across the kexec would.
	if [ -n "$(tail -c 1 "$LD_SERIAL")" ]; then
		tail -n 1 "$LD_SERIAL" >"$HARNESS_CARRY/$LD.serial-tail"
		harness_log "$LD paused mid-line: $(cat "$HARNESS_CARRY/$LD.serial-tail")"
	else
		: >"$HARNESS_CARRY/$LD.serial-tail"
	fi
	kexec_next_stage
}

stage2() {
	vm_need_binaries
	ld_need_tools
	a=$(cat "$HARNESS_CARRY/$LD.ack")
	disk=$(cat "$HARNESS_CARRY/$LD.disk")
	[ -b "$disk" ] || fail "$disk is not there after the kexec"
	cat "$HARNESS_CARRY/$LD.serial-tail" >"$LD_SERIAL"
	vm_restore $LD
	vm_wait_restored $LD || {
		cat "/tmp/$LD.vmm"
		fail "restore --session kvmlu/vm/$LD failed: $(tail -n 1 "/tmp/$LD.vmm")"
	}
	ld_wait_ack $((a + LD_MORE)) 300 "after the host kexec"
	ld_qd_wait "$(cat "$HARNESS_CARRY/$LD.qd")" 300 "after the host kexec"
	ld_status_disk "after the host kexec"
	grep -aq 'KVMLU-RECORDS-START' "$LD_SERIAL" && ld_fail "the guest's writer started again after the kexec"
	grep -aq 'KVMLU-QD-START' "$LD_SERIAL" && ld_fail "qdwrite started again after the kexec"
	report PASS "harness/$HARNESS_CASE/kexec" "acks $a -> $(ld_last_ack) on the reopened $disk"
	ld_finish "$disk" $((a + 1)) "$a" "after the host kexec" "$(ld_qd_last)"
	pass "Linux guest's fsync'd records on its virtio disk ($disk): every ack (last $(ld_last_ack)) on the disk in order across $LD_UPGRADES live upgrades and a host kexec; e2fsck -fn clean"
}
