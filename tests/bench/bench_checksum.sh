#!/bin/bash
# Guest RAM checksum (XXH3-128, libguestmem) against a plain memory read of
# the same memfd-backed mapping with the same threads, for 256 MiB and
# 2 GiB guests. Both are measured in the same process run, best of 3
# passes each; the ratio (checksum GB/s / read GB/s) is the figure to
# compare between runs, not the absolute speeds. Takes well under a minute.
set -u
cd "$(dirname "$0")/../.."
bin=build/bin/kvmlu-bench-mem
[ -x "$bin" ] || { echo "bench_checksum: $bin missing (run make bench)"; exit 1; }
cpus=$(getconf _NPROCESSORS_ONLN)
echo "checksum vs plain read, memfd RAM, $cpus CPUs online (ratio = checksum/read)"
rc=0
for size in 256M 2G; do
	for t in $(printf "%s\n" 1 "$cpus" | sort -un); do
		# one thread, then one per CPU
		"$bin" --size "$size" --threads "$t" --repeat 3 || rc=1
	done
done
exit $rc
