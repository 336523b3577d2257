# The CPU of every QEMU host kvmlu boots (harness cases, the fleet, the
# demo, the bench): sourced, sets HARNESS_QEMU_CPU. KVMLU_HARNESS_CPU
# overrides it for experiments.
#
# `max` gives nested SVM. Without AVX: QEMU 7.2 is the first release that
# emulates AVX under TCG, and with it nested witness boots failed (3 of 49
# in one series on 2026-12-04: triple faults with #PF 0x14, a hang) and the
# QEMU host itself triple-faulted in 1 of 3 runs; without it, 0 of 40
# boots and no host fault (tests/harness/README.md, "Retries"; issue 19).
HARNESS_QEMU_CPU=${KVMLU_HARNESS_CPU:-max,-avx,-avx2}
