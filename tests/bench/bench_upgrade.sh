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
# (2 vCPU, 512 MiB). Release build (build/bin). No thresholds: the table
# is the result. BENCH_UPGRADE_ROUNDS / BENCH_UPGRADE_SIZES override.
set -u
cd "$(dirname "$0")/../.."
VMM=build/bin/kvmlu-vmm
CTL=build/bin/kvmlu-ctl
WITNESS=build/guest/witness.bin
rounds=${BENCH_UPGRADE_ROUNDS:-20}
cases=${BENCH_UPGRADE_SIZES:-"memfd:256M memfd:2G memfd:8G guest_memfd:256M"}
for f in "$VMM" "$CTL" "$WITNESS"; do
	[ -e "$f" ] || { echo "bench_upgrade: $f not built (make)"; exit 1; }
done
[ -w /dev/kvm ] || { echo "bench_upgrade: SKIP: /dev/kvm not usable"; exit 0; }
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
		jq -r .return.blackout_ms <<<"$r" >>"$work/blackout"
		jq -r .return.create_ms <<<"$r" >>"$work/create"
		jq -r .return.memory_copied_bytes <<<"$r" >>"$work/copied"
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
exit $rc
