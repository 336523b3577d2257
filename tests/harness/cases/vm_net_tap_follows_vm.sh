# Harness case: a witness VM with a virtio-net NIC (--net) keeps its tap,
# bridge port and MAC across a live upgrade and a host kexec. The witness
# has no network driver, so this proves the host side, by values: the
# refusals of bad --net arguments (exit status and message, no tap left
# behind) and of taps that cannot be had (held by another VM, a name
# that is a bridge); status lists the NIC with its MAC; the tap is up and a port of
# the bridge; after a live upgrade the new process holds the same
# interface (same ifindex: the fd was passed, nothing reopened) with the
# same MAC. Across the kexec the tap dies with its fd: stage 2 restores
# before the bridge exists, so the tap cannot join it and the VM is held
# with that reason; once the bridge is back, `resume` makes the tap again
# on it and the guest continues (same boot, memory checksum equal) with
# the MAC it had.
HARNESS_MEM=2G
HARNESS_TIMEOUT=900

. /harness/vm_common.sh
[ -x /kvmlu/san/kvmlu-vmm ] && VM_BIN=/kvmlu/san/kvmlu-vmm

TAP=vmtap0
BR=br-vm

# refuse WANT_RC TEXT ARGS...: kvmlu-vmm run must exit WANT_RC saying TEXT
refuse() {
	_want=$1 _text=$2
	shift 2
	$VM_BIN run --name refused --memory 32M --cpus 1 --payload $VM_WITNESS \
		--serial /tmp/refused.serial "$@" >/tmp/refused.err 2>&1
	_rc=$?
	[ $_rc = "$_want" ] || fail "run $*: exit $_rc, want $_want: $(cat /tmp/refused.err)"
	grep -qF -- "$_text" /tmp/refused.err || fail "run $*: does not say '$_text': $(cat /tmp/refused.err)"
	harness_log "refused ($_rc): $(head -n 1 /tmp/refused.err)"
}

net_field() { # net_field N KEY: KEY of the VM's first NIC in status
	vm_ctl "$1" status | sed -n 's/.*"nets":\[\(.*\)/\1/p' | json_str "$2"
}

tap_master() {
	_l=$(readlink "/sys/class/net/$TAP/master" 2>/dev/null)
	echo "${_l##*/}"
}

check_tap() { # check_tap WHEN MAC: the tap is up, on the bridge, and the NIC has MAC
	[ -e "/sys/class/net/$TAP" ] || fail "$1: no interface $TAP"
	[ "$(tap_master)" = $BR ] || fail "$1: $TAP is a port of '$(tap_master)', not $BR"
	[ $(( $(cat /sys/class/net/$TAP/flags) & 1 )) = 1 ] || fail "$1: $TAP is not up"
	[ "$(net_field vm-net tap)" = $TAP ] || fail "$1: status: $(vm_ctl vm-net status)"
	[ "$(net_field vm-net bridge)" = $BR ] || fail "$1: status bridge: $(vm_ctl vm-net status)"
	[ "$(net_field vm-net mac)" = "$2" ] || fail "$1: MAC $(net_field vm-net mac), want $2"
}

stage1() {
	vm_need_binaries
	[ -e /dev/net/tun ] || skip "no /dev/net/tun: the host kernel lacks CONFIG_TUN"
	refuse 64 "mac '01:00:5e:00:00:01': need a unicast MAC" --net tap=t0,mac=01:00:5e:00:00:01
	refuse 64 "unknown or repeated option 'vhost' (tap=NAME, mac=MAC, bridge=BR, offloads=on|off)" --net tap=t0,vhost=on
	refuse 1 "tap t0: SIOCBRADDIF to bridge nobr" --net tap=t0,bridge=nobr
	grep -q "(no such bridge)" /tmp/refused.err || fail "no hint for a missing bridge: $(cat /tmp/refused.err)"
	[ -e /sys/class/net/t0 ] && fail "a refused start left tap t0 behind"
	report PASS "harness/$HARNESS_CASE/refusals" "bad MAC, unknown option, missing bridge: refused, nothing left"

	brctl addbr $BR || fail "brctl addbr $BR"
	ip link set $BR up
	rm -f /run/vm-net.sock
	$VM_BIN run --name vm-net --memory 64M --cpus 1 --payload $VM_WITNESS \
		--serial /tmp/vm-net.serial --control /run/vm-net.sock \
		--net tap=$TAP,bridge=$BR >/tmp/vm-net.vmm 2>&1 &
	echo $! >/tmp/vm-net.pid
	vm_wait_running vm-net
	mac=$(net_field vm-net mac)
	case $mac in
	[0-9a-f][26ae]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]) ;;
	*) fail "generated MAC '$mac' is not locally administered unicast: $(vm_ctl vm-net status)" ;;
	esac
	check_tap "started" "$mac"
	# Taps that cannot be had: one another VM holds, a name that is not a tap.
	refuse 1 "tap $TAP: TUNSETIFF: Device or resource busy (another process has this tap open)" \
		--net tap=$TAP
	refuse 1 "tap $BR: TUNSETIFF: Invalid argument (an interface of that name exists and is not a single-queue tap)" \
		--net tap=$BR
	report PASS "harness/$HARNESS_CASE/taps_in_use" "a tap another VM holds and a bridge's name: refused with the reason"
	ifindex=$(cat /sys/class/net/$TAP/ifindex)
	pid=$(cat /tmp/vm-net.pid)
	harness_log "vm-net: tap $TAP ifindex $ifindex on $BR, MAC $mac"

	t=$(vm_last vm-net tick)
	r=$($VM_CTL -t 150 /run/vm-net.sock '{"cmd":"upgrade","args":{"timeout_ms":120000}}')
	echo "$r" | grep -q '"ok":true' || fail "upgrade refused: $r $(tail -n 3 /tmp/vm-net.vmm)"
	vm_wait_tick vm-net "$t" 120 || fail "no tick after the upgrade"
	newpid=$(vm_ctl vm-net status | json_num pid)
	[ "$newpid" != "$pid" ] || fail "upgrade: still pid $pid"
	check_tap "after the upgrade" "$mac"
	[ "$(cat /sys/class/net/$TAP/ifindex)" = "$ifindex" ] ||
		fail "upgrade: $TAP is ifindex $(cat /sys/class/net/$TAP/ifindex), was $ifindex: made again, not passed"
	ls -l /proc/$newpid/fd | grep -q /dev/net/tun || fail "new pid $newpid holds no /dev/net/tun fd"
	report PASS "harness/$HARNESS_CASE/upgrade" "pid $pid -> $newpid, same tap (ifindex $ifindex) on $BR, MAC $mac"
	echo "$mac" >"$HARNESS_CARRY/mac"

	vm_prepare vm-net
	vm_kexec_next_stage
}

stage2() {
	vm_need_binaries
	mac=$(cat "$HARNESS_CARRY/mac")
	[ -e /sys/class/net/$TAP ] && fail "$TAP exists after the kexec before the restore"
	# No bridge yet: the tap cannot join it, and the VM must be held, not lost.
	vm_restore vm-net
	i=0
	until vm_ctl vm-net status 2>/dev/null | grep -q '"state":"held"'; do
		kill -0 "$(cat /tmp/vm-net.pid)" 2>/dev/null || fail "restore exited: $(tail -n 3 /tmp/vm-net.vmm)"
		[ $i -lt 300 ] || fail "not held within 300 s: $(vm_ctl vm-net status 2>&1)"
		sleep 1
		i=$((i + 1))
	done
	st=$(vm_ctl vm-net status)
	echo "$st" | grep -q "tap $TAP: SIOCBRADDIF to bridge $BR" || fail "held for another reason: $st"
	grep -q 'tick=' /tmp/vm-net.serial 2>/dev/null && fail "the guest ran while held"
	harness_log "held: $st"
	brctl addbr $BR || fail "brctl addbr $BR"
	ip link set $BR up
	r=$($VM_CTL -t 300 /run/vm-net.sock '{"cmd":"resume"}')
	echo "$r" | grep -q '"state":"running"' || fail "resume once the bridge is back: $r"
	vm_check_continued vm-net
	check_tap "after the kexec" "$mac"
	pass "the tap followed the VM: passed on the upgrade, made again on $BR after the kexec (held until the bridge existed), MAC $mac throughout"
}
