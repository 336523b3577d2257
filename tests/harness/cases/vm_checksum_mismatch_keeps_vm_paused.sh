# Harness case: memory that changed between the pause and the restore is
# never run. Stage 1 prepares a witness VM, then writes 8 bytes into its
# preserved RAM memfd from outside (through /proc/PID/fd, as a bad actor
# or a kernel bug would) and kexecs. Stage 2: `kvmlu-vmm restore` must see
# the memory checksum differ from the one recorded at pause, keep the VM
# paused (no tick line ever), keep the session unfinished (files held),
# say so on update-status and stderr (naming the one 2 MiB chunk that
# changed, from the chunk digests in the state), and exit 2 on shutdown.
HARNESS_MEM=2G
HARNESS_TIMEOUT=400

. /harness/vm_common.sh
# The sanitizer build (ASan+UBSan) when it is there: these paths must be clean.
[ -x /kvmlu/san/kvmlu-vmm ] && VM_BIN=/kvmlu/san/kvmlu-vmm

stage1() {
	vm_need_binaries
	vm_start vm-bad 64M 1
	vm_wait_running vm-bad
	vm_prepare vm-bad
	pid=$(cat /tmp/vm-bad.pid)
	fd=$(ls -l "/proc/$pid/fd" | grep 'memfd:.*vm-bad.*ram0 (deleted)' | sed -n 's/.* \([0-9]*\) -> .*/\1/p' | head -n 1)
	[ -n "$fd" ] || fail "vm-bad: no RAM memfd among $(ls -l /proc/$pid/fd | grep memfd)"
	printf 'CORRUPT!' | dd of="/proc/$pid/fd/$fd" bs=1 seek=$((32 << 20)) conv=notrunc 2>/dev/null ||
		fail "vm-bad: could not write into its RAM memfd (fd $fd)"
	harness_log "vm-bad: 8 bytes written at 32 MiB of its RAM memfd after prepare-update"
	vm_kexec_next_stage
}

stage2() {
	vm_need_binaries
	vm_restore vm-bad
	pid=$(cat /tmp/vm-bad.pid)
	i=0
	while ! grep -q "MEMORY CHECKSUM MISMATCH" /tmp/vm-bad.vmm 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || fail "vm-bad: restore exited instead of holding the VM: $(tail -n 2 /tmp/vm-bad.vmm)"
		[ $i -lt 300 ] || fail "vm-bad: no checksum verdict within 300 s"
		sleep 1
		i=$((i + 1))
	done
	harness_log "vm-bad: $(cat /tmp/vm-bad.vmm)"
	# The state's chunk digests name what changed: 8 bytes at 32 MiB of 64 MiB.
	grep -q "1 of 32 chunks of 2 MiB differ, the first is chunk 16" /tmp/vm-bad.vmm ||
		fail "vm-bad: the mismatch does not name chunk 16: $(grep MISMATCH /tmp/vm-bad.vmm)"
	sleep 3
	grep -q 'tick=' /tmp/vm-bad.serial 2>/dev/null && fail "vm-bad: the guest ran on changed memory"
	st=$(vm_ctl vm-bad update-status)
	echo "$st" | grep -q '"phase":"checksum-mismatch"' || fail "vm-bad: update-status: $st"
	echo "$st" | grep -q '"session_finished":false' || fail "vm-bad: session finished: $st"
	[ "$(echo "$st" | json_str checksum_recorded)" = "$(cat "$HARNESS_CARRY/vm-bad.checksum")" ] ||
		fail "vm-bad: recorded checksum is not the one prepare-update gave: $st"
	r=$(vm_ctl vm-bad resume)
	sleep 2
	grep -q 'tick=' /tmp/vm-bad.serial 2>/dev/null && fail "vm-bad: resume ran the guest on changed memory ($r)"
	vm_ctl vm-bad shutdown >/dev/null
	wait "$pid"
	rc=$?
	[ $rc -eq 2 ] || fail "vm-bad: restore exited $rc after shutdown, expected 2 (never resumed)"
	pass "checksum mismatch after the kexec: VM kept paused, never ran, session kept, exit 2"
}
