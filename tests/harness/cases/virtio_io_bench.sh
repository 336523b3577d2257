# Harness case (a bench, run by tests/bench/bench_virtio_io.sh; it judges
# nothing by thresholds): guest disk and TCP throughput of the stock Linux
# guest in kvmlu-vmm and in QEMU -accel kvm on this QEMU host's nested
# /dev/kvm, and kvmlu-vmm's live-upgrade and host-update blackouts with
# the guest idle and with its disk and network busy, all in one run.
#
# Both VMMs boot the same guest kernel and initramfs: tests/guest/linux/'s
# with the bench's archive appended (/bench/init as rdinit,
# kvmlu-loadgen, the virtio-pci and virtio-net modules;
# tests/bench/guest-bench-init says what the guest does), 256 MiB, 1 vCPU,
# on the same disk, this host's own virtio disk /dev/vda (HARNESS_DISK: a
# raw image file on the outer machine), opened by both through the page
# cache (kvmlu-vmm has no O_DIRECT; QEMU's default cache=writeback), each
# guest in its own REGION MiB of it, and a tap on the bridge br-bench,
# whose address 10.17.0.1 is this host's end of the TCP runs (kvmlu-loadgen
# tcp-send to the guest, tcp-rr against its echo, tcp-sink of its stream).
#   kvmlu-vmm:  --disk /dev/vda --net tap=ktap0,bridge=br-bench
#               --virtio-transport mmio or pci (kvmlu.bench_transports)
#   QEMU:       virtio-blk-pci on /dev/vda, virtio-net-pci on tap qtap0
#               (userspace virtio, no vhost; QEMU's default offloads)
# Only the bench's appended initramfs has QEMU (as bench_linux_boot.sh
# does it): without it this case measures kvmlu-vmm alone.
#
# The VMs run one after the other: QEMU's guest
# boots, runs ROUNDS rounds of its disk and TCP runs and ends; then
# kvmlu-vmm's boots and runs as many, once per transport of
# kvmlu.bench_transports (each guest but the last ends after its rounds);
# the bench takes medians. Then the last kvmlu-vmm guest goes through
# UPGRADES live upgrades idle, then
# (unless kvmlu.bench_hostupdate=0) a host update idle (stage 1 -> 2),
# the busy phase with UPGRADES live upgrades and a host update busy
# (2 -> 3), then it ends. (Both at once, taking turns round by round,
# was tried once on 2026-12-04, and QEMU's guest did not reach its
# userspace; but it also hung once alone, after its kernel's early boot,
# so the cause is not known: a QEMU guest that is not up within 300 s
# fails the run; run it again.)
#
# The guest starts each of its runs when told (guest-bench-init): this
# host reads the VMM's KVM exit counts (debugfs, kstat below) right
# before it says go and right after the run's result, so each run's
# figure comes with its exits (all of the VM's exits in that window: the
# go's poll of the mark block and the result line on the serial, 8250
# port writes, are in it too: about 100 exits, next to thousands for a
# 5 s run).
# Each figure is one line "KVMLU-BENCH key=value ..." on the console,
# read by the bench. Knobs on the kernel command line (the bench passes
# them through KVMLU_HARNESS_APPEND): kvmlu.bench_secs (seconds per
# throughput run, default 5), kvmlu.bench_rounds (default 5),
# kvmlu.bench_region (MiB of the disk each guest writes and reads,
# default 32), kvmlu.bench_upgrades (live upgrades idle and busy, default
# 3 each), kvmlu.bench_hostupdate (default 1), kvmlu.bench_transports
# (kvmlu-vmm's virtio transports, in order, comma-separated: mmio, pci,
# mmio,pci; default mmio). With one transport kvmlu-vmm's figures are
# "kvmlu_KEY", with more "kvmlu_mmio_KEY", "kvmlu_pci_KEY".
#
# Each guest is steered through a mark block near the disk's end (the
# guest reads it with O_DIRECT): kvmlu-vmm's the last 4 KiB, QEMU's the
# one before.
HARNESS_MEM=3G
# One vCPU: on two, the emulator's two-vCPU race (tests/harness/README.md,
# "No retries") stopped or reset the QEMU host at the pci guest's QD32
# runs (docs/devices.md).
HARNESS_SMP=1
HARNESS_TIMEOUT=3000
HARNESS_DISK=128M

. /harness/vm_common.sh

GI=/kvmlu/linux/bench-initramfs.cpio.gz
QEMU=/usr/bin/qemu-system-x86_64
LG=/kvmlu/bin/kvmlu-loadgen
BR=br-bench
NAME=bx

opt() { # opt KEY DEFAULT: kvmlu.KEY= from the command line
	_v=$(sed -n "s/.*kvmlu\\.$1=\\([0-9]*\\).*/\\1/p" /proc/cmdline)
	echo "${_v:-$2}"
}
SECS=$(opt bench_secs 5)
ROUNDS=$(opt bench_rounds 5)
REGION=$(opt bench_region 32)
UPGRADES=$(opt bench_upgrades 3)
HOSTUPDATE=$(opt bench_hostupdate 1)
TRANSPORTS=$(sed -n 's/.*kvmlu\.bench_transports=\([a-z,]*\).*/\1/p' /proc/cmdline | tr ',' ' ')
TRANSPORTS=${TRANSPORTS:-mmio}
LAST_TRANSPORT=${TRANSPORTS##* }

bench() { harness_log "KVMLU-BENCH $*"; }

# kv FILE REGEX KEY: KEY=value of the last line of FILE matching REGEX
kv() {
	grep -a "$2" "$1" 2>/dev/null | tail -n 1 | tr -d '\r' | sed -n "s/.* $3=\\([^ ]*\\).*/\\1/p"
}

# stuck PID: what a VM that stopped making progress is doing, for the log:
# its KVM exit counts twice, 2 s apart (a vCPU in HLT that nothing wakes
# counts almost nothing), and for kvmlu-vmm's VM its status (the disk's
# requests) and the VMM's last messages.
stuck() {
	kstat "$1"
	harness_log "stuck: exits=$KS_exits io=$KS_io mmio=$KS_mmio irq=$KS_irq halt=$KS_halt"
	sleep 2
	kstat "$1"
	harness_log "stuck, 2 s later: exits=$KS_exits io=$KS_io mmio=$KS_mmio irq=$KS_irq halt=$KS_halt"
	[ "$1" = "$(cat "/tmp/$NAME.pid" 2>/dev/null)" ] || return 0
	harness_log "stuck: status $($VM_CTL -t 10 "/run/$NAME.sock" '{"cmd":"status"}' 2>&1 | tr -d '\n' | cut -c1-1500)"
	tail -n 10 "/tmp/$NAME.vmm" | sed 's/^/vmm| /'
}

# wait_for FILE REGEX SECONDS PID WHAT [N]: until FILE has N lines matching
# REGEX (default 1); fails when PID is gone or the time is up. A line every
# 60 s while it waits says this host is still polling.
wait_for() {
	_i=0
	while _c=$(grep -a -c "$2" "$1" 2>/dev/null); [ "${_c:-0}" -lt "${6:-1}" ]; do
		if ! kill -0 "$4" 2>/dev/null || [ $_i -ge $(($3 * 5)) ]; then
			tail -n 25 "$1" | tr -d '\r' | sed 's/^/guest| /'
			if kill -0 "$4" 2>/dev/null; then
				stuck "$4"
			else	# what the VMM said last
				tail -n 10 "$([ "$4" = "${QPID:-}" ] && echo /tmp/qx.log || echo "/tmp/$NAME.vmm")" | sed 's/^/vmm| /'
			fi
			fail "$5: no '$2' (x${6:-1}) on the guest console within $3 s$(kill -0 "$4" 2>/dev/null || echo ', the VMM exited')"
		fi
		[ $_i -gt 0 ] && [ $((_i % 300)) = 0 ] && harness_log "still waiting for '$2' ($5), $((_i / 5)) s"
		grep -aq 'KVMLU-BENCH-GUEST error\|KVMLU-LOADGEN error' "$1" 2>/dev/null &&
			fail "$5: $(grep -a 'KVMLU-BENCH-GUEST error\|KVMLU-LOADGEN error' "$1" | head -n 1 | tr -d '\r')"
		usleep 200000
		_i=$((_i + 1))
	done
}

mark() { # mark BLOCK WORD|zero: at the start of that 4 KiB block of the disk
	if [ "$2" = zero ]; then
		dd if=/dev/zero of="$DISK" bs=4096 seek="$1" count=1 conv=notrunc 2>/dev/null
	else
		printf '%s' "$2" | dd of="$DISK" bs=4096 seek="$1" conv=notrunc 2>/dev/null
	fi || fail "could not write the mark $2 to $DISK"
}

tcp_send() { # tcp_send IP SECONDS OUT: stream to the guest's sink
	$LG tcp-send "$1" 5001 "$2" >"$3" 2>&1
}

# KVM's exit counts of one VM, from the QEMU host's debugfs: each
# /sys/kernel/debug/kvm/<pid>-<fd>/ file of a vCPU statistic is the sum
# over the VM's vCPUs. kstat PID sets KS_exits KS_io KS_mmio KS_irq KS_halt,
# KS_pf (pf_fixed: nested page faults KVM fixed) and KS_emul
# (insn_emulation: instructions KVM emulated, an MMIO access among them)
# (sums over PID's VMs; a VMM that made its VM on another thread than
# its first would not match its pid: then the only VM there is, since
# one VM runs at a time here) and KS_n, how many VMs were read.
kstat() {
	KS_exits=0 KS_io=0 KS_mmio=0 KS_irq=0 KS_halt=0 KS_pf=0 KS_emul=0 KS_n=0
	set -- /sys/kernel/debug/kvm/"$1"-*
	if [ ! -d "$1" ]; then
		set -- /sys/kernel/debug/kvm/[0-9]*-*
		[ $# = 1 ] && [ -d "$1" ] || return 0
	fi
	for _d in "$@"; do
		[ -r "$_d/exits" ] || continue
		read -r _v <"$_d/exits" && KS_exits=$((KS_exits + _v))
		read -r _v <"$_d/io_exits" && KS_io=$((KS_io + _v))
		read -r _v <"$_d/mmio_exits" && KS_mmio=$((KS_mmio + _v))
		read -r _v <"$_d/irq_exits" && KS_irq=$((KS_irq + _v))
		read -r _v <"$_d/halt_exits" && KS_halt=$((KS_halt + _v))
		read -r _v <"$_d/pf_fixed" && KS_pf=$((KS_pf + _v))
		read -r _v <"$_d/insn_emulation" && KS_emul=$((KS_emul + _v))
		KS_n=$((KS_n + 1))
	done
}

kstat_before() { # kstat_before PID: remember the counts
	kstat "$1"
	KB_exits=$KS_exits KB_io=$KS_io KB_mmio=$KS_mmio KB_irq=$KS_irq KB_halt=$KS_halt
	KB_pf=$KS_pf KB_emul=$KS_emul KB_n=$KS_n
}

# report WHO KEY VALUE OPS PID: one run's figure, its unit count (MiB,
# requests, bytes, transactions) and PID's VM exits since kstat_before.
report() {
	kstat "$5"
	if [ "$KS_n" = 0 ] || [ "$KB_n" != "$KS_n" ]; then
		_x="$1_$2_exits=-"
	else
		_x="$1_$2_exits=$((KS_exits - KB_exits)) $1_$2_io=$((KS_io - KB_io)) $1_$2_mmio=$((KS_mmio - KB_mmio)) $1_$2_irq=$((KS_irq - KB_irq)) $1_$2_halt=$((KS_halt - KB_halt)) $1_$2_pf=$((KS_pf - KB_pf)) $1_$2_emul=$((KS_emul - KB_emul))"
	fi
	bench "round=$_round $1_$2=${3:--} $1_$2_ops=${4:--} $_x"
}

# upgrades WHAT SERIAL: UPGRADES live upgrades, their blackouts (ms) as a list;
# when busy, the writer must go on after each one before the next.
upgrades() {
	_list=
	_k=1
	while [ $_k -le "$UPGRADES" ]; do
		_p=$(grep -a -c 'seqwrite-progress' "$2" 2>/dev/null)
		_p=${_p:-0}
		_r=$($VM_CTL -t 300 "/run/$NAME.sock" '{"cmd":"upgrade","args":{"timeout_ms":120000}}')
		echo "$_r" | grep -q '"ok": *true' || {
			tail -n 5 "/tmp/$NAME.vmm"
			fail "$1 upgrade $_k refused: $_r"
		}
		echo "$_r" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' >"/tmp/$NAME.pid"
		_b=$(echo "$_r" | sed -n 's/.*"blackout_ns": *\([0-9]*\).*/\1/p' | ns_ms)
		harness_log "$1 upgrade $_k: blackout $_b ms, new pid $(cat "/tmp/$NAME.pid")"
		_list=$_list${_list:+,}$_b
		[ "$1" = busy ] && wait_for "$2" seqwrite-progress 300 "$(cat "/tmp/$NAME.pid")" \
			"busy upgrade $_k: the writer going on" $((_p + 2))
		_k=$((_k + 1))
	done
	bench "upgrade_$1_ms=$_list"
}

vm_gone() { # the kvmlu VM ended (its guest rebooted), else fail
	_i=0
	while kill -0 "$(cat "/tmp/$NAME.pid")" 2>/dev/null && [ $_i -lt 120 ]; do
		sleep 1
		_i=$((_i + 1))
	done
	kill -0 "$(cat "/tmp/$NAME.pid")" 2>/dev/null && fail "kvmlu-vmm: the VM did not end after the guest's reboot"
	grep -aq 'device error' "/tmp/$NAME.vmm" &&
		fail "kvmlu-vmm: a virtio device error: $(grep -a 'device error' "/tmp/$NAME.vmm" | head -n 1)"
}

make_bridge() {
	brctl addbr $BR && ip addr add 10.17.0.1/24 dev $BR && ip link set $BR up ||
		fail "could not make the bridge $BR"
}

kvmlu_boot() { # kvmlu_boot TRANSPORT BLACKOUT(0|1)
	_s=/tmp/$NAME.serial
	mark $KMARK zero
	# kvmlu-vmm appends to its serial file; the waits count lines of one guest.
	rm -f "/run/$NAME.sock"
	: >"$_s"
	$VM_BIN run --name $NAME --memory 256M --cpus 1 \
		--kernel /kvmlu/linux/vmlinuz --initrd $GI \
		--append "console=ttyS0 reboot=k panic=-1 nokaslr rdinit=/bench/init kvmlu.bench_secs=$SECS kvmlu.bench_region=0+$REGION kvmlu.bench_mark=1 kvmlu.bench_ip=10.17.0.2/24 kvmlu.bench_blackout=$2" \
		--disk "$DISK,id=bench" --net tap=ktap0,bridge=$BR --virtio-transport "$1" \
		--serial "$_s" --control "/run/$NAME.sock" >"/tmp/$NAME.vmm" 2>&1 &
	echo $! >"/tmp/$NAME.pid"
}

qemu_boot() {
	_s=/tmp/qx.serial
	mark $QMARK zero
	: >"$_s"
	$QEMU -accel kvm -cpu host -m 256M -smp 1 -nographic -nodefaults -no-reboot \
		-serial "file:$_s" -kernel /kvmlu/linux/vmlinuz -initrd $GI \
		-append "console=ttyS0 reboot=k panic=-1 nokaslr rdinit=/bench/init kvmlu.bench_secs=$SECS kvmlu.bench_region=$REGION+$REGION kvmlu.bench_mark=2 kvmlu.bench_ip=10.17.0.3/24 kvmlu.bench_blackout=0" \
		-drive "file=$DISK,if=none,id=d0,format=raw" -device virtio-blk-pci,drive=d0 \
		-netdev tap,id=n0,ifname=qtap0,script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,romfile= >/tmp/qx.log 2>&1 &
	QPID=$!
	_i=0
	until [ -e /sys/class/net/qtap0 ]; do
		kill -0 $QPID 2>/dev/null || { cat /tmp/qx.log; fail "QEMU exited before making its tap"; }
		[ $_i -lt 300 ] || fail "QEMU made no tap qtap0 within 60 s"
		usleep 200000
		_i=$((_i + 1))
	done
	brctl addif $BR qtap0 && ip link set qtap0 up || fail "could not put qtap0 on $BR"
}

# wait_pid PID SECONDS WHAT: until the host-side PID ended, else fail
wait_pid() {
	_i=0
	while kill -0 "$1" 2>/dev/null; do
		if [ $_i -ge $(($2 * 5)) ]; then
			kill "$1" 2>/dev/null
			fail "$3: not done within $2 s"
		fi
		usleep 200000
		_i=$((_i + 1))
	done
	wait "$1" 2>/dev/null
}

# disk_run N MODE KEY FIELD OPSFIELD: run N of the round, a guest disk run
# whose result line is "KVMLU-LOADGEN MODE ..."
disk_run() {
	kstat_before "$_pid"
	mark $_m "KVMLU-RUN$_round.$1;"
	wait_for "$_s" "KVMLU-LOADGEN $2 " $((SECS * 20 + 300)) "$_pid" "$_w round $_round: $2" "$_round"
	report "$_who" "$3" "$(kv "$_s" "KVMLU-LOADGEN $2 " "$4")" "$(kv "$_s" "KVMLU-LOADGEN $2 " "$5")" "$_pid"
}

# turn WHO ROUND: one guest's disk and TCP runs (kvmlu*: the kvmlu-vmm VM),
# the VMM's KVM exits read right before and after each
turn() {
	case $1 in
	kvmlu*) _s=/tmp/$NAME.serial _m=$KMARK _ip=10.17.0.2 _pid=$(cat "/tmp/$NAME.pid") _w=$1 ;;
	*) _s=/tmp/qx.serial _m=$QMARK _ip=10.17.0.3 _pid=$QPID _w=QEMU ;;
	esac
	_who=$1 _round=$2
	disk_run 1 seqwrite seqwrite_MBps MBps mib
	disk_run 2 seqread seqread_MBps MBps mib
	disk_run 3 randread randread_iops iops ops
	disk_run 4 aio-randread randread32_iops iops ops
	disk_run 5 aio-randwrite randwrite32_iops iops ops
	# The depth the guest's block layer saw in the QD32 runs.
	bench "round=$2 $1_randread32_avgqd=$(kv "$_s" 'KVMLU-LOADGEN aio-randread ' avgqd) $1_randwrite32_avgqd=$(kv "$_s" 'KVMLU-LOADGEN aio-randwrite ' avgqd)"
	# host -> guest stream
	kstat_before "$_pid"
	mark $_m "KVMLU-RUN$2.6;"
	wait_for "$_s" 'KVMLU-LOADGEN tcp-listen' 300 "$_pid" "$_w round $2: TCP sink" "$2"
	tcp_send $_ip "$SECS" /tmp/$1.send
	report "$1" tcp_MBps "$(kv /tmp/$1.send 'KVMLU-LOADGEN tcp-send' MBps)" \
		"$(kv /tmp/$1.send 'KVMLU-LOADGEN tcp-send' bytes)" "$_pid"
	# request/response, 64-byte messages
	kstat_before "$_pid"
	mark $_m "KVMLU-RUN$2.7;"
	wait_for "$_s" 'KVMLU-LOADGEN tcp-echo-listen' 300 "$_pid" "$_w round $2: TCP echo" "$2"
	$LG tcp-rr $_ip 5003 "$SECS" 64 >/tmp/$1.rr 2>&1
	report "$1" tcprr_tps "$(kv /tmp/$1.rr 'KVMLU-LOADGEN tcp-rr' tps)" \
		"$(kv /tmp/$1.rr 'KVMLU-LOADGEN tcp-rr' trans)" "$_pid"
	# guest -> host stream, timed by the host's sink (accept to EOF)
	$LG tcp-sink 5002 >/tmp/$1.sink 2>&1 &
	_k=$!
	wait_for /tmp/$1.sink 'KVMLU-LOADGEN tcp-listen' 30 $_k "host TCP sink"
	kstat_before "$_pid"
	mark $_m "KVMLU-RUN$2.8;"
	wait_pid $_k $((SECS * 20 + 300)) "$_w round $2: the guest's TCP stream"
	report "$1" tcpout_MBps "$(kv /tmp/$1.sink 'KVMLU-LOADGEN tcp-sink' MBps)" \
		"$(kv /tmp/$1.sink 'KVMLU-LOADGEN tcp-sink' bytes)" "$_pid"
	wait_for "$_s" "KVMLU-BENCH-GUEST round=$2 done" 300 "$_pid" "$_w round $2: end"
	bench "round=$2 $1_tcp_sink_MBps=$(kv "$_s" 'KVMLU-LOADGEN tcp-sink' MBps) $1_tcpout_send_MBps=$(kv "$_s" 'KVMLU-LOADGEN tcp-send' MBps)"
}

guest_up() { # guest_up SERIAL PID WHAT
	wait_for "$1" 'KVMLU-BENCH-GUEST up' 300 "$2" "$3: boot"
	harness_log "$3 guest: $(grep -a 'KVMLU-BENCH-GUEST up' "$1" | tr -d '\r')"
	grep -aq 'KVMLU-BENCH-GUEST up.* net=yes' "$1" || fail "$3: the guest has no eth0"
}

# rounds WHO: ROUNDS rounds of that guest's runs, then KVMLU-ROUNDS-END
rounds() {
	_r=1
	while [ $_r -le "$ROUNDS" ]; do
		turn "$1" $_r
		_r=$((_r + 1))
	done
}

# QEMU's guest: boot, its rounds, its end. Then kvmlu-vmm's guest on each
# transport: boot, its rounds, its end; the last one stays, idle, for the
# upgrades.
throughput() {
	if [ -x $QEMU ]; then
		qemu_boot
		guest_up /tmp/qx.serial $QPID QEMU
		rounds qemu
		mark $QMARK KVMLU-ROUNDS-END
		wait_for /tmp/qx.serial 'KVMLU-BENCH-GUEST done' 300 $QPID "QEMU: end of the rounds"
		# The guest reboots: QEMU (-no-reboot) exits. `wait` reaps it (a
		# busybox usleep loop would not, and kill -0 finds the zombie).
		sleep 5
		kill $QPID 2>/dev/null
		wait $QPID 2>/dev/null
	else
		harness_log "no $QEMU in this initramfs: kvmlu-vmm only"
	fi
	for _t in $TRANSPORTS; do
		# Its figures' prefix; the last guest stays for the blackouts.
		_kw=kvmlu _b=0
		[ "$_t" = "$TRANSPORTS" ] || _kw=kvmlu_$_t
		[ "$_t" = "$LAST_TRANSPORT" ] && _b=1
		kvmlu_boot "$_t" $_b
		guest_up "/tmp/$NAME.serial" "$(cat "/tmp/$NAME.pid")" "kvmlu-vmm ($_t)"
		rounds $_kw
		mark $KMARK KVMLU-ROUNDS-END
		[ "$_t" = "$LAST_TRANSPORT" ] && break
		wait_for "/tmp/$NAME.serial" 'KVMLU-BENCH-GUEST done' 300 "$(cat "/tmp/$NAME.pid")" "kvmlu-vmm ($_t): end of the rounds"
		vm_gone
	done
	wait_for "/tmp/$NAME.serial" 'KVMLU-BENCH-GUEST idle' 300 "$(cat "/tmp/$NAME.pid")" "kvmlu-vmm ($LAST_TRANSPORT): after the rounds"
}

kvmlu_busy() { # the busy phase and its upgrades; a TCP stream runs on
	_s=/tmp/$NAME.serial
	mark $KMARK KVMLU-BUSY
	wait_for "$_s" 'KVMLU-BENCH-GUEST busy' 120 "$(cat "/tmp/$NAME.pid")" "busy phase"
	$LG tcp-send 10.17.0.2 5001 100000 >/tmp/$NAME.busysend 2>&1 &
	_snd=$!
	wait_for "$_s" seqwrite-progress 300 "$(cat "/tmp/$NAME.pid")" "busy phase: the writer" 2
	sleep 2
	upgrades busy "$_s"
	kill -TERM $_snd
	wait $_snd
	harness_log "busy TCP stream: $(cat /tmp/$NAME.busysend)"
	bench "busy_tcp_MBps=$(kv /tmp/$NAME.busysend 'KVMLU-LOADGEN tcp-send' MBps)"
	# A stream for what comes next (a host update kills the host's end).
	$LG tcp-send 10.17.0.2 5001 100000 >/tmp/$NAME.busysend2 2>&1 &
	BUSY_SENDER=$!
}

kvmlu_stop() { # the stop mark: the writer ends, the guest reboots
	_s=/tmp/$NAME.serial
	[ -n "${BUSY_SENDER:-}" ] && { kill -TERM "$BUSY_SENDER"; wait "$BUSY_SENDER"; }
	mark $KMARK KVMLU-STOP
	wait_for "$_s" 'KVMLU-BENCH-GUEST done' 300 "$(cat "/tmp/$NAME.pid")" "end of the busy phase"
	bench "busy_seqwrite_MBps=$(kv "$_s" 'KVMLU-LOADGEN seqwrite ' MBps)"
	vm_gone
}

# host_update idle|busy: the next stage's kernel and initramfs loaded
# first (as the agent's preflight does: not in the blackout), then
# prepare-update with host-side stamps around it for the bench (the
# blackout starts prepare_ns - prepare_paused_ns after the "pausing"
# line), then kexec -e.
host_update() {
	_next=$((HARNESS_STAGE + 1))
	_cmd=$(echo "$HARNESS_CMDLINE" | sed "s/kvmlu\.stage=[0-9]*/kvmlu.stage=$_next/")
	# The next kernel's TSC calibration under a loaded TCG host can be far
	# off: give it this one's (as vm_kexec_next_stage does).
	_khz=$(dmesg | sed -n 's/.*tsc: Refined TSC clocksource calibration: \([0-9]*\)\.\([0-9][0-9][0-9]\) MHz.*/\1\2/p' | tail -n 1)
	[ -n "$_khz" ] && [ "$_khz" -gt 500000 ] && _cmd="$_cmd tsc_early_khz=$_khz"
	harness_make_initrd /tmp/.next-initrd.cpio || fail "could not rebuild the initramfs"
	kexec -s -l "$HARNESS_KERNEL" --initrd=/tmp/.next-initrd.cpio --command-line="$_cmd" ||
		fail "kexec -s -l failed"
	rm -f /tmp/.next-initrd.cpio
	harness_log "kexec loaded for stage $_next"
	harness_log "hostupdate $1 pausing"
	_r=$(vm_ctl $NAME prepare-update)
	echo "$_r" | grep -q '"ok":true' || { tail -n 5 "/tmp/$NAME.vmm"; fail "$1 host update: prepare-update refused: $_r"; }
	_run=$(awk -v a="$(echo "$_r" | json_num prepare_ns)" -v b="$(echo "$_r" | json_num prepare_paused_ns)" \
		'BEGIN { printf "%.3f", (a - b) / 1e6 }')
	harness_log "hostupdate $1 prepared: $_r"
	bench "hostupdate_$1_running_ms=$_run"
	sync
	harness_log "kexec -e: stage $HARNESS_STAGE -> $_next"
	kexec -e
	fail "kexec -e returned"
}

# host_update_restore idle|busy: the bridge again, restore, stamps.
host_update_restore() {
	make_bridge
	vm_restore $NAME
	vm_wait_restored $NAME || { cat "/tmp/$NAME.vmm"; fail "$1 host update: restore failed: $(tail -n 1 "/tmp/$NAME.vmm")"; }
	harness_log "hostupdate $1 resumed"
	_st=$(vm_ctl $NAME update-status)
	harness_log "hostupdate $1 status: $_st"
	bench "hostupdate_$1_restore_ms=$(echo "$_st" | json_ms restore_ns)"
}

setup() {
	vm_need_binaries
	for f in /kvmlu/linux/vmlinuz $GI $LG; do
		[ -e "$f" ] || skip "$f missing (tests/bench/bench_virtio_io.sh builds and appends it)"
	done
	[ -e /dev/net/tun ] || skip "no /dev/net/tun in the QEMU host (CONFIG_TUN)"
	DISK=/dev/vda
	[ -b $DISK ] || skip "no virtio disk in the QEMU host (HARNESS_DISK; kernel without CONFIG_VIRTIO_BLK?)"
	KMARK=$(($(blockdev --getsize64 $DISK) / 4096 - 1))
	QMARK=$((KMARK - 1))
	[ $((2 * REGION * 256)) -lt "$QMARK" ] || fail "2 x kvmlu.bench_region=$REGION MiB do not fit below the marks on $DISK"
	# As a host with kvmlu installed has it (configs/kvmlu-thp.conf): kvmlu-vmm's
	# memfd RAM in 2 MiB folios, as QEMU's anonymous RAM gets them.
	_thp=/sys/kernel/mm/transparent_hugepage/shmem_enabled
	if [ -w $_thp ]; then
		echo advise >$_thp
		bench "thp thp_shmem=$(sed 's/.*\[\(.*\)\].*/\1/' $_thp) thp_anon=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)"
	fi
}

# Without host updates (kvmlu.bench_hostupdate=0) all in stage 1; with
# them: stage 1 ends in the idle host update, stage 2 runs the busy phase
# and ends in the busy host update, stage 3 stops the guest.
stage1() {
	setup
	make_bridge
	bench "config secs=$SECS rounds=$ROUNDS region_mib=$REGION upgrades=$UPGRADES hostupdate=$HOSTUPDATE disk=$DISK transport=$(echo $TRANSPORTS | tr ' ' ',')"
	throughput
	upgrades idle "/tmp/$NAME.serial"
	if [ "$HOSTUPDATE" = 1 ]; then
		host_update idle
	fi
	kvmlu_busy
	kvmlu_stop
	pass "virtio bench: figures on the KVMLU-BENCH lines"
}

stage2() {
	setup
	host_update_restore idle
	kvmlu_busy
	host_update busy
}

stage3() {
	setup
	host_update_restore busy
	# The writer goes on after the kexec before it is stopped.
	wait_for "/tmp/$NAME.serial" seqwrite-progress 300 "$(cat "/tmp/$NAME.pid")" "after the busy host update: the writer" 2
	kvmlu_stop
	pass "virtio bench: figures on the KVMLU-BENCH lines"
}
