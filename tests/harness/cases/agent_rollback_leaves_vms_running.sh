# Harness case: every way a host update fails before the kexec leaves all
# VMs running and says what failed. One stage, two witness VMs and the
# agent; in turn: a kernel image that does not load (garbage), a missing
# initrd (the CLI) and an empty one (the agent), a VMM that does not answer
# (SIGSTOPped), a VM whose prepare-update fails (already prepared by hand:
# the agent prepares vm-a, fails on vm-b, rolls back both). After each:
# exit status 1, the reason in the report, both VMs running, no update
# held, no kernel loaded.
HARNESS_MEM=3G
HARNESS_TIMEOUT=600

. /harness/agent_common.sh

expect_failed() { # expect_failed SUBTEST WHAT-IN-REPORT ARGS...: host-update must fail
	_name=$1 _want=$2
	shift 2
	kvmlu host-update "$@" >/tmp/$_name.out 2>&1
	_rc=$?
	cat /tmp/$_name.out
	[ $_rc = 1 ] || fail "$_name: host-update exited $_rc, expected 1"
	grep -q -- "$_want" /tmp/$_name.out || fail "$_name: output lacks '$_want'"
	[ "$(cat /sys/kernel/kexec_loaded)" = 0 ] || fail "$_name: a kernel is left loaded"
	ag_running vm-a
	ag_running vm-b
	report PASS "harness/agent_rollback_leaves_vms_running/$_name" "$_want; VMs running"
}

stage1() {
	ag_need
	vm_start vm-a 64M 1
	vm_start vm-b 64M 1
	vm_wait_running vm-a
	vm_wait_running vm-b
	ag_config 5000
	ag_start
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build the next initramfs"
	cmdline=$(ag_next_cmdline)

	head -c 2000000 /dev/urandom >/tmp/garbage.bzImage
	expect_failed bad_kernel "the new kernel does not load" \
		--kernel /tmp/garbage.bzImage --append "$cmdline"
	expect_failed missing_initrd "/tmp/no-such-initrd" \
		--kernel "$HARNESS_KERNEL" --initrd /tmp/no-such-initrd --append "$cmdline"
	: >/tmp/empty.cpio
	expect_failed empty_initrd "initrd /tmp/empty.cpio: not a non-empty regular file" \
		--kernel "$HARNESS_KERNEL" --initrd /tmp/empty.cpio --append "$cmdline"
	expect_failed no_kho_cmdline "lacks kho=on" \
		--kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio --append "console=ttyS0"

	kill -STOP "$(cat /tmp/vm-b.pid)"
	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$cmdline" >/tmp/mute.out 2>&1
	rc=$?
	kill -CONT "$(cat /tmp/vm-b.pid)"
	cat /tmp/mute.out
	[ $rc = 1 ] || fail "mute_vmm: host-update exited $rc, expected 1"
	grep -q "VM vm-b: its VMM (/run/vm-b.sock) does not answer" /tmp/mute.out ||
		fail "mute_vmm: the silent VMM is not named"
	ag_running vm-a
	ag_running vm-b
	report PASS harness/agent_rollback_leaves_vms_running/mute_vmm "refused, vm-b named, VMs running"

	# prepare-update's one argument (the agent sends half its prepare
	# timeout): a bad value is refused and changes nothing; 0 hashes
	# every chunk in the pause, and the checksum says so.
	r=$($VM_CTL -t 120 "$VM_RUN_DIR/vm-b.sock" '{"cmd":"prepare-update","args":{"running_hash_ms":-1}}')
	echo "$r" | grep -q '"class":"InvalidRequest"' || fail "prepare-update with running_hash_ms -1: $r"
	ag_running vm-b
	r=$($VM_CTL -t 120 "$VM_RUN_DIR/vm-b.sock" '{"cmd":"prepare-update","args":{"running_hash_ms":0}}')
	echo "$r" | grep -q '"ok":true' || fail "manual prepare-update of vm-b: $r"
	[ "$(echo "$r" | json_num checksum_running_chunks)" = 0 ] &&
		[ "$(echo "$r" | json_num checksum_paused_chunks)" -gt 0 ] &&
		echo "$r" | grep -q '"checksum_full_reason":"running_hash_ms is 0' ||
		fail "prepare-update with running_hash_ms 0 hashed while running: $r"
	expect_failed prepare_fails "VM vm-b: prepare-update failed" \
		--kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio --append "$cmdline"
	grep -q "rolled-back" /tmp/prepare_fails.out || fail "prepare_fails: not rolled back"
	grep -qE '^  vm-a +aborted' /tmp/prepare_fails.out || fail "prepare_fails: vm-a not aborted"

	kvmlu report | tee /tmp/report.out
	pass "bad kernel, missing/empty initrd, no kho=on, mute VMM, failing prepare: all refused or rolled back, VMs running"
}
