# Peer test: upstream tools/testing/selftests/kho, as vmtest.sh runs it:
# its init.c becomes PID 1, kexecs /kernel with the same command line and no
# initramfs, and the next kernel's built-in test (lib/test_kho.c,
# CONFIG_TEST_KEXEC_HANDOVER) prints whether what it preserved came back.
# That kernel has no userspace and ends in a panic (panic=-1 powers QEMU
# off), so the verdict is read from the serial log, as upstream does.
HARNESS_NAME=peer/kho
HARNESS_TIMEOUT=120
HARNESS_PASS_LINE="KHO restore succeeded"
HARNESS_FAIL_LINE="KHO restore failed"

stage1() {
	# init.c mounts proc and debugfs itself and fails if they are mounted.
	mkdir -p /debugfs
	ln -sf /boot/bzImage /kernel
	umount /sys/kernel/debug
	umount /proc
	exec /peer/kho/init
}
