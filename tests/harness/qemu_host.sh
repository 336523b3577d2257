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
# TCG runs single-threaded (thread=single: one host thread takes turns
# with every vCPU) instead of multi-threaded TCG. Issue 19, 2026-12-04:
# with `-cpu max`, where multi-threaded TCG faulted 3 of 49 witness boots,
# single-threaded TCG faulted 0 of 80; so the boot fault needs two vCPU
# threads running at once, i.e. a race in the emulator's nested paging.
# On this loaded 2-core machine it cost no time: vm_survive_kexec took
# 3m33 single-threaded against 4m35 multi-threaded, side by side.
#
# KVMLU_HARNESS_CPU, KVMLU_HARNESS_ACCEL and KVMLU_HARNESS_QEMU replace
# these for experiments.
QEMU_HOST_BIN=${KVMLU_HARNESS_QEMU:-qemu-system-x86_64}
QEMU_HOST_ACCEL=${KVMLU_HARNESS_ACCEL:-tcg,thread=single}
QEMU_HOST_CPU=${KVMLU_HARNESS_CPU:-EPYC,-rdseed,-sha-ni,-fxsr-opt,-misalignsse,-3dnowprefetch,-osvw,-topoext,-nrip-save,-xsavec}
