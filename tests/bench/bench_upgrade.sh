#!/bin/bash
# `make bench`: VMM live-upgrade blackout (pause to resumed in the new
# process, as the old process measures it) over 20 upgrades each, for
# witness guests of 256 MiB, 2 GiB and 8 GiB on memfd (nothing is copied:
# the figure must not grow with RAM) and 256 MiB on guest_memfd (copied:
# it grows with RAM, shown for comparison). Next to it, in the same run,
# the time the new process's vm_create() takes (KVM_CREATE_VM, irqchip,
# memslots, 2 vCPUs), i.e. what a snapshot restore a la Firecracker can
# never beat on this machine; the ratio blackout / create is the figure
# to hold against Firecracker's published < 8 ms snapshot restore
# (2 vCPU, 512 MiB). A second table splits the same upgrades' blackout:
# the old process's pause, then the new process's resume steps (the
# reply's `steps`). Release build (build/bin). No thresholds: the table
# is the result. BENCH_UPGRADE_ROUNDS / BENCH_UPGRADE_SIZES override.
#
# Then, side by side in the same run, QEMU's own local live update of the
# same Linux guest on the same KVM, per guest size (upgrade_peer.sh says
# how: shared /dev/shm RAM file, x-ignore-shared, -incoming unix:, the
# downtime query-migrate reports): kvmlu's blackout, QEMU's downtime and
# their ratio. KVMLU_BENCH_PEER_SIZES (default "256M 1G 4G"),
# KVMLU_BENCH_PEER_ROUNDS (default 5); needs qemu-system-x86_64 and the
# Linux guest (tests/guest/linux/fetch-kernel.sh, build-initramfs.sh).
#
# Without /dev/kvm (this machine is a kvm-pvm guest) all of it runs inside
# the QEMU host of tests/harness on its nested KVM, as the native tests
# do (tests/harness/cases/native_common.inc): this same script with bash
# and jq, and QEMU with its libraries and firmware, in an archive added
# to the harness initramfs. There the defaults are smaller (the witness
# fills its RAM, at TCG speed): BENCH_UPGRADE_SIZES "memfd:256M memfd:1G",
# 5 rounds, peer sizes "256M 1G", and the Linux guest has 1 vCPU on both
# sides (KVMLU_BENCH_PEER_CPUS, 2 natively): on 2 vCPUs it can stop the
# QEMU host for good (QEMU 7.2's TCG emulation of SVM; tests/harness/
# README.md, "The hang at the Debian guest's boot"); the QEMU host's
# memory is the largest guest + 2 GiB. A QEMU host that prints nothing for
# KVMLU_BENCH_SILENT_S (600) seconds is sampled over QMP (where its CPU
# is, whether it takes interrupts) and stopped, and the bench fails
# saying so, rather than waiting for the 90-minute bound.
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -u
cd "$(dirname "$0")/../.."
VMM=build/bin/kvmlu-vmm
CTL=build/bin/kvmlu-ctl
QMP=build/bin/qmp-call
WITNESS=build/guest/witness.bin
LINUX_KERNEL=build/guest-linux/vmlinuz
LINUX_INITRD=build/guest-linux/initramfs.cpio.gz
rounds=${BENCH_UPGRADE_ROUNDS:-20}
cases=${BENCH_UPGRADE_SIZES:-"memfd:256M memfd:2G memfd:8G guest_memfd:256M"}
for f in "$VMM" "$CTL" "$WITNESS"; do
	[ -e "$f" ] || { echo "bench_upgrade: $f not built (make)"; exit 1; }
done
# The QEMU peer's guest, fetched and built once into the caches as `make
# check` does; a fresh clone's `make bench` would otherwise skip the peer.
# Only when missing: inside the QEMU host the packed files are all there is.
if [ ! -e "$LINUX_KERNEL" ] || [ ! -e "$LINUX_INITRD" ]; then
	out=$(tests/guest/linux/prepare.sh) ||
		echo "bench_upgrade: the Linux guest is not available (the QEMU peer will SKIP): $out"
fi

# in_qemu_host: this script again, inside the QEMU host, on its nested KVM.
in_qemu_host() {
	local top work logs root log m max=0 c qmem rc wsizes psizes
	top=$(pwd)
	. tests/harness/qemu_host.sh
	work=$top/build/bench-upgrade
	logs=$top/build/test-logs
	log=$logs/bench-upgrade.log
	[ -f build/kernel/bzImage ] || {
		echo "bench_upgrade: SKIP: no /dev/kvm here and no host kernel in build/kernel (make kernel)"
		exit 0
	}
	mkdir -p "$work" "$logs"
	wsizes=${BENCH_UPGRADE_SIZES:-"memfd:256M memfd:1G"}
	psizes=${KVMLU_BENCH_PEER_SIZES:-"256M 1G"}
	for c in $wsizes $psizes; do
		c=${c#*:}
		case $c in *G) m=$(( ${c%G} * 1024 )) ;; *M) m=${c%M} ;; *) m=0 ;; esac
		[ "$m" -gt "$max" ] && max=$m
	done
	qmem=$(( max + 2048 ))M
	tests/harness/mkinitramfs.sh "$work/initramfs.cpio" build/kernel/bzImage \
		2>"$logs/bench-upgrade-initramfs.log" || { cat "$logs/bench-upgrade-initramfs.log"; exit 1; }
	# This script's part: a second newc archive after the harness's (the
	# kernel unpacks concatenated archives), built in a folder of its own.
	root=$work/extra
	[ -n "$root" ] && [ "$root" != / ] || exit 1
	rm -rf "$root"
	mkdir -p "$root/cases" "$root/kvmlu/tree/tests/bench" "$root/kvmlu/tree/build/guest" \
		"$root/kvmlu/tree/build/guest-linux" "$root/usr/share/seabios" "$root/usr/share/qemu"
	(
		. tests/harness/initramfs_lib.sh
		for f in "$VMM" "$CTL" "$QMP"; do
			[ -e "$f" ] && add_prog "$f" "/kvmlu/tree/$f"
		done
		add_prog /bin/bash /usr/bin/bash
		add_prog /usr/bin/jq /usr/bin/jq
		q=$(command -v qemu-system-x86_64) && add_prog "$q" /usr/bin/qemu-system-x86_64
	)
	cp tests/bench/bench_upgrade.sh tests/bench/upgrade_peer.sh "$root/kvmlu/tree/tests/bench/"
	cp "$WITNESS" "$root/kvmlu/tree/build/guest/"
	for f in "$LINUX_KERNEL" "$LINUX_INITRD"; do
		[ -e "$f" ] && cp "$f" "$root/kvmlu/tree/$f"
	done
	# QEMU's firmware for a -kernel boot of the pc machine: SeaBIOS, the
	# Linux loader option ROM and the vAPIC ROM (KVM).
	for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin /usr/share/qemu/kvmvapic.bin; do
		[ -e "$f" ] && cp -L "$f" "$root$f"
	done
	cat >"$root/cases/bench_upgrade.sh" <<CASE
# Stage 1 only kexecs into stage 2 with this boot's refined TSC rate as
# the early one: QEMU (-cpu host) asks KVM for KVM's default rate, which
# KVM takes from the early calibration, and where that is more than 250
# ppm off (about 3 QEMU-host boots in 10) and there is no TSC scaling,
# QEMU refuses to start ("TSC frequency mismatch ... TSC scaling
# unavailable") or its guest's clock stands still (upgrade_peer.sh).
. /harness/vm_common.sh
stage1() {
	i=0
	while [ \$i -lt 60 ] && ! dmesg | grep -q 'tsc: Refined TSC'; do sleep 1; i=\$((i + 1)); done
	harness_log "host TSC: \$(dmesg | grep -E 'tsc: (Detected|Refined)' | sed 's/.*tsc: //' | tr '\n' ';')"
	vm_kexec_next_stage
}
stage2() {
	harness_log "host TSC: \$(dmesg | grep -E 'tsc: (Detected|Refined)' | sed 's/.*tsc: //' | tr '\n' ';')"
	[ -e /dev/kvm ] || fail "no /dev/kvm in the QEMU host"
	# QEMU's guest RAM file lives here: room for the largest guest.
	mount -o remount,size=90% /dev/shm
	# bash's process substitution reads /dev/fd/N; devtmpfs has no /dev/fd.
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	cd /kvmlu/tree
	export PATH=/usr/bin:\$PATH BENCH_UPGRADE_SIZES="$wsizes" BENCH_UPGRADE_ROUNDS=${BENCH_UPGRADE_ROUNDS:-5}
	export KVMLU_BENCH_PEER_SIZES="$psizes" KVMLU_BENCH_PEER_ROUNDS=${KVMLU_BENCH_PEER_ROUNDS:-5}
	export KVMLU_BENCH_PEER_CPUS=${KVMLU_BENCH_PEER_CPUS:-1}
	{ /usr/bin/bash tests/bench/bench_upgrade.sh; echo \$? >/tmp/bench.rc; } 2>&1 | sed 's/^/BENCH| /'
	rc=\$(cat /tmp/bench.rc)
	[ "\$rc" = 0 ] || fail "bench_upgrade.sh exited \$rc in the QEMU host"
	pass "bench_upgrade in the QEMU host"
}
CASE
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >>"$work/initramfs.cpio"
	echo "(no /dev/kvm here: inside the QEMU host, $QEMU_HOST_ACCEL, -m $qmem, on its nested KVM; log $log)"
	qmp=$(mktemp -u /tmp/kvmlu-qmp-bench-upgrade.XXXXXX)
	regs=$logs/bench-upgrade.stuck-regs.txt
	rm -f "$regs"
	timeout -k 5 "${KVMLU_BENCH_UPGRADE_TIMEOUT:-5400}" "$QEMU_HOST_BIN" -accel "$QEMU_HOST_ACCEL" \
		-cpu "$QEMU_HOST_CPU" -m "$qmem" -smp "$QEMU_HOST_SMP" \
		-nographic -nodefaults -serial stdio -no-reboot \
		-qmp "unix:$qmp,server=on,wait=off" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-kernel build/kernel/bzImage -initrd "$work/initramfs.cpio" \
		-append "console=ttyS0 kho=on liveupdate=on panic=-1 no_timer_check $QEMU_HOST_TSC_APPEND kvmlu.case=bench_upgrade kvmlu.stage=1" \
		</dev/null >"$log" 2>&1 &
	qpid=$!
	silent=$(quiet_watch "$qpid" "$log" "$qmp" "$regs" "${KVMLU_BENCH_SILENT_S:-600}")
	wait "$qpid"
	rc=$?
	rm -f "$qmp"
	tr -d '\r' <"$log" | sed -n 's/^BENCH| //p' | grep -v '^PEER-INFO'
	if [ -n "$silent" ]; then
		echo "bench_upgrade: the QEMU host printed nothing for $silent s and was stopped; last line: $(tr -d '\r' <"$log" | grep -av '^ *$' | tail -n 1 | cut -c1-160)"
		echo "  its CPU: $(grep -a '^=== \(not \)\?stuck' "$regs" 2>/dev/null || echo "no sample (QMP did not answer)"); registers in $regs"
		exit 1
	fi
	[ "$rc" = 1 ] && exit 0
	echo "bench_upgrade: the QEMU host ended with exit $rc (1 = pass): $(grep -a 'RESULT' "$log" | tail -n 1)"
	exit 1
}

# quiet_watch PID LOG QMP REGS SECONDS: while PID runs, if LOG stops
# growing for SECONDS, sample the QEMU host's registers over QMP into
# REGS (qmp_watch.py's three samples and an NMI), stop PID (timeout hands
# SIGTERM on to QEMU), and print SECONDS. Prints nothing if PID ends first.
quiet_watch() {
	local pid=$1 log=$2 qmp=$3 regs=$4 limit=$5 size last=-1 quiet=0 wpid i
	while kill -0 "$pid" 2>/dev/null; do
		sleep 10
		size=$(stat -c %s "$log" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then
			last=$size quiet=0
			continue
		fi
		quiet=$((quiet + 10))
		[ "$quiet" -ge "$limit" ] || continue
		python3 tests/harness/qmp_watch.py "$qmp" "$regs" 0 &
		wpid=$!
		for i in $(seq 1 60); do
			grep -aq '^=== \(not \)\?stuck' "$regs" 2>/dev/null && break
			sleep 1
		done
		kill -TERM "$pid" 2>/dev/null
		kill "$wpid" 2>/dev/null
		wait "$wpid" 2>/dev/null
		echo "$quiet"
		return 0
	done
}
[ -w /dev/kvm ] || in_qemu_host
work=$(mktemp -d /tmp/kvmlu-bench-upgrade.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# stats FILE: "median max" of the numbers in FILE (one a line).
stats() {
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "- -"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f %.2f\n", m, v[NR] }'
}

# stop_vm: shutdown over the socket, then by signal, of the current VMM.
stop_vm() {
	local i
	[ -n "$pid" ] || return 0
	"$CTL" -t 10 "$work/ctl.sock" '{"cmd":"shutdown"}' >/dev/null 2>&1
	for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	pid=
}

run_case() { # backend size
	local backend=$1 size=$2 sock=$work/ctl.sock i r ok
	: >"$work/blackout"; : >"$work/create"; : >"$work/copied"; : >"$work/serial.log"
	for k in pause build verify apply start; do : >"$work/step_$k"; done
	rm -f "$sock"
	"$VMM" run --name bench --memory "$size" --cpus 2 --memory-backend "$backend" \
		--payload "$WITNESS" --serial "$work/serial.log" --control "$sock" \
		2>"$work/vmm.err" &
	pid=$!
	# The witness fills its RAM before it ticks: big guests take a while.
	for i in $(seq 1 1200); do
		[ -S "$sock" ] && grep -q 'cpu=1 tick=' "$work/serial.log" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || { echo "  $backend $size: VMM exited: $(tail -n 2 "$work/vmm.err")"; pid=; return 1; }
		sleep 0.1
	done
	grep -q 'cpu=1 tick=' "$work/serial.log" || { echo "  $backend $size: guest not ticking after 120 s"; stop_vm; return 1; }
	for i in $(seq 1 "$rounds"); do
		r=$("$CTL" -t 60 "$sock" '{"cmd":"upgrade"}') || { echo "  no reply to upgrade $i"; stop_vm; return 1; }
		ok=$(jq -r .ok <<<"$r")
		[ "$ok" = true ] || { echo "  upgrade $i failed: $r"; stop_vm; return 1; }
		# ns in the reply; ms here
		jq -r '.return.blackout_ns / 1e6' <<<"$r" >>"$work/blackout"
		jq -r '.return.create_ns / 1e6' <<<"$r" >>"$work/create"
		jq -r .return.memory_copied_bytes <<<"$r" >>"$work/copied"
		# Where the blackout goes: the old process's pause, then the new
		# process's resume steps (build runs before the pause, outside it).
		jq -r '.return.pause_ns / 1e6' <<<"$r" >>"$work/step_pause"
		for k in build verify apply start; do
			jq -r ".return.steps.${k}_ns / 1e6" <<<"$r" >>"$work/step_$k"
		done
		pid=$(jq -r .return.pid <<<"$r")
		sleep 0.3
	done
	stop_vm
	read -r bmed bmax < <(stats "$work/blackout")
	read -r cmed cmax < <(stats "$work/create")
	printf "%-12s %6s %6d %10s %10s %10s %10s %8s %14s\n" "$backend" "$size" "$rounds" \
		"$bmed" "$bmax" "$cmed" "$cmax" \
		"$(awk -v b="$bmed" -v c="$cmed" 'BEGIN { printf "%.2f", (c > 0) ? b / c : 0 }')" \
		"$(tail -n 1 "$work/copied")"
	printf "%-12s %6s" "$backend" "$size" >>"$work/steps_table"
	for k in pause build verify apply start; do
		read -r med max < <(stats "$work/step_$k")
		printf " %13s" "$med/$max" >>"$work/steps_table"
	done
	echo >>"$work/steps_table"
}

echo "VMM live upgrade, 2 vCPUs, $rounds upgrades per row (ms; release build)"
printf "%-12s %6s %6s %10s %10s %10s %10s %8s %14s\n" backend ram n \
	blackout_med blackout_max create_med create_max ratio copied_bytes
rc=0
for c in $cases; do
	run_case "${c%%:*}" "${c#*:}" || rc=1
done
echo "ratio = median blackout / median vm_create (KVM_CREATE_VM + irqchip + memslots + 2 vCPUs)"
echo "in the same run; Firecracker publishes < 8 ms snapshot restore for 2 vCPU / 512 MiB."
echo
echo "Where it goes, same upgrades (ms, median/max): the old process's pause, then the new"
echo "process's resume steps (docs/architecture.md); build runs before the pause, outside the blackout"
printf "%-12s %6s %13s %13s %13s %13s %13s\n" backend ram pause build verify apply start
[ -e "$work/steps_table" ] && cat "$work/steps_table"

# The QEMU peer, same run, same KVM: the Linux guest on both sides.
echo
q=$(command -v qemu-system-x86_64)
if [ -z "$q" ] || [ ! -x "$QMP" ] || [ ! -e "$LINUX_KERNEL" ] || [ ! -e "$LINUX_INITRD" ]; then
	echo "QEMU peer: SKIP: needs qemu-system-x86_64 (${q:-missing}), $QMP (make) and the Linux guest ($LINUX_KERNEL, $LINUX_INITRD)"
	exit $rc
fi
prounds=${KVMLU_BENCH_PEER_ROUNDS:-5}
pcpus=${KVMLU_BENCH_PEER_CPUS:-2}
echo "Live upgrade next to QEMU's local live update (x-ignore-shared, -incoming unix:), Linux guest"
echo "(Debian's cloud kernel, tests/guest/linux), $pcpus vCPU(s), $prounds per side and size (ms)"
PEER_SIZES=${KVMLU_BENCH_PEER_SIZES:-"256M 1G 4G"} PEER_ROUNDS=$prounds PEER_CPUS=$pcpus PEER_WORK=$work/peer \
	PEER_VMM=$VMM PEER_CTL=$CTL PEER_QMP=$QMP PEER_QEMU=$q PEER_KERNEL=$LINUX_KERNEL \
	PEER_INITRD=$LINUX_INITRD PEER_SHM=${KVMLU_BENCH_PEER_SHM:-/dev/shm} PEER_TSC_KHZ=${PEER_TSC_KHZ:-} \
	sh tests/bench/upgrade_peer.sh >"$work/peer.out"
printf "%6s %4s %13s %13s %4s %12s %12s %15s %8s\n" ram n kvmlu_bo_med kvmlu_bo_max n \
	qemu_dt_med qemu_dt_max qemu_total_med ratio
while read -r line; do
	case $line in
	PEER-RESULT*)
		(
			# key=value words from upgrade_peer.sh
			eval "${line#PEER-RESULT }"
			printf "%6s %4s %13s %13s %4s %12s %12s %15s %8s\n" "$size" "$kvmlu_n" "$kvmlu_med" \
				"$kvmlu_max" "$qemu_n" "$qemu_med" "$qemu_max" "$qemu_total_med" "$ratio"
		) ;;
	PEER-FAIL*) echo "  $line"; rc=1 ;;
	esac
done <"$work/peer.out"
echo "kvmlu_bo: the blackout kvmlu's old process reports (pause -> resumed in the new process);"
echo "qemu_dt: the downtime QEMU's source reports in query-migrate (vCPUs stopped -> migration"
echo "  completed on the source; the destination's last load and vm_start come after it);"
echo "qemu_total: QEMU's whole migration (total-time); ratio = kvmlu_bo_med / qemu_dt_med."
exit $rc
}
