# Harness case: a stock Linux guest keeps running across a VMM live
# upgrade and then a host kexec. Its initramfs (tests/guest/linux/init)
# runs one counter process writing into a tmpfs file and prints
#   KVMLU-GUEST-STATUS pid=P alive=yes counter=N uptime=S clock=EPOCH
# every 2 s. Stage 1: boot to userspace, `upgrade` (new kvmlu-vmm process,
# same RAM files): the next status line must show the same counter pid,
# a larger counter, a larger uptime and a clock not behind. Then
# prepare-update and kexec. Stage 2: `kvmlu-vmm restore --session`: the
# same checks against what stage 1 saw last (carried only as
# expectations; what survived comes through the LUO session).
HARNESS_MEM=2G
HARNESS_TIMEOUT=1200

. /harness/vm_common.sh

LX=linux
LX_SERIAL=/tmp/$LX.serial

lx_field() { # lx_field FIELD [N]: FIELD of the Nth-from-last status line (1 = last)
	grep -a 'KVMLU-GUEST-STATUS' "$LX_SERIAL" 2>/dev/null | tail -n "${2:-1}" | head -n 1 |
		sed -n "s/.* $1=\([^ ]*\).*/\1/p" | tr -d '\r'
}

lx_status_count() { # grep -c prints 0 and fails when nothing matches
	_c=$(grep -ac 'KVMLU-GUEST-STATUS' "$LX_SERIAL" 2>/dev/null)
	echo "${_c:-0}"
}

lx_wait_status() { # lx_wait_status AFTER_COUNT SECONDS: a status line beyond AFTER_COUNT
	_i=0
	while [ $_i -lt "$2" ]; do
		[ "$(lx_status_count)" -gt "$1" ] && return 0
		kill -0 "$(cat /tmp/$LX.pid)" 2>/dev/null || return 1
		sleep 1
		_i=$((_i + 1))
	done
	return 1
}

lx_dump() { # the guest's status lines so far, into the harness log
	grep -a 'KVMLU-GUEST-STATUS' "$LX_SERIAL" | tail -n 8 | sed 's/^/guest| /'
}

lx_record() { # lx_record: the last status line's fields into LX_PID LX_CNT LX_UP LX_CLK
	LX_PID=$(lx_field pid) LX_CNT=$(lx_field counter)
	LX_UP=$(lx_field uptime) LX_CLK=$(lx_field clock)
}

lx_check_continued() { # lx_check_continued WHAT PID COUNTER UPTIME CLOCK: last line goes on from these
	_pid=$(lx_field pid) _cnt=$(lx_field counter) _up=$(lx_field uptime)
	_clk=$(lx_field clock) _alive=$(lx_field alive)
	harness_log "$1: before pid=$2 counter=$3 uptime=$4 clock=$5; after pid=$_pid counter=$_cnt uptime=$_up clock=$_clk"
	[ "$_alive" = yes ] || fail "$1: counter process not alive"
	[ "$_pid" = "$2" ] || fail "$1: counter pid $_pid, was $2: the guest restarted"
	[ -n "$_cnt" ] && [ "$_cnt" -gt "$3" ] || fail "$1: counter $_cnt, was $3: it did not continue"
	awk -v a="$4" -v b="$_up" 'BEGIN { exit !(b > a) }' ||
		fail "$1: guest uptime $_up s, was $4 s: it reset or stalled"
	[ -n "$_clk" ] && [ "$_clk" -ge "$5" ] || fail "$1: guest clock $_clk, was $5: it went back"
	# Not asserted (forward jumps are the time code's business, not this
	# test's), but shown: guest seconds passed next to counter ticks (~1 s each).
	harness_log "$1: guest uptime +$(awk -v a="$4" -v b="$_up" 'BEGIN { printf "%.1f", b - a }') s, clock +$((_clk - $5)) s, counter +$((_cnt - $3))"
}

stage1() {
	vm_need_binaries
	for f in /kvmlu/linux/vmlinuz /kvmlu/linux/initramfs.cpio.gz; do
		[ -e "$f" ] || skip "$f missing (tests/guest/linux/fetch-kernel.sh, build-initramfs.sh)"
	done
	rm -f "/run/$LX.sock"
	$VM_BIN run --name $LX --memory 256M --cpus 1 \
		--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
		--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=2" \
		--serial "$LX_SERIAL" --control "/run/$LX.sock" >"/tmp/$LX.vmm" 2>&1 &
	echo $! >"/tmp/$LX.pid"
	lx_wait_status 1 900 || {
		tail -n 20 "/tmp/$LX.vmm" "$LX_SERIAL"
		fail "Linux guest printed no two status lines within 900 s"
	}
	grep -a 'KVMLU-LINUX-GUEST-UP' "$LX_SERIAL" | head -n 1
	lx_record
	n=$(lx_status_count)
	harness_log "guest up: pid=$LX_PID counter=$LX_CNT uptime=$LX_UP; upgrading"

	r=$($VM_CTL -t 180 "/run/$LX.sock" '{"cmd":"upgrade","args":{"checksum":true,"timeout_ms":90000}}')
	echo "$r" | grep -q '"ok": *true' || fail "upgrade refused: $r"
	harness_log "upgrade: $r"
	echo "$r" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' >"/tmp/$LX.pid"
	lx_wait_status "$n" 120 || fail "no guest status line within 120 s of the upgrade"
	lx_check_continued "live upgrade" "$LX_PID" "$LX_CNT" "$LX_UP" "$LX_CLK"
	report PASS "harness/$HARNESS_CASE/upgrade" "pid $LX_PID counter $LX_CNT -> $(lx_field counter)"

	lx_wait_status "$(lx_status_count)" 60 || fail "guest stalled after the upgrade"
	lx_dump
	harness_log "$LX pausing: prepare-update"
	r=$(vm_ctl $LX prepare-update)
	echo "$r" | grep -q '"ok":true' || fail "prepare-update refused: $r"
	harness_log "$LX prepared: $r"
	lx_record
	echo "$LX_PID $LX_CNT $LX_UP $LX_CLK" >"$HARNESS_CARRY/$LX.status"
	kexec_next_stage
}

stage2() {
	vm_need_binaries
	: >"$LX_SERIAL"
	vm_restore $LX
	vm_wait_restored $LX || {
		cat "/tmp/$LX.vmm"
		fail "restore --session kvmlu/vm/$LX failed: $(tail -n 1 "/tmp/$LX.vmm")"
	}
	lx_wait_status 0 120 || fail "no guest status line within 120 s of the restore"
	read -r p c u k <"$HARNESS_CARRY/$LX.status"
	lx_check_continued "host kexec" "$p" "$c" "$u" "$k"
	lx_dump
	report PASS "harness/$HARNESS_CASE/kexec" "pid $p counter $c -> $(lx_field counter)"
	pass "Linux guest survived a live upgrade and a host kexec: counter pid $p kept counting, uptime and clock went on"
}
