#!/bin/bash
# `make demo`: a VM survives a host kernel kexec, shown step by step.
#
# Builds what is needed (userspace is built by make; the host kernel comes
# from the cache, or is built once, ~10 min), boots the project's kernel in
# a QEMU "host" (TCG, nested KVM inside), starts a witness VM there, shows
# its ticks, prepares it for the update (paused, RAM and state in a LUO
# session), kexecs the host into a new kernel, restores the same VM from
# the session and shows it continuing: same boot id, ticks going on, the
# memory checksum before and after, and the blackout (pause to resume)
# next to the bare kexec time, both from host-side timestamps of the
# serial console. Nothing here touches this machine's kernel.
#
# GUEST=linux (`make demo GUEST=linux`) runs a real Linux guest instead:
# Debian's stock cloud kernel with the busybox initramfs of
# tests/guest/linux (fetched and built once, then cached), whose counter
# process prints a status line every 2 s. The same phases; after the
# kexec it shows the same counter PID, the counter going on, the guest's
# uptime not reset and its clock not behind. The Linux guest also has a
# virtio disk: the QEMU host's own (a raw image, build/demo-linux/disk.raw,
# which outlives the kexec), an ext4 to which the guest appends fsync'd
# records without pause (tests/guest/linux/init, kvmlu.records=); the demo
# shows the last record acknowledged before the pause and after the
# kexec, then stops the writer and shows the disk: records 1..N in order,
# e2fsck clean. And a network: the Linux VM has a virtio-net NIC on a
# bridge in the QEMU host and runs a TCP counter server
# (tests/guest/linux/netcount.c); a second, smaller Linux VM ("peer") on
# the same bridge keeps one connection to it, 4 KiB a second, each
# answered with the server's byte count. Both VMs are kept across the
# kexec (a connection from the QEMU host itself could not be: its socket
# is in the kernel being replaced), and the demo shows the same
# connection (same port) going on, then stops it: both ends' byte counts
# equal.
#
# The whole serial log is kept in build/test-logs/demo.log (GUEST=linux:
# demo-linux.log). KVMLU_HARNESS_NO_BUILD=1 takes build/kernel as it is
# (no kernel/build.sh), as tests/harness/check.sh does.
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/harness/qemu_host.sh"
cd "$top"
guest=${GUEST:-witness}
case $guest in
witness) work=$top/build/demo log_name=demo label=witness ;;
linux) work=$top/build/demo-linux log_name=demo-linux label=Linux ;;
*) printf 'demo: GUEST=%s: unknown guest (witness or linux)\n' "$guest" >&2; exit 1 ;;
esac
logs=$top/build/test-logs
mkdir -p "$work" "$logs"
log=$logs/$log_name.log

say() { printf '%s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

for f in build/bin/kvmlu-vmm build/bin/kvmlu-ctl build/guest/witness.bin; do
	[ -e "$f" ] || die "$f missing (run make first)"
done

say "== 1. build"
if [ -f build/kernel/bzImage ] && [ -f build/kernel/info ] && [ "${KVMLU_HARNESS_NO_BUILD:-0}" = 1 ]; then
	# As in tests/harness/check.sh: the cached kernel as it is, its key unchecked.
	say "   host kernel: $(sed -n 's/^package_version=//p' build/kernel/info) (build/kernel as it is: KVMLU_HARNESS_NO_BUILD=1)"
elif [ -f build/kernel/bzImage ] && kernel/build.sh >"$logs/$log_name-kernel.log" 2>&1; then
	say "   host kernel: $(sed -n 's/^package_version=//p' build/kernel/info 2>/dev/null) (cached in $(readlink -f build/kernel))"
else
	say "   host kernel: building (first time only, about 10 minutes; log $logs/$log_name-kernel.log)"
	kernel/build.sh >"$logs/$log_name-kernel.log" 2>&1 || {
		tail -n 20 "$logs/$log_name-kernel.log"
		die "the kernel did not build"
	}
fi
if [ "$guest" = linux ]; then
	# Both keep what they made: a second demo fetches and builds nothing.
	lx_kernel=$(tests/guest/linux/fetch-kernel.sh) || die "guest kernel: $lx_kernel"
	say "   guest kernel: Debian's $(ls /var/cache/kvmlu/guest-kernel/x/boot/ 2>/dev/null | sed -n 's/^vmlinuz-//p' | sort -V | tail -n 1) (cached in /var/cache/kvmlu/guest-kernel) -> $lx_kernel"
	lx_initrd=$(tests/guest/linux/build-initramfs.sh) || die "guest initramfs: $lx_initrd"
	say "   guest initramfs: busybox-static + tests/guest/linux/init -> $lx_initrd"
fi
tests/harness/mkinitramfs.sh "$work/initramfs.cpio" build/kernel/bzImage \
	2>"$logs/$log_name-initramfs.log" || { cat "$logs/$log_name-initramfs.log"; die "initramfs failed"; }

# The demo's own script for the QEMU host, in a second cpio archive
# appended to the harness's (the kernel unpacks concatenated archives).
root=$work/extra
rm -rf "$root"
mkdir -p "$root/cases" "$root/harness/shipped"
cp tests/harness/cases/vm_common.inc "$root/harness/vm_common.sh"
cp configs/kvmlu-thp.conf "$root/harness/shipped/kvmlu-thp.conf"
if [ "$guest" = witness ]; then
cat >"$root/cases/demo.sh" <<'EOF'
. /harness/vm_common.sh
demo_ticks() { # the last N tick lines of the VM, as the guest printed them
	grep 'cpu=0 tick=' /tmp/demo.serial | tail -n "$1" | sed 's/^/DEMO:   guest| /'
}
stage1() {
	vm_need_binaries
	demo "host kernel $(uname -r) is up: /dev/kvm and /dev/liveupdate are there"
	demo_host_setup
	vm_start demo 256M 1
	demo "starting a witness VM: 1 vCPU, 256 MiB of RAM in a memfd (it fills its RAM with a pattern first)"
	vm_wait_running demo
	for i in 1 2; do vm_wait_tick demo "$(vm_last demo tick)" 60; done
	demo "the guest runs and prints a tick line per second:"
	demo_ticks 3
	demo_load_next
	demo_prepare
	vm_prepare_carry demo "$r"
	demo_kexec "tick $(cat "$HARNESS_CARRY/demo.tick")"
}
stage2() {
	demo_restore
	carry_from_disk
	t=$(cat "$HARNESS_CARRY/demo.tick")
	vm_wait_tick demo "$t" 60 || fail "no tick after $t"
	vm_wait_tick demo "$(vm_last demo tick)" 60 || true
	demo "the same VM continues (its last tick before the kexec: $t):"
	demo_ticks 3
	st=$(demo_verified)
	before=$(echo "$st" | json_str checksum_recorded)
	after=$(echo "$st" | json_str checksum_now)
	demo "boot id before $(cat "$HARNESS_CARRY/demo.boot"), after $(vm_last demo boot)"
	demo "memory checksum before the kexec: $before"
	demo "memory checksum after the kexec:  $after ($(demo_verify_how "$st"))"
	v=$($VM_CTL -t 320 /run/demo.sock '{"cmd":"guest-verify","args":{"timeout_ms":300000}}')
	demo "the guest's own check of its whole memory: $(echo "$v" | grep -q '"verified":true' && echo ok || echo FAILED)"
	[ "$before" = "$after" ] && [ "$(vm_last demo boot)" = "$(cat "$HARNESS_CARRY/demo.boot")" ] ||
		fail "the VM did not survive intact"
	pass "the VM survived the kexec"
}
EOF
else
mkdir -p "$root/kvmlu/linux"
cp "$lx_kernel" "$root/kvmlu/linux/vmlinuz"
cp "$lx_initrd" "$root/kvmlu/linux/initramfs.cpio.gz"
cp "$(dirname "$lx_initrd")/netcount" "$root/kvmlu/linux/netcount"
cat >"$root/cases/demo.sh" <<'EOF'
. /harness/vm_common.sh
LX_SERIAL=/tmp/demo.serial
# The QEMU host's virtio disk for the guest (-drive below), by its serial:
# the carry disk is a virtio disk too, and PCI order is not theirs to pick.
LX_DISK=$(disk_by_serial kvmlu-records) || LX_DISK=/dev/no-records-disk
lx_ack() { # the guest's last acknowledged record (0: none yet)
	_a=$(grep -a -o 'KVMLU-REC-ACK n=[0-9]*' "$LX_SERIAL" 2>/dev/null | tail -n 1 | sed 's/.*n=//')
	echo "${_a:-0}"
}
lx_wait_ack() { # lx_wait_ack N SECONDS: an ack >= N
	_i=0
	while [ $_i -lt "$2" ]; do
		[ "$(lx_ack)" -ge "$1" ] && return 0
		kill -0 "$(cat /tmp/demo.pid)" 2>/dev/null || return 1
		sleep 1
		_i=$((_i + 1))
	done
	return 1
}
lx_fsck_clean() { /sbin/e2fsck -fn $LX_DISK >/dev/null 2>&1; }
# e2fsprogs come into every harness initramfs with the .files of
# tests/harness/cases/linux_guest_disk_keeps_acked_records.
lx_disk_args() { # the VM's --disk and its writer, when the host has a disk and mke2fs
	[ -b $LX_DISK ] && [ -x /sbin/mke2fs ] && [ -x /sbin/debugfs ] || return 0
	/sbin/mke2fs -q -F -t ext4 -L demo-records $LX_DISK 60M >/dev/null 2>&1 || return 0
	echo "--disk $LX_DISK,id=records"
}
lx_lines() { # lx_lines PATTERN: the guest's console lines matching it, without CRs
	grep -a "$1" "$LX_SERIAL" 2>/dev/null | tr -d '\r'
}
lx_count() { # grep -c prints 0 and fails when nothing matches
	_c=$(grep -ac 'KVMLU-GUEST-STATUS' "$LX_SERIAL" 2>/dev/null)
	echo "${_c:-0}"
}
lx_field() { # lx_field FIELD: FIELD of the last status line
	lx_lines KVMLU-GUEST-STATUS | tail -n 1 | sed -n "s/.* $1=\([^ ]*\).*/\1/p"
}
lx_wait_status() { # lx_wait_status COUNT SECONDS: at least COUNT status lines
	_i=0
	while [ $_i -lt "$2" ]; do
		[ "$(lx_count)" -ge "$1" ] && return 0
		kill -0 "$(cat /tmp/demo.pid)" 2>/dev/null || return 1
		sleep 1
		_i=$((_i + 1))
	done
	return 1
}
demo_console() { # demo_console N: the guest's last N status lines, as it printed them
	lx_lines KVMLU-GUEST-STATUS | tail -n "$1" | sed 's/^/DEMO:   guest| /'
}
# The network: bridge br-demo with this host on 10.77.0.1, the demo VM
# (10.77.0.2) serving netcount on 5000, the peer VM (10.77.0.3) its client.
NET_BR=br-demo PEER_SERIAL=/tmp/peer.serial
net_ok() { [ -e /dev/net/tun ] && [ -x /kvmlu/linux/netcount ]; }
net_bridge() {
	brctl addbr $NET_BR && ip addr add 10.77.0.1/24 dev $NET_BR &&
		ip link set $NET_BR up
}
net_tag() { # net_tag FILE TAG: lines with that tag, without CRs
	grep -a -o "$2 .*" "$1" 2>/dev/null | tr -d '\r'
}
net_field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" | head -n 1; }
net_cli() { net_tag $PEER_SERIAL KVMLU-NET-CLI | tail -n 1 | net_field "$1"; }
net_round() { _r=$(net_cli round); echo "${_r:-0}"; }
net_wait_round() { # net_wait_round N SECONDS: the peer's client at round >= N
	_i=0
	while [ $_i -lt "$2" ]; do
		[ "$(net_round)" -ge "$1" ] && return 0
		grep -aq 'KVMLU-NET-CLI-ERROR' $PEER_SERIAL && return 1
		sleep 1
		_i=$((_i + 1))
	done
	return 1
}
net_show() { # the peer's last two rounds and the server's line about them
	net_tag $PEER_SERIAL KVMLU-NET-CLI | tail -n 2 | sed 's/^/DEMO:   peer | /'
	net_tag "$LX_SERIAL" KVMLU-NET-SRV | grep -F " peer=10.77.0.3:$(net_cli lport) " | tail -n 1 |
		sed 's/^/DEMO:   guest| /'
}
stage1() {
	vm_need_binaries
	demo "host kernel $(uname -r) is up: /dev/kvm and /dev/liveupdate are there"
	demo_host_setup
	rm -f /run/demo.sock /run/peer.sock
	disk=$(lx_disk_args)
	rec=
	[ -n "$disk" ] && rec="kvmlu.records=/dev/vda"
	net= netargs=
	if net_ok && net_bridge; then
		net=yes
		netargs="--net tap=demo0,mac=52:54:00:77:00:02,bridge=$NET_BR"
		rec="$rec kvmlu.ip=10.77.0.2/24 kvmlu.netsrv=5000"
	fi
	$VM_BIN run --name demo --memory 256M --cpus 1 \
		--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
		--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=2 $rec" $disk $netargs \
		--serial "$LX_SERIAL" --control /run/demo.sock >/tmp/demo.vmm 2>&1 &
	echo $! >/tmp/demo.pid
	demo "starting a Linux VM: Debian's stock kernel + a busybox initramfs, 1 vCPU, 256 MiB of RAM in a memfd (it boots in a minute or so)"
	if [ -n "$disk" ]; then
		demo "its disk: this host's $LX_DISK (a file on the machine outside QEMU, so it outlives the kexec), an ext4 made just now; the guest appends a numbered record and fsyncs it, again and again"
	else
		demo "no disk: this host has no $LX_DISK or no mke2fs"
	fi
	if [ -n "$net" ]; then
		$VM_BIN run --name peer --memory 256M --cpus 1 \
			--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
			--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=60 kvmlu.ip=10.77.0.3/24 kvmlu.netcli=10.77.0.2:5000:7001" \
			--net tap=peer0,mac=52:54:00:77:00:03,bridge=$NET_BR \
			--serial $PEER_SERIAL --control /run/peer.sock >/tmp/peer.vmm 2>&1 &
		echo $! >/tmp/peer.pid
		demo "its network: a virtio-net NIC (tap demo0 on bridge $NET_BR, 10.77.0.2) and a TCP counter server on port 5000; a second Linux VM, peer (10.77.0.3, same bridge), connects to it once and sends 4 KiB a second, each answered with the server's byte count"
	else
		demo "no network: this host has no /dev/net/tun or no bridge"
	fi
	lx_wait_status 3 900 || {
		tail -n 5 /tmp/demo.vmm "$LX_SERIAL"
		fail "the Linux guest printed no three status lines within 900 s"
	}
	demo "the guest's console: kernel banner, userspace marker, its counter process, a status line every 2 s:"
	lx_lines 'Linux version' | head -n 1 | sed 's/\(Linux version [^ ]*\).*/\1 .../; s/^/DEMO:   guest| /'
	lx_lines KVMLU-LINUX-GUEST-UP | head -n 1 | sed 's/^/DEMO:   guest| /'
	lx_lines KVMLU-COUNTER-STARTED | head -n 1 | sed 's/^/DEMO:   guest| /'
	demo_console 2
	if [ -n "$disk" ]; then
		lx_wait_ack 5 300 || fail "the guest's disk writer acknowledged no 5 records within 300 s"
		lx_lines 'KVMLU-GUEST-DISKS' | head -n 1 | sed 's/^/DEMO:   guest| /'
		demo "records acknowledged (written and fsync'd) so far: $(lx_ack)"
	fi
	if [ -n "$net" ]; then
		net_wait_round 3 600 || fail "the peer's TCP client made no 3 rounds within 600 s: $(tail -n 3 $PEER_SERIAL)"
		demo "the TCP connection peer 10.77.0.3:$(net_cli lport) -> demo 10.77.0.2:5000 (peer's client, then the demo guest's server):"
		net_show
		# Known before the load: the next stage makes the bridge before
		# it restores the VMs.
		: >"$HARNESS_CARRY/demo.bridge"
	fi
	demo_load_next
	if [ -n "$net" ]; then
		# The peer too goes into a LUO session (silently: the demo's
		# times are the demo VM's).
		p=$(vm_ctl peer prepare-update)
		echo "$p" | grep -q '"ok":true' || fail "prepare-update of the peer refused: $p"
		echo "$(net_cli lport) $(net_round) $(net_cli sent)" >"$HARNESS_CARRY/demo.net"
		demo "the peer VM is prepared too (paused, in its own LUO session) at round $(net_round), $(net_cli sent) bytes sent and counted"
	fi
	demo_prepare
	# Paused now: the last status line stays the last one until the restore.
	pid=$(lx_field pid) cnt=$(lx_field counter) up=$(lx_field uptime) clk=$(lx_field clock)
	echo "$pid $cnt $up $clk" >"$HARNESS_CARRY/demo.status"
	[ -n "$disk" ] && echo "$(lx_ack)" >"$HARNESS_CARRY/demo.ack"
	demo_kexec "counter=$cnt (pid $pid)${disk:+, record $(lx_ack)}"
}
stage2() {
	# The taps are made again on the bridge: it must exist first.
	[ -f "$HARNESS_CARRY/demo.bridge" ] && { net_bridge || fail "could not make bridge $NET_BR again"; }
	demo_restore
	carry_from_disk
	if [ -f "$HARNESS_CARRY/demo.net" ]; then
		vm_restore peer
		vm_wait_restored peer || fail "restore of the peer failed: $(tail -n 1 /tmp/peer.vmm)"
		demo "the peer VM restored too, both taps made again on the new kernel's $NET_BR"
	fi
	read -r pid cnt up clk <"$HARNESS_CARRY/demo.status"
	lx_wait_status 2 120 || fail "no two status lines within 120 s of the restore"
	demo "the same Linux guest continues (its last status line before the kexec: counter=$cnt uptime=$up):"
	demo_console 2
	pid2=$(lx_field pid) cnt2=$(lx_field counter) up2=$(lx_field uptime) clk2=$(lx_field clock)
	ok=yes
	check() { # check WHAT COND...: print WHAT with ok/FAILED; any FAILED fails the demo
		_what=$1
		shift
		if "$@"; then demo "$_what: ok"; else demo "$_what: FAILED"; ok=no; fi
	}
	check "counter process: pid $pid before, pid $pid2 after (same process, alive=$(lx_field alive))" \
		[ "$pid2" = "$pid" -a "$(lx_field alive)" = yes ]
	check "counter: $cnt before, $cnt2 after (it went on counting)" [ "${cnt2:-0}" -gt "$cnt" ]
	check "guest uptime: $up s before, $up2 s after (not reset)" \
		awk -v a="$up" -v b="$up2" 'BEGIN { exit !(b > a) }'
	check "guest clock: $clk before, $clk2 after (not backwards)" [ "${clk2:-0}" -ge "$clk" ]
	st=$(demo_verified)
	before=$(echo "$st" | json_str checksum_recorded)
	after=$(echo "$st" | json_str checksum_now)
	demo "memory checksum before the kexec: $before"
	demo "memory checksum after the kexec:  $after ($(demo_verify_how "$st"))"
	[ -n "$before" ] && [ "$before" = "$after" ] || ok=no
	if [ -f "$HARNESS_CARRY/demo.net" ]; then
		read -r lport nr nsent <"$HARNESS_CARRY/demo.net"
		# TCP retransmits what the kexec lost on its own backed-off timer.
		net_wait_round $((nr + 3)) 300 || true
		demo "the same TCP connection after the kexec (no reconnect):"
		net_show
		srv=$(net_tag "$LX_SERIAL" KVMLU-NET-SRV | grep -F " peer=10.77.0.3:$lport " | tail -n 1)
		check "TCP: peer port $lport before, $(net_cli lport) after; round $nr before, $(net_round) now; server's connection $(echo "$srv" | net_field conn) of $(echo "$srv" | net_field accepted) accepted" \
			[ "$(net_cli lport)" = "$lport" -a "$(net_round)" -gt "$nr" -a "$(echo "$srv" | net_field accepted)" = 1 ]
		# Stop the client from here: it ends its side, both ends print totals.
		/kvmlu/linux/netcount stop 10.77.0.3 7001 2>/dev/null
		_i=0
		while ! grep -aq 'KVMLU-NET-SRV-END' "$LX_SERIAL" && [ $_i -lt 120 ]; do
			sleep 1
			_i=$((_i + 1))
		done
		d=$(net_tag $PEER_SERIAL KVMLU-NET-CLI-DONE | tail -n 1)
		e=$(net_tag "$LX_SERIAL" KVMLU-NET-SRV-END | grep -F " peer=10.77.0.3:$lport " | tail -n 1)
		nsent2=$(echo "$d" | net_field sent) nrx2=$(echo "$d" | net_field rx)
		check "TCP byte counts after stopping the client: peer sent ${nsent2:-?} ($nsent before the kexec), demo received $(echo "$e" | net_field rx); demo sent $(echo "$e" | net_field tx), peer received ${nrx2:-?}" \
			[ -n "$nsent2" -a "$nsent2" = "$(echo "$e" | net_field rx)" -a "$nrx2" = "$(echo "$e" | net_field tx)" -a "$(echo "$e" | net_field bad)" = -1 ]
	fi
	if [ -f "$HARNESS_CARRY/demo.ack" ]; then
		a=$(cat "$HARNESS_CARRY/demo.ack")
		lx_wait_ack $((a + 5)) 120 || true
		check "disk records: $a acknowledged before the kexec, $(lx_ack) now (the same writer went on)" \
			[ "$(lx_ack)" -gt "$a" ]
		# Stop the writer (a mark past the file system's end): it unmounts
		# and reboots, which ends the VM; then read the disk here.
		printf KVMLU-STOP | dd of=$LX_DISK bs=4096 seek=$(($(blockdev --getsize64 $LX_DISK) / 4096 - 1)) conv=notrunc 2>/dev/null
		_i=0
		while kill -0 "$(cat /tmp/demo.pid)" 2>/dev/null && [ $_i -lt 120 ]; do
			sleep 1
			_i=$((_i + 1))
		done
		last=$(lx_ack)
		m=$(/sbin/debugfs -R 'cat /records' $LX_DISK 2>/dev/null | awk '$0 != "rec " NR { exit 1 } END { print NR }')
		check "the guest stopped its writer at record $last and shut down; the disk holds records 1..$m, in order" \
			[ -n "$m" -a "$m" = "$last" ]
		check "e2fsck -fn of the disk: clean" lx_fsck_clean
	fi
	[ "$ok" = yes ] || fail "the Linux guest did not survive intact"
	pass "the Linux guest survived the kexec: counter pid $pid2 kept counting ($cnt -> $cnt2)${m:+; its disk holds its records 1..$m}${nsent2:+; its TCP connection carried $nsent2 bytes, counted alike on both ends}"
}
EOF
fi
# vm_prepare_carry: like vm_prepare, from a reply already received; and
# the steps both guests' demos share.
cat >>"$root/harness/vm_common.sh" <<'EOF'
demo() { echo "DEMO: $*"; }
demo_prepare() { # prepare-update the VM "demo"; the reply in $r
	echo "DEMO-MARK prepare"
	r=$(vm_ctl demo prepare-update)
	echo "$r" | grep -q '"ok":true' || fail "prepare-update refused: $r"
	# prepare-update hashes and preserves RAM while the guest runs, then
	# pauses: the pause is this long before the reply.
	echo "DEMO-MARK prepared"
	echo "DEMO-MARK paused_ms $(echo "$r" | json_ms prepare_paused_ns)"
}
demo_host_setup() { # what the README's install does to the host: configs/kvmlu-thp.conf
	harness_tmpfiles /harness/shipped/kvmlu-thp.conf
	demo "host set up as the README installs it: shmem_enabled=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/shmem_enabled) (configs/kvmlu-thp.conf): guest RAM in 2 MiB folios"
}
demo_load_next() { # load the next kernel while the VM still runs, as kvmlu-agent does in preflight
	demo "loading the next kernel now, while the VM runs (kexec -s -l), so the pause holds no load"
	vm_kexec_load_next
	demo "next kernel loaded"
}
demo_kexec() { # demo_kexec WHERE: say where the VM paused and what is kept, kexec
	demo "prepare-update: VM paused after $1; RAM and state ($(echo "$r" | json_num state_bytes) bytes) are in LUO session $(echo "$r" | json_str session)"
	demo "memory checksum at pause (xxh3-128): $(echo "$r" | json_str checksum)"
	# What the demo learned at the pause is for its own checks after the
	# kexec; the loaded initramfs is sealed, so it goes by the carry disk.
	carry_to_disk
	demo "now: kexec into a new kernel (the kvmlu-vmm process holding the session dies with the old kernel)"
	kexec_loaded_stage
}
demo_restore() { # in the new kernel: restore the VM "demo" from its session
	vm_need_binaries
	echo "DEMO-MARK userspace"
	demo "new kernel up; restoring: kvmlu-vmm restore --session kvmlu/vm/demo"
	vm_restore_stamped demo "DEMO-MARK resumed"
	vm_wait_restored demo || { cat /tmp/demo.vmm; fail "restore failed: $(tail -n 1 /tmp/demo.vmm)"; }
}
demo_verified() { # update-status of "demo" once its RAM is verified (lazily or not)
	demo_st=$(vm_wait_verified demo)
	echo "$demo_st"
}
demo_verify_how() { # demo_verify_how STATUS: how the RAM after the kexec was verified
	if [ "$(echo "$1" | json_str verify_mode)" = lazy ]; then
		echo "the guest ran first; each 2 MiB chunk was verified before its first touch, all $(echo "$1" | json_ms to_verified_ns) ms after the restore began"
	else
		echo "verified before the guest ran again"
	fi
}
vm_prepare_carry() { # vm_prepare_carry N REPLY
	echo "$2" | json_str checksum >"$HARNESS_CARRY/$1.checksum"
	vm_last "$1" boot >"$HARNESS_CARRY/$1.boot"
	vm_last "$1" tick >"$HARNESS_CARRY/$1.tick"
	vm_last "$1" uptime_ms >"$HARNESS_CARRY/$1.uptime"
}
EOF
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >>"$work/initramfs.cpio"

say "== 2. boot the QEMU host (TCG; the $label VM runs on its nested KVM, which is slow: a few minutes)"
start=${EPOCHREALTIME/./}
show() { # stamp each serial line; print the demo's lines as they come
	local line now t
	while IFS= read -r line; do
		line=${line%$'\r'}
		now=${EPOCHREALTIME/./}
		t=$(( (now - start) / 1000 ))
		printf '[%4d.%03d] %s\n' $((t / 1000)) $((t % 1000)) "$line" >>"$log"
		case $line in
		*"DEMO-MARK "*) echo "${line##*DEMO-MARK } $t" >>"$work/marks" ;;
		*"kexec -e: stage"*) echo "kexec $t" >>"$work/marks"; say "   [$((t / 1000)).$((t % 1000 / 100))s] kexec -e" ;;
		*"DEMO: "*) say "   [$((t / 1000)).$((t % 1000 / 100))s] ${line#*DEMO: }" ;;
		*"KVMLU-HARNESS: RESULT "*) say "   ${line#*KVMLU-HARNESS: }" ;;
		*"Kernel panic"*) say "   $line" ;;
		esac
	done
}
: >"$log"
: >"$work/marks"
cmdline="console=ttyS0 kho=on liveupdate=on panic=-1 $QEMU_HOST_TSC_APPEND kvmlu.case=demo kvmlu.stage=1"
limit=900
if [ "$guest" = linux ]; then
	# As in the harness's Linux cases (run-case.sh): a loaded TCG host can
	# miss the IO-APIC timer check; and a Linux guest boots slower than a witness.
	cmdline="$cmdline no_timer_check"
	limit=1500
fi
# The carry disk (tests/harness/guest/lib.sh: carry_to_disk): what stage 1
# learns after it loaded the next kernel, for stage 2's checks.
rm -f "$work/carry.raw"
truncate -s 1M "$work/carry.raw"
drive=()
if [ "$guest" = linux ]; then
	# The guest's disk: the QEMU host's virtio disk, a file out here.
	rm -f "$work/disk.raw"
	truncate -s 64M "$work/disk.raw"
	drive=(-drive "file=$work/disk.raw,if=none,format=raw,id=records"
		-device virtio-blk-pci,drive=records,serial=kvmlu-records)
fi
set +e
timeout -k 5 "$limit" "$QEMU_HOST_BIN" -accel "$QEMU_HOST_ACCEL" -cpu "$QEMU_HOST_CPU" -m 2G -smp "$QEMU_HOST_SMP" \
	-nographic -nodefaults -serial stdio -no-reboot \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-kernel build/kernel/bzImage -initrd "$work/initramfs.cpio" -append "$cmdline" "${drive[@]}" \
	-drive "file=$work/carry.raw,if=none,format=raw,id=carry" -device virtio-blk-pci,drive=carry,serial=kvmlu-carry \
	</dev/null 2>&1 | show
rc=${PIPESTATUS[0]}
set -e

mk() { sed -n "s/^$1 //p" "$work/marks" | head -n 1; }
say "== 3. result"
if [ "$rc" != 1 ]; then
	say "   the demo failed (QEMU exit $rc); serial log: $log"
	tail -n 25 "$log" | sed 's/^/   | /'
	exit 1
fi
s=$(mk prepare) d=$(mk prepared) k=$(mk kexec) u=$(mk userspace) r=$(mk resumed)
pm=$(mk paused_ms | cut -d' ' -f1)
pm=${pm%%.*}
case $pm in '' | *[!0-9]*) pm="" ;; esac
if [ -n "$s" ] && [ -n "$d" ] && [ -n "$pm" ] && [ -n "$k" ] && [ -n "$u" ] && [ -n "$r" ]; then
	p=$((d - pm)) # the moment the vCPUs paused
	secs() { printf '%d.%02d' $(($1 / 1000)) $(($1 % 1000 / 10)); } # ms -> "S.CC"
	say "   before the pause, with the guest running: hash RAM, preserve it: $(secs $((p - s))) s"
	say "   blackout of the VM (pause -> running again): $(secs $((r - p))) s"
	say "     of which kexec -e -> new kernel's userspace: $(secs $((u - k))) s,"
	say "     paused part of prepare (last dirty chunks, state), the demo's notes to the carry disk: $(secs $((k - p))) s,"
	say "     restore (retrieve, restore state; RAM verified before the run or, lazily, as the guest touches it): $(secs $((r - u))) s"
	say "   (host-side times of serial lines; QEMU TCG with nested KVM is far slower than hardware)"
fi
say "   full serial log: $log"
exit
}
