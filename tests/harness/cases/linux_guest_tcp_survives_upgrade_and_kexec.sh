# Harness case: TCP connections through kvmlu-vmm's virtio-net, with the
# stock Debian guest, stay open across live upgrades and a host kexec,
# carry data afterwards without a reconnect, and both ends count the same
# bytes.
#
# The network: a bridge in the QEMU host (10.77.0.1/24 on it) and two
# Linux VMs, each with one `--net tap=...,bridge=...` NIC and a fixed MAC:
# tcpsrv (10.77.0.2) runs netcount's server (tests/guest/linux/netcount.c),
# tcpcli (10.77.0.3) netcount's client, connected to it once at boot. A
# client sends a 4 KiB chunk a second whose bytes are a function of their
# offset in the stream, and waits for the server's answer, its count of
# bytes received on that connection, which must equal the client's count
# sent. Stopped, a client shuts its side; the server answers the end of
# the stream with its totals, the client prints its own.
#
# Which connection spans what, and why two VMs: a host kexec replaces the
# QEMU host's kernel, and a TCP socket of a process there (its sequence
# numbers, its buffers) is state of that kernel; nothing hands it to the
# next one. So a connection with its host end in the QEMU host can span
# live upgrades (the host kernel stays), never a host kexec. A
# connection whose two ends are both in guests is guest RAM on both
# sides, and kvmlu preserves both VMs: that one can span the kexec.
#   - host connection: a netcount client in the QEMU host to tcpsrv,
#     across a live upgrade of tcpsrv; stopped before the kexec.
#   - guest connection: tcpcli to tcpsrv, across a live upgrade of each
#     VM and then the host kexec (both VMs prepared, the kexec, the bridge
#     made again, both restored: their taps are made again on it).
# tcpsrv's driver acks the device's offloads (checksum, TSO); tcpcli's NIC
# has offloads=off, so its driver acks none: a guest without them crosses
# every step too.
# Judged by values: the client's local port and the server's connection
# number and accept count stay the same (no reconnect: a new connection
# would be a new accept and a new port), rounds go on after each step,
# every answer equals the bytes sent, the server saw no byte out of
# place (bad=-1), and at the end the client's sent == the server's rx and
# the client's rx == the server's tx.
HARNESS_MEM=2G
HARNESS_TIMEOUT=2400

. /harness/vm_common.sh

BR=br-tcp
HOST_IP=10.77.0.1
SRV=tcpsrv SRV_IP=10.77.0.2 SRV_MAC=52:54:00:77:00:02
CLI=tcpcli CLI_IP=10.77.0.3 CLI_MAC=52:54:00:77:00:03
PORT=5000 CTL=7001
NETCOUNT=/kvmlu/linux/netcount
HOSTCLI=/tmp/hostcli.out
MORE=4 # rounds to see after each step before the next

tc_lines() { # tc_lines FILE TAG: the lines with that tag, without CRs
	serial_lines "$1" | grep -a -o "$2 .*" | tr -d '\r'
}

tc_field() { # tc_field KEY < LINE: the value of KEY=
	sed -n "s/.* $1=\([^ ]*\).*/\1/p" | head -n 1
}

tc_cli_last() { # tc_cli_last FILE KEY: KEY of the client's last round
	tc_lines "$1" KVMLU-NET-CLI | tail -n 1 | tc_field "$2"
}

tc_round() { # tc_round FILE: the client's last round, 0 before the first
	_r=$(tc_cli_last "$1" round)
	echo "${_r:-0}"
}

tc_srv_last() { # tc_srv_last PEER: the server's last line about PEER (IP:PORT)
	tc_lines "/tmp/$SRV.serial" KVMLU-NET-SRV | grep -F " peer=$1 " | tail -n 1
}

# virtio-net feature bits: CSUM 0, GUEST_CSUM 1, GUEST_TSO4 7, HOST_TSO4 11.
TC_OFFLOAD_BITS="0 1 7 11"

tc_feature() { # tc_feature NAME BIT: that bit of what the guest's driver acked
	tc_lines "/tmp/$1.serial" KVMLU-GUEST-NET | tc_field features | cut -c$(($2 + 1))
}

tc_alive() { kill -0 "$(cat "/tmp/$1.pid")" 2>/dev/null; }

tc_fail() { # tc_fail REASON: with the last lines of each guest, the VMMs and the host client
	for _v in $SRV $CLI; do
		grep -a -v 'KVMLU-NET-SRV conn' "/tmp/$_v.serial" 2>/dev/null | tail -n 12 | tr -d '\r' | sed "s/^/$_v| /"
		tc_lines "/tmp/$_v.serial" KVMLU-NET-SRV | tail -n 2 | sed "s/^/$_v| /"
		tail -n 5 "/tmp/$_v.vmm" 2>/dev/null | sed "s/^/$_v vmm| /"
	done
	tail -n 3 "$HOSTCLI" 2>/dev/null | sed 's/^/host client| /'
	fail "$1"
}

tc_check_errors() { # tc_check_errors WHAT: no netcount reported an error, both VMMs alive
	for _f in "/tmp/$SRV.serial" "/tmp/$CLI.serial" "$HOSTCLI"; do
		_e=$(grep -a -o 'KVMLU-NET-[A-Z]*-ERROR.*' "$_f" 2>/dev/null | head -n 1 | tr -d '\r')
		[ -z "$_e" ] || tc_fail "$1: $_e"
		_e=$(grep -a -o 'KVMLU-GUEST-NET-ERROR.*' "$_f" 2>/dev/null | head -n 1 | tr -d '\r')
		[ -z "$_e" ] || tc_fail "$1: $_e"
	done
	for _v in $SRV $CLI; do
		# (a VM not started yet has no pid file)
		[ ! -f "/tmp/$_v.pid" ] || tc_alive $_v || tc_fail "$1: kvmlu-vmm of $_v exited"
	done
}

tc_wait() { # tc_wait SECONDS WHAT COMMAND...: until COMMAND succeeds
	_s=$1 _w=$2
	shift 2
	_until=$(deadline_in "$_s")
	while ! "$@"; do
		tc_check_errors "$_w"
		before "$_until" || tc_fail "$_w: not within $_s s"
		usleep 500000
	done
}

tc_round_ge() { [ "$(tc_round "$1")" -ge "$2" ]; }
tc_has() { grep -aq "$2" "$1" 2>/dev/null; }

tc_bridge() { # the QEMU host's end of the network
	brctl addbr $BR || fail "brctl addbr $BR"
	ip addr add $HOST_IP/24 dev $BR || fail "ip addr add $HOST_IP/24 dev $BR"
	ip link set $BR up || fail "ip link set $BR up"
}

tc_start() { # tc_start NAME IP MAC TAP EXTRA-APPEND [,NET-OPTIONS]
	rm -f "/run/$1.sock"
	$VM_BIN run --name "$1" --memory 256M --cpus 1 \
		--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
		--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=30 kvmlu.ip=$2/24 $5" \
		--net "tap=$4,mac=$3,bridge=$BR$6" \
		--serial "/tmp/$1.serial" --control "/run/$1.sock" >"/tmp/$1.vmm" 2>&1 &
	echo $! >"/tmp/$1.pid"
}

tc_nic() { # tc_nic NAME: the VM's NIC counters from status
	vm_ctl "$1" status | sed -n 's/.*"nets":\[\({[^]]*}\)\].*/\1/p'
}

tc_upgrade() { # tc_upgrade NAME: a live upgrade of that VM; its blackout (ms) in $bo
	_r=$($VM_CTL -t 180 "/run/$1.sock" '{"cmd":"upgrade","args":{"timeout_ms":90000}}')
	echo "$_r" | grep -q '"ok": *true' || tc_fail "live upgrade of $1 refused: $_r"
	_p=$(echo "$_r" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
	[ -n "$_p" ] && echo "$_p" >"/tmp/$1.pid"
	bo=$(echo "$_r" | sed -n 's/.*"blackout_ns": *\([0-9]*\).*/\1/p' | ns_ms)
}

# tc_same_conn SERIAL PEER LPORT CONN ACCEPTED WHAT: still the one connection
tc_same_conn() {
	_c=$(tc_lines "$1" KVMLU-NET-CLI-CONNECTED)
	[ -z "$_c" ] || [ "$(echo "$_c" | wc -l)" = 1 ] || tc_fail "$6: the client connected again: $_c"
	[ "$(tc_cli_last "$1" lport)" = "$3" ] || tc_fail "$6: the client's local port is $(tc_cli_last "$1" lport), was $3"
	_l=$(tc_srv_last "$2:$3")
	[ -n "$_l" ] || tc_fail "$6: the server has no line about $2:$3"
	[ "$(echo "$_l" | tc_field conn)" = "$4" ] || tc_fail "$6: the server calls $2:$3 connection $(echo "$_l" | tc_field conn), was $4: $_l"
	[ "$(echo "$_l" | tc_field accepted)" = "$5" ] || tc_fail "$6: the server accepted $(echo "$_l" | tc_field accepted) connections, $5 before: $_l"
	[ "$(echo "$_l" | tc_field bad)" = -1 ] || tc_fail "$6: the server saw a wrong byte in the stream from $2:$3: $_l"
}

# tc_totals CLIENT-OUT PEER WHAT: after the client's DONE and the server's
# END for PEER, both ends' counts equal; the client's in $tot_sent, $tot_rx
tc_totals() {
	_d=$(tc_lines "$1" KVMLU-NET-CLI-DONE | tail -n 1)
	_e=$(tc_lines "/tmp/$SRV.serial" KVMLU-NET-SRV-END | grep -F " peer=$2 " | tail -n 1)
	[ -n "$_d" ] && [ -n "$_e" ] || tc_fail "$3: client '$_d', server '$_e'"
	harness_log "$3: client: $_d"
	harness_log "$3: server: $_e"
	_sent=$(echo "$_d" | tc_field sent) _crx=$(echo "$_d" | tc_field rx)
	_srx=$(echo "$_e" | tc_field rx) _stx=$(echo "$_e" | tc_field tx)
	[ "$_sent" = "$_srx" ] || tc_fail "$3: the client sent $_sent bytes, the server received $_srx"
	[ "$_crx" = "$_stx" ] || tc_fail "$3: the server sent $_stx bytes, the client received $_crx"
	[ "$(echo "$_e" | tc_field bad)" = -1 ] || tc_fail "$3: the server saw a wrong byte: $_e"
	[ "$_sent" -gt 0 ] || tc_fail "$3: no bytes"
	tot_sent=$_sent tot_rx=$_crx
}

tc_need() {
	vm_need_binaries
	[ -e /dev/net/tun ] || skip "no /dev/net/tun: the host kernel lacks CONFIG_TUN"
	for f in /kvmlu/linux/vmlinuz /kvmlu/linux/initramfs.cpio.gz $NETCOUNT; do
		[ -e "$f" ] || skip "$f missing (tests/guest/linux/fetch-kernel.sh, build-initramfs.sh)"
	done
}

stage1() {
	tc_need
	tc_bridge
	# One after the other: two guests booting at once on the nested KVM
	# met the emulator's boot fault (#PF 0x10, the first VM's vCPU 0, both
	# attempts of a clean-clone run), one at a time did not.
	tc_start $SRV $SRV_IP $SRV_MAC ${SRV}0 "kvmlu.netsrv=$PORT"
	harness_log "Linux VM booting on $BR: $SRV ($SRV_IP, server on $PORT)"
	tc_wait 1200 "boot: the server listening" tc_has "/tmp/$SRV.serial" KVMLU-NET-SRV-LISTEN
	tc_start $CLI $CLI_IP $CLI_MAC ${CLI}0 "kvmlu.netcli=$SRV_IP:$PORT:$CTL" ,offloads=off
	harness_log "Linux VM booting on $BR: $CLI ($CLI_IP, client)"
	tc_wait 600 "boot: the guest client's rounds" tc_round_ge "/tmp/$CLI.serial" 3
	for v in $SRV $CLI; do
		grep -aE 'virtio_net|KVMLU-GUEST-NET|KVMLU-GUEST-DISKS' "/tmp/$v.serial" | tr -d '\r' | sed "s/^/$v| /"
	done
	m=$(tc_lines "/tmp/$SRV.serial" KVMLU-GUEST-NET | tc_field mac)
	[ "$m" = $SRV_MAC ] || tc_fail "$SRV's eth0 has MAC '$m', --net gave $SRV_MAC"
	m=$(tc_lines "/tmp/$CLI.serial" KVMLU-GUEST-NET | tc_field mac)
	[ "$m" = $CLI_MAC ] || tc_fail "$CLI's eth0 has MAC '$m', --net gave $CLI_MAC"
	# The server's driver acks the offloads; the client's NIC does not
	# offer them (offloads=off), so its driver acks none: both kinds of
	# device cross each step.
	for b in $TC_OFFLOAD_BITS; do
		[ "$(tc_feature $SRV "$b")" = 1 ] || tc_fail "$SRV's driver did not ack feature bit $b: $(tc_lines "/tmp/$SRV.serial" KVMLU-GUEST-NET | tc_field features)"
		[ "$(tc_feature $CLI "$b")" = 0 ] || tc_fail "$CLI's driver acked feature bit $b of a NIC with offloads=off"
	done
	glport=$(tc_cli_last "/tmp/$CLI.serial" lport)
	gconn=$(tc_srv_last "$CLI_IP:$glport" | tc_field conn)
	[ -n "$gconn" ] || tc_fail "the server has no line about $CLI_IP:$glport"
	harness_log "guest connection: $CLI_IP:$glport -> $SRV_IP:$PORT, server's connection $gconn"
	report PASS "harness/$HARNESS_CASE/boot" "both guests up with virtio-net (MACs as given; $SRV acked the offloads, $CLI has none); $CLI_IP:$glport -> $SRV_IP:$PORT at round $(tc_round "/tmp/$CLI.serial")"

	# The host connection, from the QEMU host over the bridge and tcpsrv's tap.
	$NETCOUNT client $SRV_IP $PORT 0 1000 >$HOSTCLI 2>&1 &
	echo $! >/tmp/hostcli.pid
	tc_wait 300 "host client" tc_round_ge $HOSTCLI $MORE
	hlport=$(tc_cli_last $HOSTCLI lport)
	hconn=$(tc_srv_last "$HOST_IP:$hlport" | tc_field conn)
	[ -n "$hconn" ] || tc_fail "the server has no line about $HOST_IP:$hlport"
	acc=$(tc_srv_last "$HOST_IP:$hlport" | tc_field accepted)
	[ "$acc" = 2 ] || tc_fail "the server accepted $acc connections, 2 expected (the guest's, the host's)"
	harness_log "host connection: $HOST_IP:$hlport -> $SRV_IP:$PORT, server's connection $hconn"

	# Live upgrade of the server's VM: both connections go on.
	hr=$(tc_round $HOSTCLI) hsent=$(tc_cli_last $HOSTCLI sent)
	gr=$(tc_round "/tmp/$CLI.serial")
	tc_upgrade $SRV
	tc_wait 300 "after the upgrade of $SRV: host client" tc_round_ge $HOSTCLI $((hr + MORE))
	tc_wait 300 "after the upgrade of $SRV: guest client" tc_round_ge "/tmp/$CLI.serial" $((gr + MORE))
	tc_same_conn $HOSTCLI $HOST_IP "$hlport" "$hconn" 2 "after the upgrade of $SRV (host connection)"
	tc_same_conn "/tmp/$CLI.serial" $CLI_IP "$glport" "$gconn" 2 "after the upgrade of $SRV (guest connection)"
	harness_log "upgrade of $SRV (blackout $bo ms): host client round $hr -> $(tc_round $HOSTCLI), guest client round $gr -> $(tc_round "/tmp/$CLI.serial"); $SRV NIC: $(tc_nic $SRV)"

	# The host connection ends here: its host end cannot outlive the kexec.
	kill -USR1 "$(cat /tmp/hostcli.pid)"
	tc_wait 120 "host client stop" tc_has $HOSTCLI KVMLU-NET-CLI-DONE
	tc_wait 120 "server's end of the host connection" tc_has "/tmp/$SRV.serial" "KVMLU-NET-SRV-END conn=$hconn "
	tc_totals $HOSTCLI "$HOST_IP:$hlport" "host connection"
	[ "$tot_sent" -gt "$hsent" ] || tc_fail "host connection: $tot_sent bytes sent in all, $hsent before the upgrade"
	report PASS "harness/$HARNESS_CASE/host_conn_upgrade" "$HOST_IP:$hlport -> $SRV_IP:$PORT across the live upgrade of $SRV (blackout $bo ms), no reconnect: $hsent bytes before, $tot_sent in all; server rx $tot_sent = client sent, server tx $tot_rx = client rx"

	# Live upgrade of the client's VM.
	gr=$(tc_round "/tmp/$CLI.serial")
	tc_upgrade $CLI
	tc_wait 300 "after the upgrade of $CLI" tc_round_ge "/tmp/$CLI.serial" $((gr + MORE))
	tc_same_conn "/tmp/$CLI.serial" $CLI_IP "$glport" "$gconn" 2 "after the upgrade of $CLI"
	report PASS "harness/$HARNESS_CASE/guest_conn_upgrades" "$CLI_IP:$glport -> $SRV_IP:$PORT across a live upgrade of each VM, round $(tc_round "/tmp/$CLI.serial"), $(tc_cli_last "/tmp/$CLI.serial" sent) bytes answered"

	# Both VMs into LUO sessions, then the kexec.
	for v in $CLI $SRV; do
		harness_log "$v pausing: prepare-update"
		r=$(vm_ctl $v prepare-update)
		echo "$r" | grep -q '"ok":true' || tc_fail "prepare-update of $v refused: $r"
		harness_log "$v prepared: $(echo "$r" | sed 's/,"checksum_.*//')"
	done
	gr=$(tc_round "/tmp/$CLI.serial") gsent=$(tc_cli_last "/tmp/$CLI.serial" sent)
	sleep 2
	[ "$(tc_round "/tmp/$CLI.serial")" = "$gr" ] || tc_fail "rounds went on after prepare-update: $gr -> $(tc_round "/tmp/$CLI.serial")"
	harness_log "guest connection at the kexec: round $gr, $gsent bytes sent and answered"
	echo "$glport $gconn $gr $gsent" >"$HARNESS_CARRY/tcp.conn"
	vm_kexec_next_stage
}

stage2() {
	tc_need
	read -r glport gconn gr gsent <"$HARNESS_CARRY/tcp.conn"
	[ -e /sys/class/net/$BR ] && fail "$BR exists after the kexec before this stage made it"
	tc_bridge
	for v in $SRV $CLI; do
		: >"/tmp/$v.serial"
		vm_restore $v
	done
	for v in $SRV $CLI; do
		vm_wait_restored $v || { cat "/tmp/$v.vmm"; tc_fail "restore of $v failed: $(tail -n 1 "/tmp/$v.vmm")"; }
	done
	# The first frames after the restore are TCP's retransmissions, on its
	# backed-off timer: give it minutes.
	tc_wait 600 "after the host kexec" tc_round_ge "/tmp/$CLI.serial" $((gr + MORE))
	# The client's round counter goes on (a restarted client would count
	# from 1). The first line after the restore may be cut: round gr+1
	# or, if its start went to the old serial, gr+2.
	first=$(tc_lines "/tmp/$CLI.serial" KVMLU-NET-CLI | head -n 1 | tc_field round)
	[ "${first:-0}" -gt "$gr" ] && [ "$first" -le $((gr + 2)) ] ||
		tc_fail "the first round after the kexec is '$first', round $((gr + 1)) was due"
	tc_same_conn "/tmp/$CLI.serial" $CLI_IP "$glport" "$gconn" 2 "after the host kexec"
	for v in $SRV $CLI; do
		st=$(vm_wait_verified $v)
		echo "$st" | grep -q '"memory_verified":true' || tc_fail "$v: memory not verified: $st"
		harness_log "$v after the kexec: NIC $(tc_nic $v)"
	done
	report PASS "harness/$HARNESS_CASE/kexec" "$CLI_IP:$glport -> $SRV_IP:$PORT, server connection $gconn, 2 accepted: round $gr -> $(tc_round "/tmp/$CLI.serial") after the host kexec"

	# Stop the guest client from the QEMU host; both ends print their totals.
	$NETCOUNT stop $CLI_IP $CTL || tc_fail "netcount stop $CLI_IP $CTL failed"
	tc_wait 300 "guest client stop" tc_has "/tmp/$CLI.serial" KVMLU-NET-CLI-DONE
	tc_wait 300 "server's end of the guest connection" tc_has "/tmp/$SRV.serial" "KVMLU-NET-SRV-END conn=$gconn "
	tc_totals "/tmp/$CLI.serial" "$CLI_IP:$glport" "guest connection"
	[ "$tot_sent" -gt "$gsent" ] || tc_fail "guest connection: $tot_sent bytes sent in all, $gsent before the kexec"
	report PASS "harness/$HARNESS_CASE/counts" "client sent $tot_sent = server received $tot_sent, server sent $tot_rx = client received $tot_rx, no byte out of place"
	pass "one TCP connection ($CLI_IP:$glport -> $SRV_IP:$PORT, guest to guest through virtio-net) across a live upgrade of each VM and a host kexec: $gsent bytes before the kexec, $tot_sent in all, equal on both ends; the host's connection across the live upgrade likewise"
}
