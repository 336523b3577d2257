#!/bin/bash
# `make bench` part for kvmlu-vmm: for a 256 MiB and a 2 GiB witness guest
# (2 vCPUs, release build), the pause and resume latency as measured by
# the VMM around the operation (median, min and max of 10 cycles, from
# the replies' latency_ns, shown in us), and the checksum figures from the `checksum`
# reply (median of 3: ms, GB/s, threads). Prints a table; no thresholds
# (the machines are shared and noisy).
set -u
cd "$(dirname "$0")/../.."
VMM=${KVMLU_VMM:-build/bin/kvmlu-vmm}
CTL=${KVMLU_CTL:-build/bin/kvmlu-ctl}
WITNESS=${KVMLU_WITNESS:-build/guest/witness.bin}
CYCLES=${KVMLU_BENCH_CYCLES:-10}
for f in "$VMM" "$CTL" "$WITNESS"; do
	[ -e "$f" ] || { echo "bench_vmm: $f not built (make)"; exit 1; }
done
[ -r /dev/kvm ] && [ -w /dev/kvm ] || { echo "bench_vmm: skipped: /dev/kvm not usable"; exit 0; }
command -v jq >/dev/null || { echo "bench_vmm: jq missing"; exit 1; }

dir=$(mktemp -d /tmp/kvmlu-bench-vmm.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

ctl() { "$CTL" -t 60 "$dir/ctl.sock" "$1"; }
# stats: median min max of numbers on stdin
stats() { sort -g | awk '{ v[NR] = $1 } END { printf "%.0f %.0f %.0f", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

printf '%-8s %-22s %-22s %-34s\n' memory "pause us (med/min/max)" "resume us (med/min/max)" "checksum (ms, GB/s, threads)"
for mem in 256M 2G; do
	rm -f "$dir/ctl.sock" "$dir/serial"
	"$VMM" run --name bench-$mem --memory $mem --cpus 2 --payload "$WITNESS" \
		--serial "$dir/serial" --control "$dir/ctl.sock" 2>"$dir/err" &
	pid=$!
	# Measure a guest in its steady state: after the fill, ticking.
	for _ in $(seq 1 600); do
		grep -q 'cpu=1 tick=' "$dir/serial" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || { echo "bench_vmm: VMM died: $(cat "$dir/err")"; exit 1; }
		sleep 0.1
	done
	grep -q 'cpu=1 tick=' "$dir/serial" || { echo "bench_vmm: $mem guest never ticked"; exit 1; }
	: >"$dir/pause"; : >"$dir/resume"; : >"$dir/sum"
	for i in $(seq 1 "$CYCLES"); do
		# ns in the replies; us here
		ctl '{"cmd":"pause"}' | jq -r '.return.latency_ns / 1000' >>"$dir/pause"
		if [ "$i" -le 3 ]; then
			ctl '{"cmd":"checksum"}' | jq -r '.return | "\(.checksum_ns / 1e6) \(.gbps) \(.threads)"' >>"$dir/sum"
		fi
		ctl '{"cmd":"resume"}' | jq -r '.return.latency_ns / 1000' >>"$dir/resume"
		sleep 0.3
	done
	p=$(stats <"$dir/pause"); r=$(stats <"$dir/resume")
	s=$(sort -g "$dir/sum" | sed -n 2p | awk '{ printf "%.1f ms, %.2f GB/s, %d threads", $1, $2, $3 }')
	printf '%-8s %-22s %-22s %-34s\n' "$mem" "${p// //}" "${r// //}" "$s"
	ctl '{"cmd":"shutdown"}' >/dev/null
	wait "$pid"; pid=
done
echo "(latencies measured inside kvmlu-vmm, $CYCLES cycles, 2 vCPUs; checksum: median of 3, paused)"
