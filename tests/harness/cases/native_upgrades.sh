# Harness case: the native live-upgrade tests, run inside the QEMU host on a machine without /dev/kvm
# (tests/harness/cases/native_common.inc says how).
HARNESS_TIMEOUT=1500
HARNESS_MEM=3G

. /harness/native_common.sh

stage1() {
	native_run '^upgrade_'
}
