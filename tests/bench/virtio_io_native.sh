#!/bin/bash
# The native half of the virtio I/O bench (tests/bench/bench_virtio_io.sh
# calls it after the QEMU harness's half; it also runs alone): where this
# machine's /dev/kvm is usable (kvmlu-test-caps kvm: opened read-write,
# KVM_GET_API_VERSION 12), the same guest as the harness case
# virtio_io_bench (Debian's cloud kernel, the test initramfs with the
# bench's archive: tests/bench/guest-bench-init as rdinit, kvmlu-loadgen,
# the virtio-pci and virtio-net modules; 256 MiB, 1 vCPU) runs its rounds
# in QEMU -accel kvm (virtio-blk-pci, virtio-net-pci on a tap) and in
# kvmlu-vmm (virtio-pci, or virtio-mmio with
# KVMLU_BENCH_VIRTIO_TRANSPORT=mmio), one after the other, on one raw disk
# file in /var/tmp (each guest its own part, through the page cache in
# both) and taps on one bridge br-bench (10.17.0.1/24), in a private
# network and mount namespace (unshare -n -m: the host's network is not
# touched; debugfs is mounted there to read KVM's exit counts of each VM,
# /sys/kernel/debug/kvm/<pid>-<fd>/, as the harness case does; kvmlu-vmm's
# `status` has no exit counters).
#
# QEMU is probed first: its guest's boot is watched for
# KVMLU_BENCH_VIRTIO_NATIVE_PROBE_SECS (30); if QEMU exits or prints an
# error (or a KVM internal error later, before its guest is up), the
# table says so with QEMU's own line and gives kvmlu-vmm's figures alone,
# with no ratio. Then kvmlu-vmm's guest.
#
# A Linux guest is slow on some hosts' /dev/kvm (a PVM host runs guest CPL 0
# code ~2000x slower than native, each exit ~110 us): the guest's boot can
# take many minutes. So the native half is short by default: one round
# (KVMLU_BENCH_VIRTIO_NATIVE_ROUNDS) of 2 s runs
# (KVMLU_BENCH_VIRTIO_NATIVE_SECS), each guest given
# KVMLU_BENCH_VIRTIO_NATIVE_BOOT_SECS (900) to come up; the workloads are
# the harness case's eight. KVMLU_BENCH_VIRTIO_NATIVE=0 skips it;
# KVMLU_BENCH_VIRTIO_NATIVE_QEMU_CPU (host, as in the harness) is QEMU's
# -cpu; KVMLU_BENCH_VIRTIO_NATIVE_APPEND: words added to both guests'
# kernel command line (to try a workaround; the table says so).
# KVMLU_BENCH_VIRTIO_REGION_MIB (32) as in the harness.
# KVMLU_BENCH_VIRTIO_GUEST_INITRD: the guest initramfs already built (by
# bench_virtio_io.sh); without it, this script builds it the same way.
# Not named bench_*.sh: `make bench` (tests/bench/run.sh) runs those, and
# bench_virtio_io.sh runs this one.
# Exit: 0 (also when skipped), 1 when a run failed.
{
set -uo pipefail
self=$(readlink -f "$0")
cd "$(dirname "$self")/../.." || exit 1
top=$PWD
me=virtio_io_native
work=$top/build/harness/bench-virtio/native
BR=br-bench

if [ "${1:-}" != --inside ]; then
# ---------------------------------------------------------------- outside
[ "${KVMLU_BENCH_VIRTIO_NATIVE:-1}" = 0 ] && { echo "native: skipped (KVMLU_BENCH_VIRTIO_NATIVE=0)"; exit 0; }
why=$(build/bin/kvmlu-test-caps kvm 2>&1) || { echo "native: SKIP: no usable /dev/kvm on this machine ($why)"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "native: SKIP: needs root (a network namespace, taps)"; exit 0; }
for b in build/bin/kvmlu-vmm build/bin/kvmlu-loadgen; do
	[ -x "$b" ] || { echo "$me: $b missing (make)"; exit 1; }
done
command -v unshare >/dev/null && command -v ip >/dev/null || { echo "native: SKIP: needs unshare and ip"; exit 0; }
[ -c /dev/net/tun ] || { echo "native: SKIP: no /dev/net/tun"; exit 0; }
mkdir -p "$work"
kernel=$(tests/guest/linux/fetch-kernel.sh) || { echo "native: SKIP: no guest kernel (tests/guest/linux/fetch-kernel.sh)"; exit 0; }
gi=${KVMLU_BENCH_VIRTIO_GUEST_INITRD:-}
if [ -z "$gi" ]; then
	# As bench_virtio_io.sh builds it.
	gi=$work/guest-initramfs.cpio.gz
	rc=0
	tests/bench/bench-guest-initramfs.sh "$gi" || rc=$?
	[ $rc = 77 ] && { echo "native: SKIP: no guest kernel modules"; exit 0; }
	[ $rc = 0 ] || exit 1
fi
log=$work/native.log
: >"$log"
secs=${KVMLU_BENCH_VIRTIO_NATIVE_SECS:-2}
rounds=${KVMLU_BENCH_VIRTIO_NATIVE_ROUNDS:-1}
region=${KVMLU_BENCH_VIRTIO_REGION_MIB:-32}
boot=${KVMLU_BENCH_VIRTIO_NATIVE_BOOT_SECS:-900}
probe=${KVMLU_BENCH_VIRTIO_NATIVE_PROBE_SECS:-30}
cpu=${KVMLU_BENCH_VIRTIO_NATIVE_QEMU_CPU:-host}
transport=${KVMLU_BENCH_VIRTIO_TRANSPORT:-pci}
extra=${KVMLU_BENCH_VIRTIO_NATIVE_APPEND:-}
case $transport in mmio | pci) ;; *) echo "$me: KVMLU_BENCH_VIRTIO_TRANSPORT=$transport: mmio or pci" >&2; exit 2 ;; esac
disk=$(mktemp /var/tmp/kvmlu-bench-virtio.XXXXXX) || { echo "$me: no disk file in /var/tmp"; exit 1; }
trap 'rm -f "$disk"' EXIT
# Two regions and the two mark blocks at the end (1 MiB for them).
truncate -s $(((2 * region + 1) * 1024 * 1024)) "$disk"
start=$(date +%s)
unshare -n -m --propagation private bash "$self" --inside "$log" "$kernel" "$gi" "$disk" \
	"$secs" "$rounds" "$region" "$boot" "$probe" "$cpu" "$transport" "$extra"
rc=$?
echo "native run: $(($(date +%s) - start)) s, log $log"

# ------------------------------------------------------------------ table
. tests/bench/virtio_io_figures.sh
noted() { grep -a -m 1 "^KVMLU-NOTE $1 " "$log" | sed "s/^KVMLU-NOTE $1 //"; }
qemu_ok=$(val "$log" qemu_ok)
echo "native (this machine's /dev/kvm): kvmlu-vmm on virtio-$transport; QEMU -accel kvm -cpu $cpu on virtio-pci"
echo "$rounds round(s) of $secs s runs (short: a Linux guest may boot for minutes on this KVM), QEMU's guest then kvmlu-vmm's; $region MiB of one raw disk file each; 256 MiB / 1 vCPU"
[ -n "$(noted append)" ] && echo "both guests' command line with: $(noted append)"
for who in qemu kvmlu; do
	b=$(val "$log" "${who}_boot_s")
	[ -n "$b" ] && echo "  $who guest up after $b s"
done
if [ "$qemu_ok" != 1 ]; then
	echo "QEMU -accel kvm -cpu $cpu cannot run this guest on this KVM: $(noted qemu_why)"
	echo "  QEMU's own line: $(noted qemu_line)"
	echo "  (no ratio: kvmlu-vmm's figures alone)"
fi
[ -n "$(noted kvmlu_error)" ] && echo "kvmlu-vmm's run stopped: $(noted kvmlu_error)"
exits_why=$(noted exits_why)
[ -n "$exits_why" ] && echo "exits per unit: not countable here: $exits_why (kvmlu-vmm's status has no exit counters)"
printf '%-38s %10s %10s %10s  %-22s\n' "medians of the rounds" kvmlu-vmm qemu-kvm kvmlu/qemu "exits/unit kvmlu qemu"
while IFS= read -r row; do
	k=${row%%:*} r=${row#*:} unit=${r%%:*} r=${r#*:} div=${r%%:*} label=${r#*:}
	a=$(vals "$log" "kvmlu_$k" | median) b=$(vals "$log" "qemu_$k" | median) q=
	# A ratio only when QEMU's guest ran all its rounds here.
	[ "$qemu_ok" = 1 ] && q=$(ratios "$log" kvmlu "$k" | median)
	printf '%-38s %10s %10s %10s  %10s %10s /%s\n' "$label" "${a:--}" "${b:--}" "${q:--}" \
		"$(per_op "$log" kvmlu "$k" exits "$div" | median | grep . || echo -)" \
		"$(per_op "$log" qemu "$k" exits "$div" | median | grep . || echo -)" "$unit"
done <<<"$rows"
[ -n "$exits_why" ] && exit $rc
echo "exits per unit by kind (KVM debugfs of this machine, read in the namespace: io/mmio went out to the VMM)"
printf '%-38s %9s %9s %9s %9s %9s %9s %9s\n' "" all io mmio irq halt npf emul
while IFS= read -r row; do
	k=${row%%:*} r=${row#*:} unit=${r%%:*} r=${r#*:} div=${r%%:*} label=${r#*:}
	for who in kvmlu qemu; do
		[ "$who" = qemu ] && [ "$qemu_ok" != 1 ] && continue
		line=
		for st in exits io mmio irq halt pf emul; do
			a=$(per_op "$log" "$who" "$k" "$st" "$div" | median)
			line="$line $(printf '%9s' "${a:--}")"
		done
		printf '%-28s %-9s%s\n' "${label%%,*}" "$who/$unit" "$line"
	done
done <<<"$rows"
exit $rc
fi

# ---------------------------------------------------------------- inside
# (unshare -n -m: a private network and mount namespace)
shift
LOG=$1 KERNEL=$2 GI=$3 DISK=$4 SECS=$5 ROUNDS=$6 REGION=$7 BOOT=$8 PROBE=$9 CPU=${10} TRANSPORT=${11} EXTRA=${12}
LG=$top/build/bin/kvmlu-loadgen
VMM=$top/build/bin/kvmlu-vmm
T=$(mktemp -d "$work/run.XXXXXX")
KPID='' QPID=
cleanup() {
	for p in $KPID $QPID; do kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
bench() { echo "KVMLU-BENCH $*" >>"$LOG"; }
note() { echo "KVMLU-NOTE $1 $2" >>"$LOG"; } # note KEY TEXT: words for the table
say() { echo "[$me $(date +%T)] $*"; }

ip link set lo up
ip link add $BR type bridge && ip addr add 10.17.0.1/24 dev $BR && ip link set $BR up ||
	{ note kvmlu_error "could not make the bridge $BR"; exit 1; }
# KVM's exit counts: debugfs, mounted in this mount namespace only. A
# kernel in lockdown lists the files but refuses to read them.
mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ ! -d /sys/kernel/debug/kvm ]; then
	note exits_why "no /sys/kernel/debug/kvm (debugfs)"
elif ! e=$(cat /sys/kernel/debug/kvm/exits 2>&1 >/dev/null); then
	e=${e#cat: }
	grep -q 'kernel_lockdown\|Lockdown' <(dmesg 2>/dev/null | tail -n 5) && e="$e (kernel lockdown restricts debugfs)"
	note exits_why "$e"
fi
KMARK=$(($(stat -c %s "$DISK") / 4096 - 1))
QMARK=$((KMARK - 1))
bench "config secs=$SECS rounds=$ROUNDS region_mib=$REGION transport=$TRANSPORT cpu=$CPU"
[ -n "$EXTRA" ] && note append "$EXTRA"

kv() { grep -a "$2" "$1" 2>/dev/null | tail -n 1 | tr -d '\r' | sed -n "s/.* $3=\\([^ ]*\\).*/\\1/p"; }
mark() {
	if [ "$2" = zero ]; then
		dd if=/dev/zero of="$DISK" bs=4096 seek="$1" count=1 conv=notrunc 2>/dev/null
	else
		printf '%s' "$2" | dd of="$DISK" bs=4096 seek="$1" conv=notrunc 2>/dev/null
	fi
}
# wait_for FILE REGEX SECONDS PID WHAT [N]: 0 once FILE has N lines
# matching REGEX; else 1 with ERR set (PID gone, time up, a guest error).
wait_for() {
	local i=0 c
	while c=$(grep -a -c "$2" "$1" 2>/dev/null); [ "${c:-0}" -lt "${6:-1}" ]; do
		if grep -aq 'KVMLU-BENCH-GUEST error\|KVMLU-LOADGEN error' "$1" 2>/dev/null; then
			ERR="$5: $(grep -a 'KVMLU-BENCH-GUEST error\|KVMLU-LOADGEN error' "$1" | head -n 1 | tr -d '\r')"
			return 1
		fi
		kill -0 "$4" 2>/dev/null || { ERR="$5: the VMM exited"; return 1; }
		[ $i -lt $(($3 * 5)) ] || { ERR="$5: no '$2' within $3 s"; return 1; }
		sleep 0.2
		i=$((i + 1))
	done
}
# KVM's exit counts of PID's VMs (debugfs: each statistic is the sum over
# the VM's vCPUs); KS_n VMs read. Other VMs on this machine are not PID's.
kstat() {
	local d v
	KS_exits=0 KS_io=0 KS_mmio=0 KS_irq=0 KS_halt=0 KS_pf=0 KS_emul=0 KS_n=0
	for d in /sys/kernel/debug/kvm/"$1"-*; do
		[ -r "$d/exits" ] || continue
		read -r v <"$d/exits" && KS_exits=$((KS_exits + v))
		read -r v <"$d/io_exits" && KS_io=$((KS_io + v))
		read -r v <"$d/mmio_exits" && KS_mmio=$((KS_mmio + v))
		read -r v <"$d/irq_exits" && KS_irq=$((KS_irq + v))
		read -r v <"$d/halt_exits" && KS_halt=$((KS_halt + v))
		read -r v <"$d/pf_fixed" && KS_pf=$((KS_pf + v))
		read -r v <"$d/insn_emulation" && KS_emul=$((KS_emul + v))
		KS_n=$((KS_n + 1))
	done
}
kstat_before() {
	kstat "$1"
	KB_exits=$KS_exits KB_io=$KS_io KB_mmio=$KS_mmio KB_irq=$KS_irq KB_halt=$KS_halt KB_pf=$KS_pf KB_emul=$KS_emul KB_n=$KS_n
}
report() { # report WHO KEY VALUE OPS PID
	local x
	kstat "$5"
	if [ "$KS_n" = 0 ] || [ "$KB_n" != "$KS_n" ]; then
		x="$1_$2_exits=-"
	else
		x="$1_$2_exits=$((KS_exits - KB_exits)) $1_$2_io=$((KS_io - KB_io)) $1_$2_mmio=$((KS_mmio - KB_mmio)) $1_$2_irq=$((KS_irq - KB_irq)) $1_$2_halt=$((KS_halt - KB_halt)) $1_$2_pf=$((KS_pf - KB_pf)) $1_$2_emul=$((KS_emul - KB_emul))"
	fi
	bench "round=$R $1_$2=${3:--} $1_$2_ops=${4:--} $x"
	say "$1 round $R: $2=${3:--} ops=${4:--} ${x%% *}"
}
disk_run() { # disk_run N MODE KEY FIELD OPSFIELD
	kstat_before "$P"
	mark $M "KVMLU-RUN$R.$1;"
	wait_for "$S" "KVMLU-LOADGEN $2 " $((SECS * 20 + 300)) "$P" "$WHO round $R: $2" "$R" || return 1
	report "$WHO" "$3" "$(kv "$S" "KVMLU-LOADGEN $2 " "$4")" "$(kv "$S" "KVMLU-LOADGEN $2 " "$5")" "$P"
}
wait_pid() { # wait_pid PID SECONDS
	local i=0
	while kill -0 "$1" 2>/dev/null; do
		[ $i -lt $(($2 * 5)) ] || { kill "$1" 2>/dev/null; return 1; }
		sleep 0.2
		i=$((i + 1))
	done
	wait "$1" 2>/dev/null
}
# turn WHO R: one round of that guest's runs (S serial, M mark, IP, P pid set)
turn() {
	WHO=$1 R=$2
	disk_run 1 seqwrite seqwrite_MBps MBps mib || return 1
	disk_run 2 seqread seqread_MBps MBps mib || return 1
	disk_run 3 randread randread_iops iops ops || return 1
	disk_run 4 aio-randread randread32_iops iops ops || return 1
	disk_run 5 aio-randwrite randwrite32_iops iops ops || return 1
	kstat_before "$P"
	mark $M "KVMLU-RUN$R.6;"
	wait_for "$S" 'KVMLU-LOADGEN tcp-listen' 300 "$P" "$WHO round $R: TCP sink" "$R" || return 1
	$LG tcp-send "$IP" 5001 "$SECS" >"$T/$WHO.send" 2>&1
	report "$WHO" tcp_MBps "$(kv "$T/$WHO.send" 'KVMLU-LOADGEN tcp-send' MBps)" \
		"$(kv "$T/$WHO.send" 'KVMLU-LOADGEN tcp-send' bytes)" "$P"
	kstat_before "$P"
	mark $M "KVMLU-RUN$R.7;"
	wait_for "$S" 'KVMLU-LOADGEN tcp-echo-listen' 300 "$P" "$WHO round $R: TCP echo" "$R" || return 1
	$LG tcp-rr "$IP" 5003 "$SECS" 64 >"$T/$WHO.rr" 2>&1
	report "$WHO" tcprr_tps "$(kv "$T/$WHO.rr" 'KVMLU-LOADGEN tcp-rr' tps)" \
		"$(kv "$T/$WHO.rr" 'KVMLU-LOADGEN tcp-rr' trans)" "$P"
	$LG tcp-sink 5002 >"$T/$WHO.sink" 2>&1 &
	local k=$!
	wait_for "$T/$WHO.sink" 'KVMLU-LOADGEN tcp-listen' 30 $k "host TCP sink" || return 1
	kstat_before "$P"
	mark $M "KVMLU-RUN$R.8;"
	wait_pid $k $((SECS * 20 + 300)) || { ERR="$WHO round $R: the guest's TCP stream not done"; return 1; }
	report "$WHO" tcpout_MBps "$(kv "$T/$WHO.sink" 'KVMLU-LOADGEN tcp-sink' MBps)" \
		"$(kv "$T/$WHO.sink" 'KVMLU-LOADGEN tcp-sink' bytes)" "$P"
	wait_for "$S" "KVMLU-BENCH-GUEST round=$R done" 300 "$P" "$WHO round $R: end" || return 1
	bench "round=$R ${WHO}_randread32_avgqd=$(kv "$S" 'KVMLU-LOADGEN aio-randread ' avgqd) ${WHO}_randwrite32_avgqd=$(kv "$S" 'KVMLU-LOADGEN aio-randwrite ' avgqd)"
}
rounds() { # rounds WHO: ROUNDS rounds, the end mark, the guest's done
	local r=1
	while [ $r -le "$ROUNDS" ]; do
		turn "$1" $r || return 1
		r=$((r + 1))
	done
	mark $M KVMLU-ROUNDS-END
	wait_for "$S" 'KVMLU-BENCH-GUEST done' 300 "$P" "$1: end of the rounds" || return 1
}
guest_up() { # guest_up WHO T0: the guest's up line within BOOT s
	wait_for "$S" 'KVMLU-BENCH-GUEST up' "$BOOT" "$P" "$1: boot" || return 1
	bench "$1_boot_s=$(($(date +%s) - $2))"
	say "$1 guest: $(grep -a 'KVMLU-BENCH-GUEST up' "$S" | tr -d '\r') after $(($(date +%s) - $2)) s"
	grep -aq 'KVMLU-BENCH-GUEST up.* net=yes' "$S" || { ERR="$1: the guest has no eth0"; return 1; }
}
APPEND="console=ttyS0 reboot=k panic=-1 nokaslr rdinit=/bench/init kvmlu.bench_secs=$SECS kvmlu.bench_blackout=0${EXTRA:+ $EXTRA}"

# QEMU's error: its first line naming an error (exact words), if any.
qemu_error() {
	grep -a -m 1 -i 'error\|assertion' "$T/qemu.log" | tr -d '\r'
}
qemu_fail() { # qemu_fail WHY: QEMU cannot run it here; its line in the log
	local l
	l=$(qemu_error)
	[ -n "$l" ] || l=$(tail -n 1 "$T/qemu.log" | tr -d '\r')
	bench "qemu_ok=0"
	note qemu_why "$1"
	note qemu_line "${l:-(QEMU printed nothing)}"
	say "QEMU: $1: ${l:-(QEMU printed nothing)}"
	sed 's/^/qemu| /' "$T/qemu.log" | head -n 5
	[ -n "$QPID" ] && kill -KILL "$QPID" 2>/dev/null
	QPID=
}
qemu_run() {
	local t0 i=0
	S=$T/qemu.serial M=$QMARK IP=10.17.0.3
	mark $M zero
	: >"$S"
	t0=$(date +%s)
	qemu-system-x86_64 -accel kvm -cpu "$CPU" -m 256M -smp 1 -nographic -nodefaults -no-reboot \
		-serial "file:$S" -kernel "$KERNEL" -initrd "$GI" \
		-append "$APPEND kvmlu.bench_region=$REGION+$REGION kvmlu.bench_mark=2 kvmlu.bench_ip=10.17.0.3/24" \
		-drive "file=$DISK,if=none,id=d0,format=raw" -device virtio-blk-pci,drive=d0 \
		-netdev tap,id=n0,ifname=qtap0,script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,romfile= >"$T/qemu.log" 2>&1 &
	QPID=$! P=$QPID
	# Not a job of this shell: its abort is QEMU's line below, not bash's.
	disown $QPID
	# The probe: QEMU alive and silent about errors for PROBE s.
	while [ $i -lt $((PROBE * 5)) ]; do
		kill -0 "$QPID" 2>/dev/null || { qemu_fail "QEMU exited within $PROBE s of its start"; return 1; }
		[ -n "$(qemu_error)" ] && { qemu_fail "QEMU stopped within $PROBE s of its start"; return 1; }
		grep -aq 'KVMLU-BENCH-GUEST up' "$S" && break
		sleep 0.2
		i=$((i + 1))
	done
	say "QEMU probe: running after $PROBE s (-cpu $CPU)"
	ip link set qtap0 master $BR && ip link set qtap0 up || { qemu_fail "could not put qtap0 on $BR"; return 1; }
	# A KVM internal error leaves QEMU alive and its guest stopped: watch
	# the log while the guest boots.
	( while kill -0 "$QPID" 2>/dev/null; do
		[ -n "$(qemu_error)" ] && { kill -KILL "$QPID"; break; }
		sleep 1
	  done ) &
	guest_up qemu "$t0" || { qemu_fail "QEMU's guest did not come up (${ERR})"; return 1; }
	bench "qemu_ok=1"
	rounds qemu || { qemu_fail "QEMU's rounds stopped: $ERR"; return 1; }
	sleep 2
	kill "$QPID" 2>/dev/null
	QPID=
}
kvmlu_run() {
	local t0 tr="--virtio-transport $TRANSPORT"
	S=$T/kvmlu.serial M=$KMARK IP=10.17.0.2
	mark $M zero
	t0=$(date +%s)
	# shellcheck disable=SC2086
	"$VMM" run --name bxn --memory 256M --cpus 1 --kernel "$KERNEL" --initrd "$GI" \
		--append "$APPEND kvmlu.bench_region=0+$REGION kvmlu.bench_mark=1 kvmlu.bench_ip=10.17.0.2/24" \
		--disk "$DISK,id=bench" --net tap=ktap0,bridge=$BR $tr \
		--serial "$S" --control "$T/bxn.sock" >"$T/kvmlu.vmm" 2>&1 &
	KPID=$! P=$KPID
	guest_up kvmlu "$t0" && rounds kvmlu && return 0
	# Why it ended, in the VMM's words (a KVM internal error, say).
	kill -0 "$KPID" 2>/dev/null || ERR="$ERR ($(grep -a 'stopped (' "$T/kvmlu.vmm" | tail -n 1 | sed 's/^kvmlu-vmm: [^ ]*: //'))"
	note kvmlu_error "$ERR"
	say "kvmlu-vmm: $ERR"
	tail -n 5 "$S" | tr -d '\r' | sed 's/^/guest| /'
	tail -n 5 "$T/kvmlu.vmm" | sed 's/^/vmm| /'
	return 1
}

rc=0
qemu_run
kvmlu_run || rc=1
for i in $(seq 1 60); do kill -0 "$KPID" 2>/dev/null || break; sleep 1; done
grep -aq 'device error' "$T/kvmlu.vmm" && { say "kvmlu-vmm: $(grep -a 'device error' "$T/kvmlu.vmm" | head -n 1)"; rc=1; }
exit $rc
}
