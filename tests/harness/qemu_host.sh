# The QEMU host: what every QEMU that plays a KVM host runs as (the harness
# cases, the fleet, the demo, the host-update bench). Sourced, not run.
#
# The CPU model is EPYC (Zen 1: AVX2 and XSAVE, nested SVM with NPT)
# without the features QEMU's TCG cannot emulate, not `max`. Issue 19:
# with `-cpu max` on QEMU 7.2, about one nested witness boot in sixteen
# triple-faulted (#PF 0x14 on a page nothing had changed) and the QEMU
# host itself triple-faulted in about one long run in three (EPYC: 0 of 40
# boots, but later one more in a full run; the host's own fault is rarer
# but not gone). What `max`
# adds over EPYC is TCG's newest, least-tested emulation: MPX (its XSAVE
# components), PKU, LA57, VAES, and more. Turning AVX off instead
# broke XRSTOR in nested guests: Debian's guest kernel then killed its init
# with "bad frame in rt_sigreturn" (tests/harness/README.md, "Retries").
#
# TCG stays multi-threaded. Issue 19, 2026-12-04: single-threaded TCG
# (thread=single) faulted 0 of 80 witness boots with `-cpu max`, against
# 3 of 49 multi-threaded, so the boot fault needs two vCPU threads at
# once; but single-threaded, the stock Linux guest on 2 vCPUs made no
# progress for minutes after its VMM started (QEMU at 28% of a core, on
# an idle machine), where multi-threaded TCG ran the whole case
# (linux_guest_survives_upgrade_and_kexec) in 1m46. Not usable as is.
#
# KVMLU_HARNESS_CPU, KVMLU_HARNESS_ACCEL and KVMLU_HARNESS_QEMU replace
# these for experiments.
QEMU_HOST_BIN=${KVMLU_HARNESS_QEMU:-qemu-system-x86_64}
QEMU_HOST_ACCEL=${KVMLU_HARNESS_ACCEL:-tcg}
QEMU_HOST_CPU=${KVMLU_HARNESS_CPU:-EPYC,-rdseed,-sha-ni,-fxsr-opt,-misalignsse,-3dnowprefetch,-osvw,-topoext,-nrip-save,-xsavec}
