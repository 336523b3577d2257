#!/bin/bash
# Bench: the stock Linux guest's disk and TCP throughput in
# kvmlu-vmm (--disk, --net on virtio-mmio, virtio-pci or each in turn)
# against QEMU -accel kvm (virtio-blk-pci,
# virtio-net-pci on a tap), and kvmlu-vmm's live-upgrade blackout with the
# guest idle next to the guest busy on its disk and network. Everything in
# one QEMU host (tests/harness, TCG with nested SVM), on its nested
# /dev/kvm, in the same run: harness case virtio_io_bench. QEMU's guest
# runs KVMLU_BENCH_VIRTIO_ROUNDS rounds of the runs below, then kvmlu-vmm's,
# once per transport asked for (one after the other, see the case); the
# table gives the medians, the ratio of each round pair (round i of
# kvmlu-vmm / round i of QEMU, per transport): its
# median and its spread (min-max), and each VMM's KVM exits per unit
# (MiB, request, MB, transaction), the median over the rounds, counted
# from the QEMU host's debugfs (/sys/kernel/debug/kvm/<pid>-<fd>/exits,
# io_exits, mmio_exits, irq_exits, halt_exits, pf_fixed, insn_emulation:
# sums over the VM's vCPUs)
# right before and after each run, with a second table by kind.
#
# Same guest for both VMMs: Debian's cloud kernel and the test initramfs
# (tests/guest/linux/) with an archive appended that holds
# tests/bench/guest-bench-init (run as rdinit), kvmlu-loadgen
# (tests/bench/loadgen.c, static) and the guest kernel's virtio-pci and
# virtio-net modules; 256 MiB, 1 vCPU; the disk is the QEMU host's virtio
# disk /dev/vda for both, each guest in its own part of it (page cache on
# the QEMU host side for both).
#   seqwrite   1 MiB pwrite + fdatasync, one after the other (guest clock)
#   seqread    1 MiB O_DIRECT preads, one after the other, sequential
#   randread   4 KiB O_DIRECT reads at random offsets, queue depth 1
#   randread32, randwrite32  4 KiB O_DIRECT random reads, writes, queue
#              depth 32 through Linux AIO (raw io_submit: each completion
#              resubmitted at once; the table gives the guest's block
#              layer's average depth, avgqd, to show it)
#   tcp        one stream, QEMU host (bridge br-bench) -> guest sink, timed
#              by the sender until the guest closed (all bytes received)
#   tcpout     one stream, guest -> a sink in the QEMU host, timed by the
#              sink (accept to EOF)
#   tcprr      request/response, 64 bytes each way, TCP_NODELAY, one
#              transaction at a time: the QEMU host's client against an
#              echo in the guest, transactions per second
#   upgrade    kvmlu-ctl upgrade's blackout_ns in ms (pause -> running in the
#              new process), idle (the guest only polls a 4 KiB block every
#              200 ms) and busy (the writer and a TCP stream running)
#   host update  prepare-update, kexec of the QEMU host, kvmlu-vmm restore
#              (bridge made first, tap and disk reopened): from the pause
#              (the "pausing" stamp + prepare's running part) to the
#              restore's "resumed" line, host-side stamps of the serial
#              (one clock across the kexec; the restore is polled every
#              100 ms), idle then busy (stages 1 -> 2 -> 3 of the case),
#              next to the bare kexec (kexec -e -> next userspace)
# QEMU (binary, libraries, SeaBIOS and option ROMs) is appended to the
# harness initramfs only for this bench, as bench_linux_boot.sh does.
# Nested KVM under TCG makes every absolute figure tiny; the ratios are
# what to compare. Knobs: KVMLU_BENCH_VIRTIO_SECS (per throughput run,
# default 5), KVMLU_BENCH_VIRTIO_ROUNDS (default 5),
# KVMLU_BENCH_VIRTIO_REGION_MIB (default 32),
# KVMLU_BENCH_VIRTIO_UPGRADES (idle and busy each, default 3),
# KVMLU_BENCH_VIRTIO_HOSTUPDATE=0 (no host updates: one stage, faster),
# KVMLU_BENCH_VIRTIO_TRANSPORT (default "mmio pci"): pci puts kvmlu-vmm's guest
# on --virtio-transport pci (MSI-X) instead of virtio-mmio; "mmio pci" (or
# both) runs kvmlu-vmm's guest once on each, in that order, side by side
# in the table ("pci mmio" the other way); the blackouts are the last
# one's,
# KVMLU_BENCH_RUNS (default 1); KVMLU_BENCH_VIRTIO_LOG=LOG prints the table
# of an earlier run's case log and runs nothing. KVMLU_HARNESS_NO_BUILD=1: use build/kernel
# as it is (no kernel/build.sh).
# Natively too, first: where this machine's /dev/kvm is usable, the same
# guest in kvmlu-vmm and QEMU -accel kvm here, in a private network
# namespace (tests/bench/virtio_io_native.sh says what it runs and
# prints, once per transport; KVMLU_BENCH_VIRTIO_NATIVE=0 skips it).
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
runs=${KVMLU_BENCH_RUNS:-1}
secs=${KVMLU_BENCH_VIRTIO_SECS:-5}
rounds=${KVMLU_BENCH_VIRTIO_ROUNDS:-5}
region=${KVMLU_BENCH_VIRTIO_REGION_MIB:-32}
upgrades=${KVMLU_BENCH_VIRTIO_UPGRADES:-3}
hostupdate=${KVMLU_BENCH_VIRTIO_HOSTUPDATE:-1}
transports=${KVMLU_BENCH_VIRTIO_TRANSPORT:-mmio pci}
[ "$transports" = both ] && transports="mmio pci"
transports=$(tr ',' ' ' <<<"$transports" | xargs)
case $transports in
mmio | pci | "mmio pci" | "pci mmio") ;;
*) echo "bench_virtio_io: KVMLU_BENCH_VIRTIO_TRANSPORT=${KVMLU_BENCH_VIRTIO_TRANSPORT}: mmio, pci, \"mmio pci\" (both) or \"pci mmio\"" >&2; exit 2 ;;
esac
work=$top/build/harness/bench-virtio
mkdir -p "$work"
me=bench_virtio_io

if [ -n "${KVMLU_BENCH_VIRTIO_LOG:-}" ]; then
	# Print the table of an earlier run's log (after the helpers below).
	only_log=$KVMLU_BENCH_VIRTIO_LOG
fi
if [ -z "${only_log:-}" ]; then
# A machine whose KVM cannot run the guest gets its table with the reason,
# not a failed bench: what it could not run is a fact of that machine.
for t in $transports; do
	KVMLU_BENCH_VIRTIO_TRANSPORT=$t tests/bench/virtio_io_native.sh ||
		echo "$me: the native half ($t) ran nothing to compare (above says why)"
done
tests/guest/linux/fetch-kernel.sh >/dev/null || { echo "$me: SKIP: no guest kernel (tests/guest/linux/fetch-kernel.sh)"; exit 0; }
if [ "${KVMLU_HARNESS_NO_BUILD:-0}" != 1 ]; then
	kernel/build.sh >"$work/kernel.log" 2>&1 ||
		{ tail -n 20 "$work/kernel.log"; echo "$me: kernel/build.sh failed"; exit 1; }
fi
[ -f build/kernel/bzImage ] || { echo "$me: SKIP: no host kernel in build/kernel"; exit 0; }
kdir=$(readlink -f build/kernel)
[ -x build/bin/kvmlu-loadgen ] || { echo "$me: build/bin/kvmlu-loadgen missing (make)"; exit 1; }
qemu=$(command -v qemu-system-x86_64) || { echo "$me: SKIP: qemu-system-x86_64 missing"; exit 0; }

stage=$(mktemp -d "$work/stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# 1. The guest's initramfs: the test one, then the bench's archive.
rc=0
tests/bench/bench-guest-initramfs.sh "$work/guest-initramfs.cpio.gz" || rc=$?
[ $rc = 77 ] && { echo "$me: SKIP: no guest kernel modules"; exit 0; }
[ $rc = 0 ] || exit 1

# 2. What the QEMU host gets on top of the harness initramfs: QEMU with its
# libraries and the firmware a pc machine with -kernel needs, and the
# guest's initramfs.
root=$stage/extra
mkdir -p "$root/usr/share/qemu" "$root/usr/share/seabios" "$root/kvmlu/linux"
. tests/harness/initramfs_lib.sh
add_prog "$qemu" /usr/bin/qemu-system-x86_64
for f in linuxboot_dma.bin kvmvapic.bin; do
	cp -L "/usr/share/qemu/$f" "$root/usr/share/qemu/" || { echo "$me: /usr/share/qemu/$f missing"; exit 1; }
done
cp -L /usr/share/seabios/bios-256k.bin "$root/usr/share/seabios/" || { echo "$me: SeaBIOS missing"; exit 1; }
cp "$work/guest-initramfs.cpio.gz" "$root/kvmlu/linux/bench-initramfs.cpio.gz"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$work/extra.cpio"

tests/harness/mkinitramfs.sh "$work/base.cpio" "$kdir/bzImage" >"$work/initramfs.log" 2>&1 ||
	{ tail -n 10 "$work/initramfs.log"; echo "$me: mkinitramfs.sh failed"; exit 1; }
cat "$work/base.cpio" "$work/extra.cpio" >"$work/initramfs.cpio"
fi

. tests/bench/virtio_io_figures.sh
stamp() { # stamp LOG TEXT: host seconds of the first line with TEXT
	grep -a -m 1 -F "$2" "$1" | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'
}
hu_ms() { # hu_ms LOG idle|busy STAGE: blackout of that host update in ms
	local p r run
	p=$(stamp "$1" "hostupdate $2 pausing") r=$(stamp "$1" "hostupdate $2 resumed")
	run=$(val "$1" "hostupdate_$2_running_ms")
	[ -n "$p" ] && [ -n "$r" ] || { echo -; return; }
	awk -v p="$p" -v r="$r" -v run="${run:-0}" 'BEGIN { printf "%.0f", (r - p) * 1000 - run }'
}
kexec_ms() { # kexec_ms LOG FROM TO: kexec -e -> userspace of stage TO
	local k u
	k=$(stamp "$1" "kexec -e: stage $2 -> $3") u=$(stamp "$1" "userspace stage $3 ")
	[ -n "$k" ] && [ -n "$u" ] || { echo -; return; }
	awk -v k="$k" -v u="$u" 'BEGIN { printf "%.0f", (u - k) * 1000 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
med_max() { # med_max 1.2,3.4,...: "median max"
	tr ',' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "- -"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f %.2f\n", m, v[NR] }'
}

spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.2f-%.2f", lo, hi; else print "-" }'; }
kwhos() { # kwhos LOG: the prefixes of kvmlu-vmm's figures, one per transport
	local t
	t=$(val "$1" transport | grep . || echo mmio)
	case $t in
	*,*) tr ',' '\n' <<<"$t" | sed 's/^/kvmlu_/' ;;
	*) echo kvmlu ;;
	esac
}
colname() { # colname WHO: its column's name
	case $1 in
	kvmlu) echo kvmlu-vmm ;;
	kvmlu_*) echo "kvmlu-${1#kvmlu_}" ;;
	*) echo qemu-kvm ;;
	esac
}
table() { # table LOG: the figures of one run
	local log=$1 row k unit div label a b r im ix bm bx hi hb n who st line kw head t
	n=$(val "$log" upgrades)
	kw=$(kwhos "$log" | xargs)
	t=$(val "$log" transport | grep . || echo mmio)
	case $t in
	*,*) echo "kvmlu-vmm on virtio-${t//,/, then virtio-} (one guest each: kvmlu-${t//,/, kvmlu-}); QEMU on virtio-pci" ;;
	*) echo "kvmlu-vmm on virtio-$t; QEMU on virtio-pci" ;;
	esac
	echo "$(val "$log" rounds) rounds of $(val "$log" secs) s runs, QEMU's guest then kvmlu-vmm's; $(val "$log" region_mib) MiB of a raw virtio disk each; 256 MiB / 1 vCPU guests; log $log"
	[ -z "$(val "$log" thp_shmem)" ] ||
		echo "THP in the QEMU host: shmem_enabled $(val "$log" thp_shmem) (kvmlu-vmm's memfd RAM, as configs/kvmlu-thp.conf sets it), enabled $(val "$log" thp_anon) (QEMU's anonymous RAM)"
	head=$(printf '%-38s' "medians of the rounds")
	for who in $kw qemu; do head="$head $(printf '%10s' "$(colname "$who")")"; done
	for who in $kw; do head="$head $(printf '%10s %11s' "${who#kvmlu_}/qemu" "(min-max)")"; done
	echo "$head"
	while IFS= read -r row; do
		k=${row%%:*} r=${row#*:} unit=${r%%:*} r=${r#*:} div=${r%%:*} label=${r#*:}
		line=$(printf '%-38s' "$label")
		for who in $kw qemu; do
			a=$(vals "$log" "${who}_$k" | median)
			line="$line $(printf '%10s' "${a:--}")"
		done
		for who in $kw; do
			line="$line $(printf '%10s %11s' "$(ratios "$log" "$who" "$k" | median)" "$(ratios "$log" "$who" "$k" | spread)")"
		done
		echo "$line"
	done <<<"$rows"
	for who in $kw qemu; do
		for st in randread32 randwrite32; do
			a=$(vals "$log" "${who}_${st}_avgqd" | median)
			eval "qd_${who}_$st=\${a:--}"
		done
	done
	line="QD32: average depth at the guest's block layer (time_in_queue / time), medians, reads and writes:"
	for who in $kw qemu; do
		eval "line=\"\$line $(colname "$who") \$qd_${who}_randread32, \$qd_${who}_randwrite32;\""
	done
	echo "${line%;}"
	echo "exits per unit by kind (medians; KVM debugfs of the QEMU host: io/mmio went out to the VMM's userspace;"
	echo "  irq: a host interrupt; halt: the guest's HLT; npf: nested page faults fixed; emul: instructions emulated)"
	printf '%-38s %-12s %9s %9s %9s %9s %9s %9s %9s\n' "" "" all io mmio irq halt npf emul
	while IFS= read -r row; do
		k=${row%%:*} r=${row#*:} unit=${r%%:*} r=${r#*:} div=${r%%:*} label=${r#*:}
		for who in $kw qemu; do
			line=
			for st in exits io mmio irq halt pf emul; do
				a=$(per_op "$log" "$who" "$k" "$st" "$div" | median)
				line="$line $(printf '%9s' "${a:--}")"
			done
			printf '%-38s %-12s%s\n' "${label%%,*}" "${who#kvmlu_}/$unit" "$line"
		done
	done <<<"$rows"
	read -r im ix <<<"$(med_max "$(val "$log" upgrade_idle_ms)")"
	read -r bm bx <<<"$(med_max "$(val "$log" upgrade_busy_ms)")"
	printf '%-34s %12s %12s %12s\n' "live upgrade blackout, ms (${t##*,})" idle busy busy/idle
	printf '%-34s %12s %12s %12s\n' "  median of $n" "$im" "$bm" "$(ratio "$bm" "$im")"
	printf '%-34s %12s %12s %12s\n' "  max" "$ix" "$bx" "$(ratio "$bx" "$ix")"
	if [ "$(val "$log" hostupdate)" = 1 ]; then
		hi=$(hu_ms "$log" idle) hb=$(hu_ms "$log" busy)
		printf '%-34s %12s %12s %12s\n' "host update blackout, ms" "$hi" "$hb" "$(ratio "$hb" "$hi")"
		printf '%-34s %12s %12s\n' "  of which kexec -e -> userspace" "$(kexec_ms "$log" 1 2)" "$(kexec_ms "$log" 2 3)"
		printf '%-34s %12s %12s\n' "  restore_ms (the VMM's)" "$(val "$log" hostupdate_idle_restore_ms)" "$(val "$log" hostupdate_busy_restore_ms)"
	fi
	printf '%-34s %12s %12s\n' "busy phase: writer MB/s, TCP MB/s" "$(val "$log" busy_seqwrite_MBps)" "$(val "$log" busy_tcp_MBps)"
	echo "  each upgrade blackout, ms: $(val "$log" upgrade_idle_ms) idle; $(val "$log" upgrade_busy_ms) busy"
}
notes() {
	echo "busy phase: the guest's writer over the whole phase (upgrades and, with host updates, the busy one included;"
	echo "  guest clock), the TCP stream over the busy upgrades (sender's clock)"
	echo "nested KVM inside the TCG harness host: absolute figures are far below hardware; compare the ratios"
	echo "(QEMU: userspace virtio-blk/net-pci, no vhost, its default offloads; kvmlu-vmm: checksum and TSO offloads and MRG_RXBUF, as the guest acks)"
}

if [ -n "${only_log:-}" ]; then
	table "$only_log"
	notes
	exit 0
fi
rc=0
for i in $(seq 1 "$runs"); do
	out=$(KVMLU_HARNESS_APPEND="${KVMLU_HARNESS_APPEND:-} kvmlu.bench_secs=$secs kvmlu.bench_rounds=$rounds kvmlu.bench_region=$region kvmlu.bench_upgrades=$upgrades kvmlu.bench_hostupdate=$hostupdate kvmlu.bench_transports=${transports// /,}" \
		tests/harness/run-case.sh virtio_io_bench "$kdir/bzImage" "$work/initramfs.cpio" "$work/run$i")
	log=$work/run$i/harness-virtio_io_bench.log
	case $out in
	*"PASS: harness/virtio_io_bench"*) ;;
	*"SKIP: harness/virtio_io_bench"*)
		echo "$me: $(grep -m1 '^SKIP: harness/virtio_io_bench' <<<"$out")"
		continue
		;;
	*)
		echo "$out" | tail -n 40
		echo "$me: run $i failed, log $log (a triple fault or a QEMU exit without a verdict is the emulator's nested fault, tests/harness/README.md: run it again)"
		# What the rounds measured before the failure is still worth a look.
		grep -aq 'KVMLU-BENCH round=' "$log" 2>/dev/null && echo "run $i, up to the failure: $(table "$log")"
		rc=1
		continue
		;;
	esac
	echo "run $i: $(table "$log")"
done
notes
exit $rc
}
