# Harness case: the native tests of the control and agent sockets, run inside the QEMU host on a machine without /dev/kvm
# (tests/harness/cases/native_common.inc says how).
HARNESS_TIMEOUT=1200
HARNESS_MEM=3G

. /harness/native_common.sh

stage1() {
	native_run '^(bad_control|control_|agent_|libvirt_)'
}
