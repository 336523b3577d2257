# Harness case: the native tests of a running VM (pause, resume, exits, vCPUs, memory backends, the Linux kernel), run inside the QEMU host on a machine without /dev/kvm
# (tests/harness/cases/native_common.inc says how).
HARNESS_TIMEOUT=1200
HARNESS_MEM=3G

. /harness/native_common.sh

stage1() {
	native_run '^(pause_|resume_|witness_|vcpus_|memory_backend|guest_|linux_kernel)'
}
