# Harness case: a stock Linux guest with 2 vCPUs keeps running, on both,
# and keeps time, across several VMM live upgrades and then a host kexec.
# Its initramfs (tests/guest/linux/init) runs one counter process writing
# into a tmpfs file and prints
#   KVMLU-GUEST-STATUS pid=P alive=yes counter=N uptime=S clock=EPOCH wall=EPOCH.USEC cpus=2 online=0-1 ran=0,1
# every second. Debian's kernel finds its second vCPU in the ACPI MADT
# (vmm/acpi/); every line checked must show both CPUs listed, online,
# and each one running a pinned probe (ran=0,1).
#
# Stage 1 only sets the host up: it kexecs into stage 2 with an early TSC
# calibration LX_EARLY_PPM below the rate this boot refined, the way a
# TCG host's "Unable to calibrate against PIT" boots come out (seen:
# 2092.743 MHz early, 2096.026 refined; about 3 boots in 10). KVM takes
# its vCPUs' default TSC rate from that early figure, and a VMM that let
# it keep it gave its Linux guests a kvmclock that jumped ~20-60 s
# forward at live upgrades and kexecs (vmm/vm.c, vm_set_tsc_rate). The
# words stay on the command line, so stage 3 boots the same way.
# Stage 2: boot the guest, LX_UPGRADES `upgrade`s (new kvmlu-vmm process,
# same RAM files; the first with the memory checksum, the others plain),
# prepare-update, kexec. Stage 3: `kvmlu-vmm restore --session`.
#
# Across each step the same counter pid must go on counting, and the
# guest's uptime and wall clock must advance (never go back) by no more
# than the QEMU host's own time across the same step plus LX_MARGIN
# seconds. Both sides are read on the host: a guest status line as soon
# as it appears on the serial, the host's /proc/uptime (upgrades) or its
# wall clock (the kexec; uptime restarts with the new kernel) at that
# moment; for a step's "before" line, the host's time at the last look
# that did not find it yet, so that slow polling on a loaded machine
# makes the host's side longer, never shorter. The "after" line of a step is the LX_SETTLE-th one after the
# VM runs again, because a wrong kvmclock can show only once KVM rewrites
# the guest's clock page (seen: the first line after an upgrade right,
# the next one 43 s ahead).
HARNESS_MEM=2G
HARNESS_TIMEOUT=1200

. /harness/vm_common.sh

LX=linux
LX_SERIAL=/tmp/$LX.serial
LX_UPGRADES=5
LX_MARGIN=2
LX_SETTLE=3
LX_EARLY_PPM=1500
LX_CPUS=2

lx_line() { # lx_line N: the Nth status line (1 = first)
	serial_lines "$LX_SERIAL" | grep -a 'KVMLU-GUEST-STATUS' | sed -n "${1}p" | tr -d '\r'
}

lx_get() { # lx_get LINE FIELD: FIELD's value in that status line
	echo "$1" | sed -n "s/.* $2=\([^ ]*\).*/\1/p"
}

lx_status_count() { # grep -c prints 0 and fails when nothing matches
	_c=$(serial_lines "$LX_SERIAL" | grep -ac 'KVMLU-GUEST-STATUS')
	echo "${_c:-0}"
}

lx_wait_status() { # lx_wait_status AFTER_COUNT SECONDS: a status line beyond AFTER_COUNT
	# Polled every 0.1 s, but a loaded nested host can take seconds per
	# poll. So each poll that finds no line yet moves S_HUP_LO/S_HWALL_LO
	# (host times read before it): the line came later than those.
	# (read, not a command: no process per poll to steal the guest's time)
	_until=$(deadline_in "$2")
	while before "$_until"; do
		read -r _lo_up _ </proc/uptime
		[ "$(lx_status_count)" -gt "$1" ] && return 0
		S_HUP_LO=$_lo_up
		kill -0 "$(cat /tmp/$LX.pid)" 2>/dev/null || return 1
		usleep 100000
	done
	return 1
}

lx_dump() { # the guest's status lines so far, into the harness log
	grep -a 'KVMLU-GUEST-STATUS' "$LX_SERIAL" | tail -n "${1:-8}" | sed 's/^/guest| /'
}

host_uptime() { cut -d' ' -f1 /proc/uptime; }

host_wall() { # CLOCK_REALTIME with microseconds (busybox date has no %N)
	adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d.%06d\n", s, u }'
}

lx_sample() { # lx_sample SECONDS: wait for the next status line, then read both sides
	# The host's clocks first, as soon as the line is there; then every
	# guest field from that one line (reading them takes a while under
	# TCG, and more lines may arrive meanwhile).
	# S_H*_LO: host times the line is known to be later than;
	# S_HUP/S_HWALL: read once it is there, so later than the line. A
	# step's host time goes from the "before" line's _LO to the "after"
	# line's reading: never shorter than the guest's own, however slow
	# the polling.
	_ref_wall=$(host_wall)
	read -r _ref_up _ </proc/uptime
	S_HUP_LO=$_ref_up
	_n=$(lx_status_count)
	lx_wait_status "$_n" "$1" || return 1
	S_HUP=$(host_uptime) S_HWALL=$(host_wall)
	# Both clocks run at one rate within a boot (no NTP here).
	S_HWALL_LO=$(awk -v w="$_ref_wall" -v a="$_ref_up" -v b="$S_HUP_LO" 'BEGIN { printf "%.6f", w + b - a }')
	_l=$(lx_line $((_n + 1)))
	S_PID=$(lx_get "$_l" pid) S_CNT=$(lx_get "$_l" counter) S_ALIVE=$(lx_get "$_l" alive)
	S_UP=$(lx_get "$_l" uptime) S_WALL=$(lx_get "$_l" wall)
	S_CPUS=$(lx_get "$_l" cpus) S_ONLINE=$(lx_get "$_l" online) S_RAN=$(lx_get "$_l" ran)
	# An older guest init prints whole seconds only (clock=).
	[ -n "$S_WALL" ] || S_WALL=$(lx_get "$_l" clock)
}

lx_sample_after() { # lx_sample_after WHAT: the LX_SETTLE-th line after the VM runs again
	lx_sample 120 || {
		tail -n 10 "/tmp/$LX.vmm"
		fail "$1: no guest status line within 120 s"
	}
	_k=1
	while [ $_k -lt $LX_SETTLE ]; do
		lx_sample 60 || fail "$1: guest stalled ($(lx_status_count) status lines)"
		_k=$((_k + 1))
	done
}

lx_fail() { # lx_fail REASON: fail with the guest's last status lines in the log
	lx_dump 8
	fail "$1"
}

lx_check_cpus() { # lx_check_cpus WHAT: the sample just taken shows every vCPU at work
	[ "$S_CPUS" = $LX_CPUS ] && [ "$S_ONLINE" = "0-$((LX_CPUS - 1))" ] && [ "$S_RAN" = 0,1 ] ||
		lx_fail "$1: guest reports cpus=$S_CPUS online=$S_ONLINE ran=$S_RAN, want $LX_CPUS, 0-$((LX_CPUS - 1)), 0,1"
}

# lx_check_step WHAT HOST_ELAPSED SLACK PID COUNTER UPTIME WALL: the sample
# just taken (S_*) goes on from these. SLACK: extra seconds the host's own
# reading may be short by (its wall clock from the RTC after a kexec).
lx_check_step() {
	_d_up=$(awk -v a="$6" -v b="$S_UP" 'BEGIN { printf "%.2f", b - a }')
	_d_wall=$(awk -v a="$7" -v b="$S_WALL" 'BEGIN { printf "%.2f", b - a }')
	_max=$(awk -v h="$2" -v m="$LX_MARGIN" -v s="$3" 'BEGIN { printf "%.2f", h + m + s }')
	harness_log "$1: host +$2 s; guest uptime $6 -> $S_UP (+$_d_up s), wall $7 -> $S_WALL (+$_d_wall s), counter $5 -> $S_CNT; limit +$_max s; cpus=$S_CPUS online=$S_ONLINE ran=$S_RAN"
	lx_check_cpus "$1"
	[ "$S_ALIVE" = yes ] || lx_fail "$1: counter process not alive"
	[ "$S_PID" = "$4" ] || lx_fail "$1: counter pid $S_PID, was $4: the guest restarted"
	[ -n "$S_CNT" ] && [ "$S_CNT" -gt "$5" ] || lx_fail "$1: counter $S_CNT, was $5: it did not continue"
	awk -v d="$_d_up" 'BEGIN { exit !(d > 0) }' ||
		lx_fail "$1: guest uptime $6 -> $S_UP s: it went back or stood still"
	awk -v d="$_d_up" -v m="$_max" 'BEGIN { exit !(d <= m) }' ||
		lx_fail "$1: guest uptime jumped: +$_d_up s while the host's time moved $2 s (limit $_max s)"
	# clock= has whole seconds: one more second either way.
	_wslack=0
	case $S_WALL in *.*) ;; *) _wslack=1 ;; esac
	awk -v d="$_d_wall" -v s="$_wslack" 'BEGIN { exit !(d >= -s) }' ||
		lx_fail "$1: guest wall clock went back $_d_wall s"
	awk -v d="$_d_wall" -v m="$_max" -v s="$_wslack" 'BEGIN { exit !(d <= m + s) }' ||
		lx_fail "$1: guest wall clock jumped: +$_d_wall s while the host's time moved $2 s (limit $_max s)"
}

lx_upgrade() { # lx_upgrade I CHECKSUM: live upgrade number I, checked
	_what="live upgrade $1/$LX_UPGRADES"
	lx_sample 60 || fail "$_what: no fresh guest status line before it"
	b_hup=$S_HUP_LO b_pid=$S_PID b_cnt=$S_CNT b_up=$S_UP b_wall=$S_WALL
	_r=$($VM_CTL -t 180 "/run/$LX.sock" "{\"cmd\":\"upgrade\",\"args\":{\"checksum\":$2,\"timeout_ms\":90000}}")
	echo "$_r" | grep -q '"ok": *true' || {
		tail -n 10 "/tmp/$LX.vmm"
		fail "$_what refused: $_r"
	}
	echo "$_r" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' >"/tmp/$LX.pid"
	_bo=$(echo "$_r" | sed -n 's/.*"blackout_ns": *\([0-9]*\).*/\1/p' | ns_ms)
	harness_log "$_what: new VMM pid $(cat /tmp/$LX.pid), blackout ${_bo} ms, checksum $2"
	lx_sample_after "$_what"
	_h=$(awk -v a="$b_hup" -v b="$S_HUP" 'BEGIN { printf "%.2f", b - a }')
	lx_check_step "$_what" "$_h" 0 "$b_pid" "$b_cnt" "$b_up" "$b_wall"
	report PASS "harness/$HARNESS_CASE/upgrade$1" \
		"blackout $_bo ms: host +$_h s, guest uptime +$_d_up s, wall +$_d_wall s"
}

host_refined_khz() { # the TSC rate this boot refined, in kHz (empty until it has)
	dmesg | sed -n 's/.*tsc: Refined TSC clocksource calibration: \([0-9]*\)\.\([0-9][0-9][0-9]\) MHz.*/\1\2/p' |
		tail -n 1
}

host_wait_refined() { # the kernel refines its TSC rate a few seconds after boot
	_i=0
	while [ -z "$(host_refined_khz)" ] && [ $_i -lt 30 ]; do
		sleep 1
		_i=$((_i + 1))
	done
	[ -n "$(host_refined_khz)" ] ||
		fail "this boot refined no TSC rate within 30 s: $(dmesg | grep 'tsc:' | tail -n 3)"
}

stage1() {
	vm_need_binaries
	for f in /kvmlu/linux/vmlinuz /kvmlu/linux/initramfs.cpio.gz; do
		[ -e "$f" ] || skip "$f missing (tests/guest/linux/fetch-kernel.sh, build-initramfs.sh)"
	done
	host_wait_refined
	_khz=$(host_refined_khz)
	_early=$((_khz - _khz * LX_EARLY_PPM / 1000000))
	harness_log "host TSC refined to $_khz kHz; next boots calibrate early at $_early kHz ($LX_EARLY_PPM ppm below)"
	kexec_next_stage "tsc_early_khz=$_early"
}

stage2() {
	vm_need_binaries
	# KVM took the early rate when it started; the VM is created after
	# the refined one is known, as on a host that has been up a while.
	host_wait_refined
	harness_log "host TSC: $(dmesg | grep -E 'tsc: (Detected|Refined)' | sed 's/.*tsc: //' | tr '\n' ';')"
	rm -f "/run/$LX.sock"
	$VM_BIN run --name $LX --memory 256M --cpus $LX_CPUS \
		--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
		--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=1" \
		--serial "$LX_SERIAL" --control "/run/$LX.sock" >"/tmp/$LX.vmm" 2>&1 &
	echo $! >"/tmp/$LX.pid"
	lx_wait_status 1 900 || {
		tail -n 20 "/tmp/$LX.vmm" "$LX_SERIAL"
		fail "Linux guest printed no two status lines within 900 s"
	}
	grep -a 'KVMLU-LINUX-GUEST-UP' "$LX_SERIAL" | head -n 1
	grep -aE 'ACPI: (RSDP|XSDT|FACP|APIC|DSDT)|smpboot: Allowing|Brought up' "$LX_SERIAL" | tr -d '\r' | sed 's/^/guest| /'
	harness_log "guest up: $(grep -a 'KVMLU-GUEST-STATUS' "$LX_SERIAL" | tail -n 1)"
	lx_sample 60 || fail "guest stalled after boot"
	lx_check_cpus "boot"
	report PASS "harness/$HARNESS_CASE/boot_cpus" "cpus=$S_CPUS online=$S_ONLINE ran=$S_RAN"

	# The first with the checksum (the memory is the same), then plain ones.
	i=1
	while [ $i -le $LX_UPGRADES ]; do
		if [ $i -eq 1 ]; then lx_upgrade $i true; else lx_upgrade $i false; fi
		i=$((i + 1))
	done
	lx_dump 12

	lx_sample 60 || fail "guest stalled after the upgrades"
	harness_log "$LX pausing: prepare-update"
	r=$(vm_ctl $LX prepare-update)
	echo "$r" | grep -q '"ok":true' || fail "prepare-update refused: $r"
	harness_log "$LX prepared: $r"
	# What the last line before the pause said, and the host's wall clock
	# when it was read (expectations only; the guest survives through LUO).
	echo "$S_HWALL_LO $S_PID $S_CNT $S_UP $S_WALL" >"$HARNESS_CARRY/$LX.status"
	# The same command line (and early TSC rate) for stage 3.
	kexec_next_stage
}

stage3() {
	vm_need_binaries
	: >"$LX_SERIAL"
	vm_restore $LX
	vm_wait_restored $LX || {
		cat "/tmp/$LX.vmm"
		fail "restore --session kvmlu/vm/$LX failed: $(tail -n 1 "/tmp/$LX.vmm")"
	}
	read -r hw p c u w <"$HARNESS_CARRY/$LX.status"
	lx_sample_after "host kexec"
	_h=$(awk -v a="$hw" -v b="$S_HWALL" 'BEGIN { printf "%.2f", b - a }')
	# The new kernel set its wall clock from the RTC, whole seconds: it
	# may read up to 1 s short.
	lx_check_step "host kexec" "$_h" 1 "$p" "$c" "$u" "$w"
	lx_dump
	report PASS "harness/$HARNESS_CASE/kexec" \
		"host +$_h s, guest uptime +$_d_up s, wall +$_d_wall s, counter $c -> $S_CNT"
	pass "Linux guest on $LX_CPUS vCPUs (ran=$S_RAN after the kexec) kept running and kept time across $LX_UPGRADES live upgrades and a host kexec: counter pid $p went on, uptime and wall clock advanced by no more than the host's time + $LX_MARGIN s"
}
