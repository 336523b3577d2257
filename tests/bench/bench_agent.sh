#!/bin/bash
# Bench: the time kvmlu-agent adds to the VMs' blackout in a host update,
# for 1 and 8 VMs (KVMLU_BENCH_AGENT_VMS to change), from the harness
# (QEMU host, TCG). One host update per VM count (agent_bench_blackout
# case); every figure comes from the agent's own report of that run:
#
#   blackout     pause (VMM's paused_at_ns) to resume (restored VMM's
#                resumed_at_ns), mean over the VMs
#   kexec        the kexec phase: reboot() to `kvmlu-agent --restore`
#                starting in the new kernel (the kernel's share)
#   vmm_own      the VMM's own prepare-update + restore time, mean
#   agent_added  blackout - kexec - vmm_own: the agent's share (waiting for
#                the other VMs' prepare, load-kernel, store-journal,
#                starting the restores, polling), mean
# plus the agent's phases inside the blackout. TCG makes every figure
# slower than hardware; compare agent_added with blackout in the same run.
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
counts=${KVMLU_BENCH_AGENT_VMS:-1 8}
work=$top/build/harness/bench-agent
marker=$top/build/harness/agent-bench-vms
mkdir -p "$work"
trap 'rm -f "$marker"' EXIT
command -v jq >/dev/null || { echo "bench_agent: jq missing"; exit 1; }

kernel/build.sh >"$work/kernel.log" 2>&1 ||
	{ tail -n 20 "$work/kernel.log"; echo "bench_agent: kernel/build.sh failed"; exit 1; }
kdir=$(readlink -f build/kernel)

ms() { awk -v n="$1" 'BEGIN {printf "%.1f", n / 1e6}'; }

printf '%-4s %12s %10s %10s %12s %10s %10s %10s %10s\n' vms blackout_ms kexec_ms \
	vmm_own_ms agent_added_ms prepare_ms load_ms journal_ms restore_ms
for n in $counts; do
	echo "$n" >"$marker"
	tests/harness/mkinitramfs.sh "$work/initramfs.cpio" "$kdir/bzImage" >/dev/null ||
		{ echo "bench_agent: mkinitramfs.sh failed"; exit 1; }
	out=$(tests/harness/run-case.sh agent_bench_blackout "$kdir/bzImage" \
		"$work/initramfs.cpio" "$work/vms$n")
	log=$work/vms$n/harness-agent_bench_blackout.log
	case $out in
	*"PASS: "*) ;;
	*) echo "$out"; echo "bench_agent: $n VMs did not pass, log $log"; exit 1 ;;
	esac
	rep=$(grep -a -m1 'AGENT-BENCH-REPORT ' "$log" | sed 's/.*AGENT-BENCH-REPORT //' | jq '.updates[0]')
	[ "$(jq -r .outcome <<<"$rep")" = done ] ||
		{ echo "bench_agent: $n VMs: outcome $(jq -r .outcome <<<"$rep"), log $log"; exit 1; }
	phase() { jq -r ".phases[\"$1\"] | .end_ns - .start_ns" <<<"$rep"; }
	kx=$(phase kexec)
	bo=$(jq '[.vms[].blackout_ns] | add / length' <<<"$rep")
	own=$(jq '[.vms[] | .vmm_prepare_ns + .vmm_restore_ns] | add / length' <<<"$rep")
	added=$(awk -v b="$bo" -v k="$kx" -v o="$own" 'BEGIN {print b - k - o}')
	printf '%-4s %12s %10s %10s %12s %10s %10s %10s %10s\n' "$n" "$(ms "$bo")" "$(ms "$kx")" \
		"$(ms "$own")" "$(ms "$added")" "$(ms "$(phase prepare)")" \
		"$(ms "$(phase load-kernel)")" "$(ms "$(phase store-journal)")" \
		"$(ms "$(phase restore)")"
done
echo "means over the VMs of one update each; agent_added = blackout - kexec - the VMMs' own prepare+restore (TCG)"
