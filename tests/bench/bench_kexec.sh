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
#
# Then KVMLU_BENCH_KEXECS (8) kexecs in a row in one QEMU host (the case
# kexec_in_row), once as it boots everywhere else and once with nokaslr,
# each kexec split at the new kernel's clock zero (kexec_phases.awk):
# jump_s (the old kernel's shutdown, purgatory, decompression, earliest
# setup) and boot_s (the new kernel's boot to userspace on its own clock).
# This is where one kexec of a TCG host varies by a second from the next
# (docs/live-update-memory.md): the jump, with the kernel placed at random.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
top=$PWD
runs=${KVMLU_BENCH_RUNS:-3}
kexecs=${KVMLU_BENCH_KEXECS:-8}
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

# in_row LABEL [EXTRA CMDLINE WORDS]: kexec_in_row, one line per kexec
in_row() {
	local label=$1 out log
	shift
	out=$(KVMLU_HARNESS_APPEND="kvmlu.kexecs=$kexecs $*" tests/harness/run-case.sh kexec_in_row \
		"$kdir/bzImage" "$work/initramfs.cpio" "$work/in_row_$label")
	log=$work/in_row_$label/harness-kexec_in_row.log
	case $out in
	*"PASS: "*) ;;
	*) echo "$out"; echo "bench_kexec: kexec_in_row $label did not pass, log $log"; return 1 ;;
	esac
	# Stage 2 is the QEMU host's first kexec after its cold boot, slower
	# whatever it carries: left out of the medians.
	awk -f tests/bench/kexec_phases.awk "$log" | while read -r stage total jump unpack; do
		printf '%-8s %6s %8.3f %8.3f %8.3f %9.3f %10s\n' "$label" "$stage" "$total" "$jump" \
			"$(awk -v t="$total" -v j="$jump" 'BEGIN { printf "%.3f", t - j }')" "$unpack" \
			"$(grep -a 'kernel code at' "$log" | sed -n "${stage}p" | sed 's/.*kernel code at //')"
	done
}
echo
echo "$kexecs kexecs in a row in one QEMU host (kexec_in_row), as booted everywhere else and with nokaslr:"
printf '%-8s %6s %8s %8s %8s %9s %10s\n' boot stage total_s jump_s boot_s unpack_s kernel_at
rows=$( { in_row kaslr && in_row nokaslr nokaslr; } ) || { echo "$rows"; exit 1; }
echo "$rows"
for label in kaslr nokaslr; do
	awk -v l="$label" '$1 == l && $2 > 2' <<<"$rows" >"$work/in_row_rows"
	printf '%-8s %6s %8.3f %8.3f %8.3f   max jump %.3f\n' "$label" median \
		"$(awk '{ print $3 }' "$work/in_row_rows" | median)" "$(awk '{ print $4 }' "$work/in_row_rows" | median)" \
		"$(awk '{ print $5 }' "$work/in_row_rows" | median)" "$(awk '{ print $4 }' "$work/in_row_rows" | sort -g | tail -n 1)"
done
echo "total_s: kexec -e -> the new userspace; jump_s: kexec -e -> the new kernel's clock zero; boot_s: the rest,"
echo "of which unpack_s is the initramfs's unpacking;"
echo "kernel_at: the physical address of that stage's kernel code (/proc/iomem); medians without stage 2 (the first kexec)"
