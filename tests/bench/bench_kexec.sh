#!/bin/bash
# Bench: in the QEMU host harness, the time from `kexec -e` (the
# reboot(LINUX_REBOOT_CMD_KEXEC) call) to the new kernel's userspace,
# next to the cold boot of the same kernel (QEMU start -> userspace), and
# their ratio. Both come from the same QEMU run of the kexec_round_trip
# case, repeated KVMLU_BENCH_RUNS times (default 3); medians are printed.
#
# How it is measured: host side. run-case.sh prefixes every serial line
# with the host time since QEMU was started, as the line arrives. Cold boot
# = first "userspace stage 1" line; kexec = "userspace stage 2" line minus
# the "kexec -e" line the guest prints just before calling kexec -e. The
# guest's own uptime at userspace (kernel clock, from its boot) is printed
# too: it leaves out QEMU/firmware start and the old kernel's shutdown.
# TCG (tests/harness/qemu_host.sh) makes every figure far slower than hardware;
# the ratio is the figure to compare.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
top=$PWD
runs=${KVMLU_BENCH_RUNS:-3}
work=$top/build/harness/bench
mkdir -p "$work"

kernel/build.sh >"$work/kernel.log" 2>&1 ||
	{ tail -n 20 "$work/kernel.log"; echo "bench_kexec: kernel/build.sh failed"; exit 1; }
kdir=$(readlink -f build/kernel)
tests/harness/mkinitramfs.sh "$work/initramfs.cpio" "$kdir/bzImage" ||
	{ echo "bench_kexec: mkinitramfs.sh failed"; exit 1; }

secs() { # secs LOG REGEX: host seconds of the first line matching REGEX
	grep -a -m1 -E "$2" "$1" | sed -n 's/^\[ *\([0-9]*\.[0-9]*\)\].*/\1/p'
}
uptime_at() { # uptime_at LOG STAGE: guest uptime printed at that userspace start
	grep -a -m1 "userspace stage $2 " "$1" | sed -n 's/.* uptime \([0-9.]*\).*/\1/p'
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }

printf '%-4s %10s %10s %8s %12s %12s\n' run cold_s kexec_s ratio guest_up1_s guest_up2_s
: >"$work/cold" ; : >"$work/kexec" ; : >"$work/ratio"
for i in $(seq 1 "$runs"); do
	out=$(tests/harness/run-case.sh kexec_round_trip "$kdir/bzImage" \
		"$work/initramfs.cpio" "$work/run$i")
	log=$work/run$i/harness-kexec_round_trip.log
	case $out in
	*"PASS: "*) ;;
	*) echo "$out"; echo "bench_kexec: run $i did not pass, log $log"; exit 1 ;;
	esac
	u1=$(secs "$log" 'userspace stage 1 ')
	ke=$(secs "$log" 'kexec -e: stage 1')
	u2=$(secs "$log" 'userspace stage 2 ')
	cold=$u1
	kx=$(awk -v a="$u2" -v b="$ke" 'BEGIN {printf "%.3f", a - b}')
	ratio=$(awk -v k="$kx" -v c="$cold" 'BEGIN {printf "%.3f", k / c}')
	printf '%-4s %10.3f %10.3f %8s %12s %12s\n' "$i" "$cold" "$kx" "$ratio" \
		"$(uptime_at "$log" 1)" "$(uptime_at "$log" 2)"
	echo "$cold" >>"$work/cold"; echo "$kx" >>"$work/kexec"; echo "$ratio" >>"$work/ratio"
done
printf '%-4s %10.3f %10.3f %8s\n' median "$(median <"$work/cold")" \
	"$(median <"$work/kexec")" "$(median <"$work/ratio")"
echo "kexec -e -> userspace / cold QEMU start -> userspace (host-side serial timestamps, TCG, $runs runs)"
