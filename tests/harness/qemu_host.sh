# The QEMU host: what every QEMU that plays a KVM host runs as (the harness
# cases, the fleet, the demo, the host-update bench). Sourced, not run.
#
# The CPU model is EPYC (Zen 1: AVX2 and XSAVE, nested SVM with NPT)
# without the features QEMU's TCG cannot emulate, not `max`. Why:
# with `-cpu max` on QEMU 7.2, about one nested witness boot in sixteen
# triple-faulted (#PF 0x14 on a page nothing had changed) and the QEMU
# host itself triple-faulted in about one long run in three (EPYC: 0 of 40
# boots, but later one more in a full run; the host's own fault rarer
# but not gone; all this with two vCPUs, see below). What `max`
# adds over EPYC is TCG's newest, least-tested emulation: MPX (its XSAVE
# components), PKU, LA57, VAES, and more. Turning AVX off instead
# broke XRSTOR in nested guests: Debian's guest kernel then killed its init
# with "bad frame in rt_sigreturn" (tests/harness/README.md, "No retries").
#
# One vCPU. The emulator's faults (a nested witness triple-faulting at boot
# with #PF 0x14/0x10, the QEMU host itself triple-faulting) need two vCPUs
# of one QEMU host running at once on QEMU 7.2's multi-threaded TCG:
# single-threaded TCG (thread=single) faulted 0 of 80 witness boots with
# `-cpu max`, and one vCPU 0 of 80, against 3 of 49 with two vCPUs
# multi-threaded. Single-threaded TCG with two vCPUs is not the way out:
# it lets one vCPU run until it halts or a 100 ms kick timer fires, and a
# 2-vCPU Linux guest stalled for minutes. With one vCPU the QEMU host's kernel
# schedules the nested vCPU threads itself (the stock Linux guest case ran
# in 1m22 against 1m46 with two), and the harness runs two QEMU hosts at
# once, one per core (check.sh). tests/harness/README.md, "No retries", has
# the whole story.
#
# QEMU itself is Debian's 7.2 with the project's fix for a timer interrupt
# that its TCG lost, after which the QEMU host never took another
# (tests/harness/qemu/build.sh; built once, then cached; check.sh passes
# its answer down in KVMLU_HARNESS_QEMU). A failed build
# leaves a name that says so where the binary's would be.
#
# KVMLU_HARNESS_CPU, KVMLU_HARNESS_ACCEL, KVMLU_HARNESS_QEMU and
# KVMLU_HARNESS_SMP replace these for experiments.
if [ -n "${KVMLU_HARNESS_QEMU:-}" ]; then
	QEMU_HOST_BIN=$KVMLU_HARNESS_QEMU
else
	QEMU_HOST_BIN=$("$(dirname "${BASH_SOURCE[0]}")/qemu/build.sh") ||
		QEMU_HOST_BIN="the harness's QEMU (tests/harness/qemu/build.sh failed)"
fi
QEMU_HOST_ACCEL=${KVMLU_HARNESS_ACCEL:-tcg}
QEMU_HOST_CPU=${KVMLU_HARNESS_CPU:-EPYC,-rdseed,-sha-ni,-fxsr-opt,-misalignsse,-3dnowprefetch,-osvw,-topoext,-nrip-save,-xsavec}
QEMU_HOST_SMP=${KVMLU_HARNESS_SMP:-1}

# The QEMU host's TSC counts at this machine's rate (TCG reads the host's
# counter; KVM without TSC scaling passes it through), but its kernel's
# first boot calibrates it against the PIT, which goes wrong when this
# machine is loaded: seen 2026-12-05, "PIT calibration deviates from HPET:
# 179533 2089188 ... Detected 179.533 MHz", every clock of that boot 11.7x
# fast until the clocksource watchdog gave up on the TSC, the wall clock
# 7 s ahead, and so every figure taken across the kexec negative (kvmlu
# report's kexec phase and blackouts: agent_host_update_two_vms failed).
# So the first boot gets this machine's own rate as its early one, as each
# later stage gets its predecessor's (vm_kexec_load_next in vm_common.inc).
# The rate is kept per boot of this machine (its rate cannot change within
# one), since a machine that runs for days loses its boot lines from the
# kernel's log; with neither, the calibration as before.
qemu_host_tsc_cache=${KVMLU_CACHE:-/var/cache/kvmlu}/host-tsc-khz.$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
QEMU_HOST_TSC_KHZ=$(dmesg 2>/dev/null | sed -n \
	-e 's/.*tsc: Refined TSC clocksource calibration: \([0-9]*\)\.\([0-9][0-9][0-9]\) MHz.*/\1\2/p' \
	-e 's/.*tsc: Detected \([0-9]*\)\.\([0-9][0-9][0-9]\) MHz processor.*/\1\2/p' | tail -n 1)
[ -n "$QEMU_HOST_TSC_KHZ" ] || QEMU_HOST_TSC_KHZ=$(cat "$qemu_host_tsc_cache" 2>/dev/null)
case $QEMU_HOST_TSC_KHZ in ''|*[!0-9]*) QEMU_HOST_TSC_KHZ= ;; esac
[ -n "$QEMU_HOST_TSC_KHZ" ] && [ "$QEMU_HOST_TSC_KHZ" -lt 500000 ] && QEMU_HOST_TSC_KHZ=
[ -n "$QEMU_HOST_TSC_KHZ" ] && [ ! -s "$qemu_host_tsc_cache" ] &&
	{ mkdir -p "${qemu_host_tsc_cache%/*}" && echo "$QEMU_HOST_TSC_KHZ" >"$qemu_host_tsc_cache"; } 2>/dev/null
QEMU_HOST_TSC_APPEND=${QEMU_HOST_TSC_KHZ:+tsc_early_khz=$QEMU_HOST_TSC_KHZ}
