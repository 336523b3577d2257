# Harness case (opt-in: HARNESS_ARCHIVE, run only when KVMLU_TEST_FILTER
# names it): step 0 of docs/libvirt-ram-in-place.md. A QEMU guest's RAM
# stays in a LUO-preserved memfd across a real kexec of the QEMU host,
# with QEMU's own x-ignore-shared migration carrying only device state,
# no kvmlu-vmm and no libvirt.
#
# QEMU is Debian's 7.2 (qemu_archive.sh appends it), -accel kvm on the
# nested KVM, pc machine, 1 vCPU, 512 MiB in
#   memory-backend-file,id=pc.ram,mem-path=/proc/self/fd/100,share=on
# on a memfd that `lvram-spike give` puts at fd 100 before it execs QEMU.
# The guest is the Linux guest of the tests (Debian's cloud kernel) with
# the virtio-pci modules, writing fsync'd records to a virtio-blk-pci disk
# as in linux_guest_disk_keeps_acked_records. The host kernel has no file
# system for disks, so /dev/vda (HARNESS_DISK) is raw: its first 64 MiB
# are the guest's disk (an ext4 of 60 MiB, the stop mark in its last
# 4 KiB), LV_EXPECT_MIB holds what stage 2 learned after the kexec load,
# LV_STATE_MIB the migration stream.
#
# Stage 1: kexec with the refined TSC rate (QEMU's -cpu host, as
# bench_upgrade). Stage 2: boot, acks; `lvram-spike take` gets the memfd
# with pidfd_getfd and preserves it (guest running); the next kernel is
# loaded; x-ignore-shared on; stop; migrate to a file; image size; quit
# QEMU; sum the memfd; kexec. Stage 3: `give --session` retrieves it (its
# sum printed), QEMU -incoming defer, x-ignore-shared over QMP,
# migrate-incoming, cont. Judged by values: the same boot id and counter
# pid, the counter and uptime went on, acks continue from the last one
# before the pause, the image is under LV_IMAGE_MAX, the sums are equal,
# and at the end the disk holds rec 1..N in order with N the last ack,
# e2fsck clean. Then the negatives of the design's step 0 on fresh
# memfds: the same stream into a QEMU without the capability fails with
# "Capability x-ignore-shared is off", into one of 256 MiB with
# "Size mismatch". Blackout: the host-side stamps of "lvram: stop" and
# "lvram: running" (and the bare kexec: "kexec -e" to "userspace stage 3").
HARNESS_MEM=4G
HARNESS_TIMEOUT=2400
HARNESS_DISK=192M
HARNESS_ARCHIVE=tests/harness/qemu_archive.sh

. /harness/vm_common.sh

QEMU=/usr/bin/qemu-system-x86_64
SPIKE=/kvmlu/bin/lvram-spike
QMP=/kvmlu/bin/qmp-call
LV_SESSION=kvmlu/vm/lv-spike
# kvmlu.lv_ram=SIZE on the command line (KVMLU_HARNESS_APPEND; the bench
# runs 512M and 2G): the guest's RAM.
LV_RAM=$(sed -n 's/.*kvmlu\.lv_ram=\([0-9]*[MG]\).*/\1/p' /proc/cmdline)
LV_RAM=${LV_RAM:-512M}
LV_FD=100
LV_DISK_MIB=64		# the guest's disk: the first MiBs of /dev/vda
LV_FS=60M		# its ext4; the stop mark in the last 4 KiB
LV_EXPECT_MIB=120
LV_STATE_MIB=128
LV_IMAGE_MAX=$((32 << 20))
LV_MORE=5
IGNORE_SHARED='{"execute":"migrate-set-capabilities","arguments":{"capabilities":[{"capability":"x-ignore-shared","state":true}]}}'

LV_APPEND="console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=5 kvmlu.records=/dev/vda"

# lv_start NAME SIZE GIVE_ARGS [QEMU ARGS]: `lvram-spike give GIVE_ARGS`
# execs QEMU on the memfd at fd LV_FD; pid in /tmp/NAME.pid (QEMU's after
# the exec), give's lines and QEMU's stderr in /tmp/NAME.log.
lv_start() {
	_n=$1 _sz=$2 _give=$3
	shift 3
	rm -f "/tmp/$_n.qmp" "/tmp/$_n.serial"
	# shellcheck disable=SC2086 # GIVE_ARGS are words
	$SPIKE give --fd $LV_FD $_give --probe-uid 65534 -- $QEMU \
		-accel kvm -cpu host -smp 1 -m "$_sz" -no-reboot \
		-object "memory-backend-file,id=pc.ram,size=$_sz,mem-path=/proc/self/fd/$LV_FD,share=on,x-use-canonical-path-for-ramblock-id=off" \
		-machine pc,memory-backend=pc.ram \
		-kernel /kvmlu/linux/vmlinuz -initrd /kvmlu/linux/initramfs-pci.cpio.gz -append "$LV_APPEND" \
		-blockdev "driver=raw,node-name=d0,offset=0,size=$((LV_DISK_MIB << 20)),file.driver=host_device,file.filename=/dev/vda" \
		-device virtio-blk-pci,drive=d0 \
		-nodefaults -no-user-config -display none -serial "file:/tmp/$_n.serial" \
		-qmp "unix:/tmp/$_n.qmp,server=on,wait=off" "$@" >"/tmp/$_n.log" 2>&1 &
	echo $! >"/tmp/$_n.pid"
}

lv_qmp() { # lv_qmp NAME JSON...
	_q=$1
	shift
	$QMP -t 60 "/tmp/$_q.qmp" "$@"
}

lv_alive() { kill -0 "$(cat "/tmp/$1.pid")" 2>/dev/null; }

lv_fail() { # lv_fail NAME REASON: with the guest's and QEMU's last lines
	grep -a -v 'KVMLU-REC-ACK' "/tmp/$1.serial" 2>/dev/null | tail -n 15 | tr -d '\r' | sed 's/^/guest| /'
	tail -n 10 "/tmp/$1.log" | sed 's/^/qemu| /'
	fail "$2"
}

lv_view() { # lv_view NAME: its serial, after the line the pause cut (stage 3)
	cat /tmp/lv.serial-tail "/tmp/$1.serial" 2>/dev/null >"/tmp/$1.view"
	echo "/tmp/$1.view"
}

lv_wait_ack() { # lv_wait_ack NAME N SECONDS WHAT: an ack >= N
	_until=$(deadline_in "$3")
	while before "$_until"; do
		[ "$(rec_last_ack "$(lv_view "$1")")" -ge "$2" ] && return 0
		grep -aqs 'KVMLU-RECORDS-ERROR' "/tmp/$1.serial" && lv_fail "$1" "$4: the guest's writer failed"
		lv_alive "$1" || lv_fail "$1" "$4: QEMU exited"
		usleep 200000
	done
	lv_fail "$1" "$4: no ack >= $2 within $3 s (last $(rec_last_ack "$(lv_view "$1")"))"
}

lv_status() { # lv_status NAME: its last complete status line
	serial_lines "$(lv_view "$1")" | grep -a 'KVMLU-GUEST-STATUS' | tail -n 1 | tr -d '\r'
}

field() { echo "$1" | sed -n "s/.* $2=\([^ ]*\).*/\1/p"; }

lv_wait_status() { # lv_wait_status NAME AFTER SECONDS: a status line other than AFTER
	_until=$(deadline_in "$3")
	while before "$_until"; do
		_s=$(lv_status "$1")
		[ -n "$_s" ] && [ "$_s" != "$2" ] && { echo "$_s"; return 0; }
		lv_alive "$1" || return 1
		usleep 500000
	done
	return 1
}

lv_migrate_wait() { # lv_migrate_wait NAME: query-migrate until it ends; prints the last reply
	_until=$(deadline_in 300)
	while before "$_until"; do
		_r=$(lv_qmp "$1" '{"execute":"query-migrate"}')
		case $_r in *'"status": "completed"'* | *'"status":"completed"'* | *failed* | *cancelled*) break ;; esac
		usleep 100000
	done
	echo "$_r"
}

lv_wait_gone() { # lv_wait_gone NAME SECONDS
	_until=$(deadline_in "$2")
	while lv_alive "$1" && before "$_until"; do usleep 200000; done
	! lv_alive "$1"
}

lv_stop_block() { echo $(((LV_DISK_MIB << 8) - 1)); }

lv_need() {
	[ -x $QEMU ] || skip "$QEMU missing (HARNESS_ARCHIVE=tests/harness/qemu_archive.sh appends it; check.sh runs this case only when KVMLU_TEST_FILTER names it)"
	for f in $SPIKE $QMP /kvmlu/linux/vmlinuz /kvmlu/linux/initramfs-pci.cpio.gz /sbin/mke2fs /sbin/e2fsck /sbin/debugfs; do
		[ -e "$f" ] || skip "$f missing"
	done
	[ -e /dev/kvm ] || fail "no /dev/kvm in the QEMU host"
	[ -e /dev/liveupdate ] || fail "no /dev/liveupdate (kernel or liveupdate=on)"
	[ -b /dev/vda ] || fail "no /dev/vda (HARNESS_DISK)"
}

stage1() {
	i=0
	while [ $i -lt 60 ] && ! dmesg | grep -q 'tsc: Refined TSC'; do sleep 1; i=$((i + 1)); done
	vm_kexec_next_stage
}

stage2() {
	lv_need
	/sbin/mke2fs -q -F -t ext4 -L lv-records /dev/vda $LV_FS || fail "mke2fs on /dev/vda failed"
	dd if=/dev/zero of=/dev/vda bs=4096 seek="$(lv_stop_block)" count=1 conv=notrunc 2>/dev/null
	sync
	lv_start q1 $LV_RAM "--new $LV_RAM"
	lv_wait_ack q1 1 900 "boot"
	grep -aE 'KVMLU-GUEST-DISKS|KVMLU-RECORDS-START' /tmp/q1.serial | tr -d '\r' | sed 's/^/guest| /'
	sed 's/^/give| /' /tmp/q1.log
	lv_wait_ack q1 $LV_MORE 300 "boot"
	s0=$(lv_wait_status q1 "" 120) || lv_fail q1 "no status line from the guest"
	report PASS "harness/$HARNESS_CASE/boot" "QEMU 7.2 on the memfd: ack $(rec_last_ack "$(lv_view q1)"), $s0"

	$SPIKE take "$(cat /tmp/q1.pid)" $LV_SESSION >/tmp/take.log 2>&1 &
	echo $! >/tmp/take.pid
	_until=$(deadline_in 300)
	while ! grep -q 'holding fd=' /tmp/take.log && before "$_until"; do
		kill -0 "$(cat /tmp/take.pid)" 2>/dev/null || break
		usleep 200000
	done
	sed 's/^/take| /' /tmp/take.log
	tfd=$(sed -n 's/.*holding fd=\([0-9]*\).*/\1/p' /tmp/take.log)
	[ -n "$tfd" ] || lv_fail q1 "lvram-spike take failed: $(tail -n 1 /tmp/take.log)"
	lv_wait_ack q1 $(($(rec_last_ack "$(lv_view q1)") + 2)) 300 "after PRESERVE_FD"

	# The next kernel loaded while the guest runs: out of the blackout.
	vm_kexec_load_next
	r=$(lv_qmp q1 "$IGNORE_SHARED") || lv_fail q1 "x-ignore-shared refused: $r"
	s1=$(lv_status q1)
	harness_log "lvram: stop"
	t_stop=$(cut -d' ' -f1 /proc/uptime)
	r=$(lv_qmp q1 '{"execute":"stop"}' \
		'{"execute":"migrate","arguments":{"uri":"exec:cat >/tmp/lv.state"}}') ||
		lv_fail q1 "stop or migrate refused: $r"
	r=$(lv_migrate_wait q1)
	echo "$r" | grep -q completed || lv_fail q1 "migration did not complete: $r"
	harness_log "lvram: migrated: $r"
	a=$(rec_last_ack "$(lv_view q1)")
	lv_qmp q1 '{"execute":"quit"}' >/dev/null 2>&1
	lv_wait_gone q1 60 || lv_fail q1 "QEMU did not quit"
	size=$(wc -c </tmp/lv.state)
	harness_log "lvram: QEMU gone; image $size bytes, last ack $a"
	dd if=/tmp/lv.state of=/dev/vda bs=1M seek=$LV_STATE_MIB conv=notrunc,fsync 2>/dev/null ||
		fail "could not write the image to /dev/vda"
	$SPIKE sum "/proc/$(cat /tmp/take.pid)/fd/$tfd" >/tmp/sum.log 2>&1 || fail "sum: $(cat /tmp/sum.log)"
	cat /tmp/sum.log
	sum=$(sed -n 's/.*sum=\([0-9a-f]*\).*/\1/p' /tmp/sum.log)
	# A line the guest was half way through at the stop ends on the next
	# stage's serial; it goes with the expectations.
	tail=
	[ -n "$(tail -c 1 /tmp/q1.serial)" ] && tail=$(tail -n 1 /tmp/q1.serial | tr -d '\r')
	printf 'ack=%s\nsize=%s\nsum=%s\nstatus=%s\nt_stop=%s\ntail=%s\nend\n' \
		"$a" "$size" "$sum" "$s1" "$t_stop" "$tail" >/tmp/expect
	dd if=/tmp/expect of=/dev/vda bs=1M seek=$LV_EXPECT_MIB conv=notrunc,fsync 2>/dev/null ||
		fail "could not write the expectations to /dev/vda"
	t_kexec=$(cut -d' ' -f1 /proc/uptime)
	echo "KVMLU-BENCH lvram_stop_to_kexec_ms=$(awk -v a="$t_stop" -v b="$t_kexec" 'BEGIN { printf "%.0f", (b - a) * 1000 }') image_bytes=$size sum_ms=$(sed -n 's/.*ms=\([0-9]*\).*/\1/p' /tmp/sum.log)"
	[ "$size" -lt $LV_IMAGE_MAX ] ||
		fail "the image is $size bytes at $LV_RAM: RAM went into it (limit $LV_IMAGE_MAX)"
	report PASS "harness/$HARNESS_CASE/image" "$size bytes for $LV_RAM of RAM with x-ignore-shared"
	kexec_loaded_stage
}

lv_expect() { sed -n "s/^$1=//p" /tmp/expect | head -n 1; }

# lv_negative NAME SIZE CAPS WANT: a throwaway QEMU on a fresh memfd loads
# the same stream and must fail with WANT in its log.
lv_negative() {
	lv_start "$1" "$2" "--new $2" -incoming defer
	if [ "$3" = cap ]; then
		lv_qmp "$1" "$IGNORE_SHARED" >/dev/null || lv_fail "$1" "$1: x-ignore-shared refused"
	fi
	lv_qmp "$1" '{"execute":"migrate-incoming","arguments":{"uri":"exec:cat /tmp/lv.state"}}' >/dev/null
	lv_wait_gone "$1" 120 || { lv_qmp "$1" '{"execute":"quit"}' >/dev/null 2>&1; lv_fail "$1" "$1: QEMU still runs 120 s after the load: want '$4'"; }
	grep -v '^give' "/tmp/$1.log" | sed 's/^/'"$1"'| /'
	grep -q "$4" "/tmp/$1.log" || lv_fail "$1" "$1: QEMU's load did not fail with '$4'"
	report PASS "harness/$HARNESS_CASE/$1" "$(grep -m 1 "$4" "/tmp/$1.log")"
}

stage3() {
	lv_need
	dd if=/dev/vda bs=1M skip=$LV_EXPECT_MIB count=1 2>/dev/null | sed '/^end$/q' >/tmp/expect
	grep -q '^end$' /tmp/expect || fail "no expectations on /dev/vda from stage 2"
	a=$(lv_expect ack) size=$(lv_expect size) sum=$(lv_expect sum) s1=$(lv_expect status)
	: >/tmp/lv.serial-tail
	[ -n "$(lv_expect tail)" ] && printf '%s' "$(lv_expect tail)" >/tmp/lv.serial-tail
	dd if=/dev/vda bs=1M skip=$LV_STATE_MIB count=$(((size >> 20) + 1)) 2>/dev/null | head -c "$size" >/tmp/lv.state
	lv_start q2 $LV_RAM "--session $LV_SESSION" -incoming defer
	r=$(lv_qmp q2 "$IGNORE_SHARED" \
		'{"execute":"migrate-incoming","arguments":{"uri":"exec:cat /tmp/lv.state"}}') ||
		lv_fail q2 "x-ignore-shared or migrate-incoming refused: $r"
	_until=$(deadline_in 300)
	st=
	while before "$_until"; do
		st=$(lv_qmp q2 '{"execute":"query-status"}' | sed -n 's/.*"status": *"\([a-z-]*\)".*/\1/p')
		[ "$st" = paused ] || [ "$st" = running ] && break
		lv_alive q2 || break
		usleep 100000
	done
	[ "$st" = paused ] || lv_fail q2 "after migrate-incoming QEMU is '$st', want paused"
	lv_qmp q2 '{"execute":"cont"}' >/dev/null || lv_fail q2 "cont refused"
	harness_log "lvram: running"
	echo "KVMLU-BENCH lvram_boot_to_running_s=$(cut -d' ' -f1 /proc/uptime)"
	sed 's/^/give| /' /tmp/q2.log
	# What QEMU's RAM fd looks like now: LUO's retrieved memfd has no name.
	harness_log "QEMU's fd $LV_FD after RETRIEVE: $(readlink "/proc/$(cat /tmp/q2.pid)/fd/$LV_FD")"

	got=$(sed -n 's/.*retrieved: sum=\([0-9a-f]*\).*/\1/p' /tmp/q2.log)
	[ -n "$got" ] && [ "$got" = "$sum" ] || lv_fail q2 "memfd sum after RETRIEVE $got, before the kexec $sum"
	report PASS "harness/$HARNESS_CASE/sum" "$sum before the kexec and after RETRIEVE_FD"

	lv_wait_ack q2 $((a + LV_MORE)) 300 "after the kexec"
	grep -aq 'KVMLU-RECORDS-START\|KVMLU-LINUX-GUEST-UP' /tmp/q2.serial && lv_fail q2 "the guest booted again"
	_bad=$(rec_acks "$(lv_view q2)" | awk -v f=$((a + 1)) '$1 != f + NR - 1 { print "ack " $1 " where " f + NR - 1 " was due"; exit }')
	[ -z "$_bad" ] || lv_fail q2 "acks after the kexec: $_bad"
	s2=$(lv_wait_status q2 "" 120) || lv_fail q2 "no status line after the kexec"
	harness_log "before: $s1"
	harness_log "after:  $s2"
	[ "$(field "$s2" boot)" = "$(field "$s1" boot)" ] && [ -n "$(field "$s1" boot)" ] ||
		lv_fail q2 "boot id $(field "$s1" boot) -> $(field "$s2" boot)"
	[ "$(field "$s2" pid)" = "$(field "$s1" pid)" ] || lv_fail q2 "counter pid $(field "$s1" pid) -> $(field "$s2" pid)"
	[ "$(field "$s2" counter)" -gt "$(field "$s1" counter)" ] || lv_fail q2 "counter did not go on"
	awk -v a="$(field "$s1" uptime)" -v b="$(field "$s2" uptime)" 'BEGIN { exit !(b > a) }' ||
		lv_fail q2 "uptime went back"
	report PASS "harness/$HARNESS_CASE/identity" "boot $(field "$s2" boot), counter pid $(field "$s2" pid) $(field "$s1" counter) -> $(field "$s2" counter), acks $a -> $(rec_last_ack "$(lv_view q2)")"

	# The end: the writer stops, the guest unmounts and reboots (QEMU
	# exits: -no-reboot), the disk is judged.
	printf 'KVMLU-STOP' | dd of=/dev/vda bs=4096 seek="$(lv_stop_block)" conv=notrunc 2>/dev/null
	lv_wait_gone q2 300 || lv_fail q2 "the guest did not stop within 300 s"
	done_n=$(grep -a -o 'KVMLU-RECORDS-DONE n=[0-9]*' /tmp/q2.serial | sed 's/.*n=//')
	last=$(rec_last_ack "$(lv_view q2)")
	[ -n "$done_n" ] && [ "$done_n" = "$last" ] || lv_fail q2 "the writer stopped at '$done_n', last ack $last"
	/sbin/e2fsck -fn /dev/vda >/tmp/fsck 2>&1 || fail "e2fsck -fn: $(tail -n 1 /tmp/fsck)"
	/sbin/debugfs -R 'cat /records' /dev/vda >/tmp/records 2>/dev/null || fail "debugfs could not read /records"
	_bad=$(awk '$0 != "rec " NR { print "line " NR " is \"" $0 "\""; exit }' /tmp/records)
	m=$(wc -l </tmp/records)
	[ -z "$_bad" ] && [ "$m" = "$last" ] || fail "/records: $m lines, last ack $last, $_bad"
	report PASS "harness/$HARNESS_CASE/records" "rec 1..$m in order, e2fsck clean, acks before the pause up to $a"

	lv_negative nocap $LV_RAM nocap "Capability x-ignore-shared is off"
	lv_negative size 256M cap "Size mismatch"
	pass "QEMU 7.2's RAM kept in a LUO memfd across a host kexec: image $size bytes, sum $sum on both sides, same boot, acks $a -> $last"
}
