#!/bin/bash
# Bench: the cost of preserving (LIVEUPDATE_SESSION_PRESERVE_FD, before the
# kexec) and retrieving (RETRIEVE_FD, after it) a guest_memfd, next to a memfd
# of the same size, in the same QEMU run (harness case gmem_bench_preserve:
# 256 MiB each, one session). Times are taken inside the QEMU host with
# CLOCK_MONOTONIC around each ioctl and scaled to ms per GiB; the guest_memfd /
# memfd ratio is the figure to compare (TCG makes absolute numbers slow).
# KVMLU_BENCH_RUNS runs (default 3), medians printed.
#
# Kernel: build/kernel (must carry the guest_memfd patches), or
# KVMLU_GMEM_KERNEL=DIR with DIR/bzImage and DIR/headers/include (or
# KVMLU_GMEM_HEADERS=...), e.g. an out-of-tree build.
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
runs=${KVMLU_BENCH_RUNS:-3}
work=$top/build/harness/bench-gmem
mkdir -p "$work"

if [ -n "${KVMLU_GMEM_KERNEL:-}" ]; then
	kdir=$KVMLU_GMEM_KERNEL
else
	kernel/build.sh >"$work/kernel.log" 2>&1 ||
		{ tail -n 20 "$work/kernel.log"; echo "bench_gmem_preserve: kernel/build.sh failed"; exit 1; }
	kdir=$(readlink -f build/kernel)
fi
hdr=${KVMLU_GMEM_HEADERS:-$kdir/headers/include}
kernel/selftests/build.sh "$hdr" build/kernel-selftests || exit 1
if [ ! -x build/kernel-selftests/gmem_luo_kexec ]; then
	echo "bench_gmem_preserve: SKIP (kernel $kdir has no guest_memfd preservation patches)"
	exit 0
fi
tests/harness/mkinitramfs.sh "$work/initramfs.cpio" "$kdir/bzImage" ||
	{ echo "bench_gmem_preserve: mkinitramfs.sh failed"; exit 1; }

field() { # field LOG OP KIND: ms/GiB of "BENCH OP KIND ..." lines
	grep -a "BENCH $2 $3 " "$1" | sed -n 's/.*(\([0-9.]*\) ms\/GiB).*/\1/p' | head -n 1
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }

printf '%-4s %16s %16s %16s %16s %8s %8s\n' run gmem_pres_ms/GiB memfd_pres_ms/GiB \
	gmem_retr_ms/GiB memfd_retr_ms/GiB pres_x retr_x
for k in gp mp gr mr px rx; do : >"$work/$k"; done
for i in $(seq 1 "$runs"); do
	out=$(tests/harness/run-case.sh gmem_bench_preserve "$kdir/bzImage" \
		"$work/initramfs.cpio" "$work/run$i")
	log=$work/run$i/harness-gmem_bench_preserve.log
	case $out in
	*"PASS: "*) ;;
	*) echo "$out"; echo "bench_gmem_preserve: run $i did not pass, log $log"; exit 1 ;;
	esac
	gp=$(field "$log" preserve guest_memfd) mp=$(field "$log" preserve memfd)
	gr=$(field "$log" retrieve guest_memfd) mr=$(field "$log" retrieve memfd)
	px=$(awk -v a="$gp" -v b="$mp" 'BEGIN {printf "%.2f", b ? a / b : 0}')
	rx=$(awk -v a="$gr" -v b="$mr" 'BEGIN {printf "%.2f", b ? a / b : 0}')
	printf '%-4s %16s %16s %16s %16s %8s %8s\n' "$i" "$gp" "$mp" "$gr" "$mr" "$px" "$rx"
	echo "$gp" >>"$work/gp"; echo "$mp" >>"$work/mp"; echo "$gr" >>"$work/gr"
	echo "$mr" >>"$work/mr"; echo "$px" >>"$work/px"; echo "$rx" >>"$work/rx"
done
printf '%-4s %16s %16s %16s %16s %8s %8s\n' median "$(median <"$work/gp")" \
	"$(median <"$work/mp")" "$(median <"$work/gr")" "$(median <"$work/mr")" \
	"$(median <"$work/px")" "$(median <"$work/rx")"
echo "ms per GiB inside the QEMU host (TCG), 256 MiB each, one session; _x = guest_memfd / memfd"
