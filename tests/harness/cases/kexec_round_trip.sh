# Harness case: the project's kernel kexecs itself with kexec_file_load and
# Kexec HandOver data reaches the next kernel.
# Stage 1: KHO is on (debugfs kho/out), note the boot id, kexec -s.
# Stage 2: a different boot id (a new kernel really booted), KHO found the
# handover data (dmesg, debugfs kho/in) and the kernel's own KHO test
# (CONFIG_TEST_KEXEC_HANDOVER) restored what it preserved.
HARNESS_TIMEOUT=120

stage1() {
	[ -d /sys/kernel/debug/kho/out ] ||
		fail "stage 1: /sys/kernel/debug/kho/out missing: KHO not enabled (kho=on?)"
	[ -e /dev/liveupdate ] || fail "stage 1: /dev/liveupdate missing (liveupdate=on?)"
	cat /proc/sys/kernel/random/boot_id >"$HARNESS_CARRY/boot_id"
	kexec_next_stage
}

stage2() {
	old=$(cat "$HARNESS_CARRY/boot_id")
	new=$(cat /proc/sys/kernel/random/boot_id)
	[ "$old" != "$new" ] || fail "stage 2: boot id $new unchanged: no new kernel booted"
	[ -d /sys/kernel/debug/kho/in ] ||
		fail "stage 2: /sys/kernel/debug/kho/in missing: no KHO data came in"
	dmesg_has 'KHO: found kexec handover data' ||
		fail "stage 2: dmesg lacks 'KHO: found kexec handover data'"
	dmesg_has 'KHO restore succeeded' ||
		fail "stage 2: the kernel's KHO test did not report 'KHO restore succeeded'"
	harness_log "$(dmesg | grep -m1 'KHO: exec from' || echo 'no exec-from line')"
	pass "kexec round trip: new boot id, KHO data in, test_kho restored"
}
