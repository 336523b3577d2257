#!/bin/bash
# `make bench`: harness/lvram_qemu_spike (step 0 of
# docs/libvirt-ram-in-place.md) at each RAM size of
# KVMLU_BENCH_LVRAM_SIZES (default "512M 2G"): QEMU 7.2's RAM kept in a
# LUO-preserved memfd across a kexec of the QEMU host, device state only
# in the migration image (x-ignore-shared). One row per size, from the
# host-side stamps of the case's serial log (one clock across the kexec):
#   image     bytes of the migration image
#   blackout  "lvram: stop" (stage 2) -> "lvram: running" (stage 3, after cont)
#   sums      the two full memfd checksums inside it (after the save; after
#             RETRIEVE_FD, before QEMU starts): O(RAM), the design's verify
#   bare      blackout - sums: what stays with verification off
#   kexec     the bare kexec: "kexec -e: stage 2 -> 3" -> "userspace stage 3"
# No thresholds (the case itself judges the values). KVMLU_BENCH_LVRAM_LOG=LOG
# prints the row of an earlier run's case log and runs nothing.
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
logs=build/test-logs
case_log=$logs/harness-lvram_qemu_spike.log

stamp() { # stamp LOG TEXT: host seconds of the first line with TEXT
	grep -a -m 1 -F "$2" "$1" | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'
}
ms_of() { # ms_of LOG REGEX: ms= of the first line matching REGEX
	grep -a -m 1 -E "$2" "$1" | sed -n 's/.* ms=\([0-9]*\).*/\1/p'
}
row() { # row RAM LOG
	local s r k u img s1 s2
	s=$(stamp "$2" "lvram: stop") r=$(stamp "$2" "lvram: running")
	k=$(stamp "$2" "kexec -e: stage 2 -> 3") u=$(stamp "$2" "userspace stage 3 ")
	img=$(grep -a -o 'image_bytes=[0-9]*' "$2" | head -n 1 | sed 's/.*=//')
	s1=$(ms_of "$2" '\] sum: sum=') s2=$(ms_of "$2" 'retrieved: sum=')
	if [ -z "$s" ] || [ -z "$r" ] || [ -z "$k" ] || [ -z "$u" ]; then
		printf "%6s  (no figures: the case did not get that far; log %s)\n" "$1" "$2"
		return
	fi
	awk -v ram="$1" -v s="$s" -v r="$r" -v k="$k" -v u="$u" -v img="${img:-0}" \
		-v s1="${s1:-0}" -v s2="${s2:-0}" 'BEGIN {
		bo = (r - s) * 1000; kx = (u - k) * 1000
		printf "%6s %10d %11.0f %7d %7d %9.0f %8.0f %7.2f %7.2f\n", ram, img, bo, s1, s2,
			bo - s1 - s2, kx, bo / kx, (bo - s1 - s2) / kx }'
}
header() {
	printf "%6s %10s %11s %7s %7s %9s %8s %7s %7s\n" ram image_B blackout_ms sum1_ms sum2_ms \
		bare_ms kexec_ms ratio bare/kx
}

if [ -n "${KVMLU_BENCH_LVRAM_LOG:-}" ]; then
	header
	row "${KVMLU_BENCH_LVRAM_RAM:--}" "$KVMLU_BENCH_LVRAM_LOG"
	exit 0
fi
rc=0
echo "QEMU 7.2, RAM in a LUO memfd across a kexec of the QEMU host (harness/lvram_qemu_spike)"
rows=()
for ram in ${KVMLU_BENCH_LVRAM_SIZES:-512M 2G}; do
	out=$(KVMLU_HARNESS_APPEND="${KVMLU_HARNESS_APPEND:-} kvmlu.lv_ram=$ram" \
		KVMLU_TEST_FILTER='^harness/lvram_qemu_spike$' tests/harness/check.sh 2>&1)
	grep -E '^(PASS|FAIL|SKIP): harness/lvram_qemu_spike' <<<"$out" | sed "s/^/  $ram: /"
	grep -q '^PASS: harness/lvram_qemu_spike$' <<<"$out" || rc=1
	cp "$case_log" "$logs/bench-lvram-$ram.log" 2>/dev/null
	rows+=("$(row "$ram" "$logs/bench-lvram-$ram.log")")
done
header
printf "%s\n" "${rows[@]}"
echo "blackout: stop -> running across the kexec (host clock); sum1/sum2: the memfd checksum"
echo "after the save and after RETRIEVE_FD; bare = blackout - sums; ratio = blackout / kexec."
exit $rc
}
