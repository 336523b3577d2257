# The QEMU host: what every QEMU that plays a KVM host runs as (the harness
# cases, the fleet, the demo, the host-update bench). Sourced, not run.
#
# The CPU model is EPYC (Zen 1: AVX2 and XSAVE, nested SVM with NPT)
# without the features QEMU's TCG cannot emulate, not `max`. Issue 19:
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
# One vCPU. Issue 19's faults (a nested witness triple-faulting at boot
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
# KVMLU_HARNESS_CPU, KVMLU_HARNESS_ACCEL, KVMLU_HARNESS_QEMU and
# KVMLU_HARNESS_SMP replace these for experiments.
QEMU_HOST_BIN=${KVMLU_HARNESS_QEMU:-qemu-system-x86_64}
QEMU_HOST_ACCEL=${KVMLU_HARNESS_ACCEL:-tcg}
QEMU_HOST_CPU=${KVMLU_HARNESS_CPU:-EPYC,-rdseed,-sha-ni,-fxsr-opt,-misalignsse,-3dnowprefetch,-osvw,-topoext,-nrip-save,-xsavec}
QEMU_HOST_SMP=${KVMLU_HARNESS_SMP:-1}
