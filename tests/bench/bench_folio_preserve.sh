#!/bin/bash
# Bench: what the folio size of a memfd costs at a host
# kexec. Per size, one QEMU host run of harness/memfd_folio_preserve: two
# memfds of that size side by side, one in 4 KiB pages, one in 2 MiB shmem
# THP folios (shmem_enabled=advise + MADV_HUGEPAGE, the folio sizes checked
# by value), filled with data (fault-in and write, timed), PRESERVE_FD of
# each twice (memfd_pin_folios and kho_preserve_folio per folio; the
# first also migrates folios out of KHO scratch, which is CMA), kexec,
# RETRIEVE_FD of each, then every byte read back through a fresh mapping.
# Times are CLOCK_MONOTONIC inside the QEMU host (TCG: absolute numbers are
# slow; the 4K / 2M ratio is the figure).
# KVMLU_BENCH_FOLIO_MIB: sizes in MiB (default "1024 2048").
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
sizes=${KVMLU_BENCH_FOLIO_MIB:-1024 2048}
work=$top/build/harness/bench-folio
mkdir -p "$work"

if [ "${KVMLU_HARNESS_NO_BUILD:-0}" != 1 ]; then
	kernel/build.sh >"$work/kernel.log" 2>&1 ||
		{ tail -n 20 "$work/kernel.log"; echo "bench_folio_preserve: kernel/build.sh failed"; exit 1; }
fi
kdir=$(readlink -f build/kernel)
grep -q '^CONFIG_TRANSPARENT_HUGEPAGE=y' "$kdir/config" 2>/dev/null || {
	echo "bench_folio_preserve: SKIP (kernel $kdir has no CONFIG_TRANSPARENT_HUGEPAGE: no 2 MiB memfd folios)"
	exit 0
}
[ -x build/bin/kvmlu-bench-folio ] || { echo "bench_folio_preserve: build/bin/kvmlu-bench-folio missing (make)"; exit 1; }
tests/harness/mkinitramfs.sh "$work/initramfs.cpio" "$kdir/bzImage" >"$work/initramfs.log" 2>&1 ||
	{ tail -n 10 "$work/initramfs.log"; echo "bench_folio_preserve: mkinitramfs.sh failed"; exit 1; }

ms_gib() { # ms_gib LOG OP KIND: ms/GiB of the "BENCH OP KIND ..." line
	grep -a "BENCH $2 $3 " "$1" | sed -n 's/.*(\([0-9.]*\) ms\/GiB).*/\1/p' | head -n 1
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (b > 0 ? a / b : 0)}'; }

rows=()
for mib in $sizes; do
	out=$(KVMLU_HARNESS_APPEND="${KVMLU_HARNESS_APPEND:-} kvmlu.folio_mib=$mib" \
		tests/harness/run-case.sh memfd_folio_preserve "$kdir/bzImage" \
		"$work/initramfs.cpio" "$work/$mib")
	log=$work/$mib/harness-memfd_folio_preserve.log
	case $out in
	*"PASS: "*) ;;
	*) echo "$out"; echo "bench_folio_preserve: $mib MiB did not pass, log $log"; exit 1 ;;
	esac
	echo "$mib MiB each (log $log):"
	grep -a 'FOLIO ' "$log" | sed 's/^\[[ 0-9.]*\] /  /'
	for op in fill preserve-first preserve retrieve verify; do
		s=$(ms_gib "$log" "$op" small) h=$(ms_gib "$log" "$op" huge)
		rows+=("$(printf '%-14s %6s %12s %12s %8s' "$op" "$mib" "$s" "$h" "$(ratio "$s" "$h")")")
	done
done
echo
echo "ms per GiB inside the QEMU host (TCG), one run per size, both kinds side by side"
printf '%-14s %6s %12s %12s %8s\n' step MiB 4KiB_folios 2MiB_folios 4K/2M
printf '%s\n' "${rows[@]}"
echo "fill: fault-in and write; preserve-first: PRESERVE_FD, which also migrates every"
echo "folio out of KHO scratch (CMA) before pinning it; preserve: PRESERVE_FD again after"
echo "closing that session (pin + KHO bookkeeping only; this session crosses the kexec);"
echo "retrieve: RETRIEVE_FD after the kexec; verify: every byte read back through a new"
echo "mapping (PMD-mapped for 2 MiB folios)"
