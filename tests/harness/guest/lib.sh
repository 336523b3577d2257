# Helpers for harness case scripts; sourced by /init inside the QEMU host
# (busybox sh). Every line meant for the host starts with "KVMLU-HARNESS: "
# on the serial console; run-case.sh reads them.
#
#   pass [msg] / fail msg / skip reason   end the case: print the verdict and
#                                         power QEMU off with its exit code
#   report PASS|FAIL|SKIP name [reason]   one extra result line (subtests)
#   kexec_next_stage [extra cmdline]      kexec -s the same kernel into the
#                                         next stage; does not return
#   kexec_load_next_stage / kexec_loaded_stage   the same in two steps
#   carry_to_disk / carry_from_disk       /carry through the carry disk
#   harness_log msg                       a timestamped progress line
#   deadline_in SECONDS / before DEADLINE a bound on waiting, in the host's
#                                         seconds, not in polls
#   $HARNESS_CASE $HARNESS_STAGE          from kvmlu.case= / kvmlu.stage=
#   $HARNESS_CARRY                        a directory copied into the next
#                                         stage's initramfs by the harness,
#                                         NOT through KHO: for expectations
#                                         only, never for what a test proves

HARNESS_CMDLINE=$(cat /proc/cmdline)
HARNESS_CASE=$(echo "$HARNESS_CMDLINE" | sed -n 's/.*kvmlu\.case=\([^ ]*\).*/\1/p')
HARNESS_STAGE=$(echo "$HARNESS_CMDLINE" | sed -n 's/.*kvmlu\.stage=\([0-9]*\).*/\1/p')
HARNESS_STAGE=${HARNESS_STAGE:-1}
HARNESS_CARRY=/carry
HARNESS_KERNEL=/boot/bzImage
export HARNESS_CASE HARNESS_STAGE HARNESS_CARRY HARNESS_KERNEL

harness_log() {
	echo "KVMLU-HARNESS: [$(cut -d' ' -f1 /proc/uptime)] $*"
}

# A bound on waiting counts the host's seconds, not polls: on a loaded
# nested host one poll can take seconds, and a loop of 4500 polls meant as
# 900 s once ran past the case's 1500 s timeout, so the case's own report
# of what hung never came.
uptime_s() {
	read -r _up _ </proc/uptime
	echo "${_up%.*}"
}
deadline_in() { echo $(($(uptime_s) + $1)); }	# deadline_in SECONDS
before() { [ "$(uptime_s)" -lt "$1" ]; }	# before DEADLINE

# isa-debug-exit at 0xf4: QEMU exits with (value << 1) | 1, so 0 -> 1 pass,
# 1 -> 3 fail, 2 -> 5 skip. A plain poweroff (exit 0) is "no verdict".
harness_exit() {
	printf "\\$(printf '%03o' "$1")" |
		dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	echo "KVMLU-HARNESS: isa-debug-exit write failed, powering off"
	poweroff -f
	sleep 60
}

pass() {
	echo "KVMLU-HARNESS: RESULT PASS ${1:-}"
	harness_exit 0
}

fail() {
	echo "KVMLU-HARNESS: RESULT FAIL ${1:-no reason given}"
	harness_exit 1
}

skip() {
	echo "KVMLU-HARNESS: RESULT SKIP ${1:-no reason given}"
	harness_exit 2
}

report() { # report PASS|FAIL|SKIP name [reason]
	echo "KVMLU-HARNESS: REPORT $1 $2${3:+ ($3)}"
}

# The next kernel needs an initramfs file, and the running one cannot hold
# itself, so it is rebuilt from the rootfs. A bind mount of / shows rootfs
# without the mounts on top (/dev keeps its console node, /tmp is empty).
harness_make_initrd() { # harness_make_initrd OUT
	mkdir -p /run/rootview
	mount --bind / /run/rootview || return 1
	(cd /run/rootview && find . | cpio -o -H newc 2>/dev/null) >"$1"
	local rc=$?
	umount /run/rootview
	return $rc
}

kexec_next_stage() { # kexec_next_stage [extra cmdline words]
	kexec_load_next_stage "$@"
	kexec_loaded_stage
}

# The two halves, for a case that loads the next kernel before a VM's
# pause (as kvmlu-agent does in preflight), so that building the
# initramfs and loading it stay out of the blackout. What the case learns
# after the load goes to the carry disk (carry_to_disk), not to /carry.
kexec_load_next_stage() { # kexec_load_next_stage [extra cmdline words]: load, /carry as it is now
	local next=$((HARNESS_STAGE + 1)) cmdline initrd=/tmp/.next-initrd.cpio _w
	cmdline=$(echo "$HARNESS_CMDLINE" | sed "s/kvmlu\.stage=[0-9]*/kvmlu.stage=$next/")
	case $cmdline in *kvmlu.stage=*) ;; *) cmdline="$cmdline kvmlu.stage=$next" ;; esac
	# A KEY=VALUE word replaces the KEY= an earlier stage added, so that
	# stage after stage the command line does not grow.
	for _w in "$@"; do
		case $_w in *=*) cmdline=$(echo "$cmdline" | sed "s/ ${_w%%=*}=[^ ]*//g") ;; esac
	done
	[ -n "${1:-}" ] && cmdline="$cmdline $*"
	harness_make_initrd "$initrd" || fail "stage $HARNESS_STAGE: could not rebuild the initramfs"
	harness_log "kexec load: stage $next, initramfs $(wc -c <"$initrd") bytes"
	kexec -s -l "$HARNESS_KERNEL" --initrd="$initrd" --command-line="$cmdline" ||
		fail "stage $HARNESS_STAGE: kexec -s -l $HARNESS_KERNEL failed"
	rm -f "$initrd"
}

kexec_loaded_stage() { # kexec -e into what kexec_load_next_stage loaded; does not return
	sync
	harness_log "kexec -e: stage $HARNESS_STAGE -> $((HARNESS_STAGE + 1))"
	kexec -e
	fail "stage $HARNESS_STAGE: kexec -e returned"
}

# harness_tmpfiles FILE: a shipped tmpfiles.d(5) file applied as
# systemd-tmpfiles --create would at boot; only its "w PATH - - - - VALUE"
# lines, the one kind the project ships (anything else fails the case).
harness_tmpfiles() {
	grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$1" >/tmp/.tmpfiles || fail "$1: no lines to apply"
	while read -r _tt _tp _tm _tu _tg _ta _tv; do
		[ "$_tt" = w ] || fail "$1: a line of type $_tt, which the harness does not apply"
		echo "$_tv" >"$_tp" || fail "$1: could not write $_tv to $_tp"
		harness_log "tmpfiles $1: $_tp = $_tv"
	done </tmp/.tmpfiles
}

disk_by_serial() { # disk_by_serial SERIAL: the /dev node of the QEMU host's virtio disk with that serial
	for _ds in /sys/block/vd*; do
		[ "$(cat "$_ds/serial" 2>/dev/null)" = "$1" ] && { echo "/dev/${_ds##*/}"; return 0; }
	done
	return 1
}

# The carry disk: a virtio disk of the QEMU host with serial "kvmlu-carry"
# (a file outside QEMU, which outlives the kexec like a host's own disk).
carry_disk() { disk_by_serial kvmlu-carry; }

carry_to_disk() { # /carry (a tar archive) to the carry disk, for the next stage
	_cd=$(carry_disk) || fail "no carry disk (virtio disk with serial kvmlu-carry)"
	(cd "$HARNESS_CARRY" && tar cf - .) | dd of="$_cd" conv=fsync 2>/dev/null ||
		fail "could not write $HARNESS_CARRY to $_cd"
}

carry_from_disk() { # what the last stage wrote with carry_to_disk, into /carry
	_cd=$(carry_disk) || fail "no carry disk (virtio disk with serial kvmlu-carry)"
	mkdir -p "$HARNESS_CARRY"
	(cd "$HARNESS_CARRY" && tar xf - <"$_cd") || fail "no archive on the carry disk $_cd"
}

# serial_lines FILE: a VM's serial log up to its last newline. The line a
# vCPU is still writing may be cut short ("tick=6" of "tick=628228096",
# "n=" of "n=20"): whatever reads a number from a serial log reads it from
# complete lines only.
serial_lines() {
	[ -f "$1" ] || return 0
	head -n "$(wc -l <"$1")" "$1"
}

dmesg_has() { # dmesg_has REGEX
	dmesg | grep -q -E "$1"
}

# An upstream two-stage LUO selftest (tools/testing/selftests/liveupdate,
# built by build-peers.sh), run as its vmtest.sh init runs it: stage 1
# `-s 1` (it leaves a child holding its sessions), kexec; stage 2 `-s 2`,
# which must exit 0 and print "TEST PASSED".
luo_selftest_stage() { # luo_selftest_stage NAME
	local bin=/peer/liveupdate/$1 rc
	[ -x "$bin" ] || fail "$bin missing (build-peers.sh)"
	case $HARNESS_STAGE in
	1)
		"$bin" -s 1 || fail "$1 -s 1 exited $?"
		kexec_next_stage
		;;
	2)
		"$bin" -s 2 >/tmp/peer.out 2>&1
		rc=$?
		cat /tmp/peer.out
		[ $rc -eq 0 ] || fail "$1 -s 2 exited $rc"
		grep -q 'TEST PASSED' /tmp/peer.out || fail "$1 -s 2 printed no 'TEST PASSED'"
		pass "$1 passed both stages"
		;;
	esac
}
