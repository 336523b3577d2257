# Harness case: a whole host update through the CLI, installed and run as
# the README says: the shipped configs/agent.json (only allow_kexec
# turned on), the directories the shipped units make at each boot, VMs
# on run_dir/<name>.sock and serial_dir/<name>.serial. Stage 1: two witness
# VMs (vm-a 1 vCPU 128 MiB, vm-b 2 vCPUs 256 MiB) and kvmlu-agent; `kvmlu
# vms` lists both; `kvmlu host-update --dry-run` passes preflight and
# changes nothing (no kernel loaded, both VMs running, no update held);
# then `kvmlu host-update` prepares both VMs, loads the kernel, stores the
# journal in LUO and kexecs. Stage 2: `kvmlu-agent --restore` (what
# kvmlu-restore.service runs) restores both from the journal; `kvmlu
# report` shows the update done, both VMs verified with equal checksums,
# blackout per VM and time per phase; same boot ids, ticks go on.
HARNESS_MEM=3G
HARNESS_TIMEOUT=900

. /harness/agent_common.sh

stage1() {
	ag_need
	ag_install_shipped
	ag_unit_dirs
	vm_start vm-a 128M 1
	vm_start vm-b 256M 2
	vm_wait_running vm-a
	vm_wait_running vm-b
	# The shipped kvmlu-thp.conf (ag_unit_dirs) took: RAM in 2 MiB folios.
	for vm in vm-a vm-b; do
		_f=$(vm_ctl $vm status | json_str memory_folio)
		[ "$_f" = 2M ] || fail "$vm: memory_folio is '$_f', not 2M, with the shipped kvmlu-thp.conf applied"
	done
	ag_start
	kvmlu vms | tee /tmp/vms.out
	[ "$(grep -c ' running ' /tmp/vms.out)" = 2 ] || fail "kvmlu vms does not show 2 running VMs"

	# Expectations for stage 2 travel in the initramfs: written before it is built.
	for vm in vm-a vm-b; do
		vm_last $vm boot >"$HARNESS_CARRY/$vm.boot"
	done
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build the next initramfs"
	cmdline=$(ag_next_cmdline)
	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$cmdline" --dry-run >/tmp/dry.out 2>&1
	rc=$?
	cat /tmp/dry.out
	[ $rc = 0 ] || fail "dry run exited $rc: $(grep 'failed in' /tmp/dry.out)"
	grep -q ': dry-run' /tmp/dry.out || fail "dry run not reported as dry-run"
	[ "$(cat /sys/kernel/kexec_loaded)" = 0 ] || fail "dry run left a kernel loaded"
	ag_running vm-a
	ag_running vm-b
	report PASS harness/agent_host_update_two_vms/dry_run "preflight ok, nothing loaded, VMs running"

	harness_log "host-update: kexec to stage 2"
	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$cmdline"
	fail "kvmlu host-update returned $? instead of kexecing; $(tail -n 3 /tmp/agent.log)"
}

stage2() {
	ag_need
	ag_use_shipped
	# A fresh /run, as after any boot: only what the units make is there.
	ag_unit_dirs
	# The serial logs are on disk and carried over: only newer ticks count.
	for vm in vm-a vm-b; do
		_stale=$(vm_last $vm tick)
		echo "${_stale:-0}" >/tmp/$vm.stale
	done
	$KVMLU_AGENT --config "$AG_CONF" --restore >/tmp/restore.out 2>&1
	rc=$?
	cat /tmp/restore.out
	[ $rc = 0 ] || fail "kvmlu-agent --restore exited $rc: $(grep 'failed in' /tmp/restore.out)"
	ag_start
	kvmlu report | tee /tmp/report.out
	grep -q ': done' /tmp/report.out || fail "report: update not done"
	[ "$(grep -cE '^  vm-[ab] +verified .* equal$' /tmp/report.out)" = 2 ] ||
		fail "report: not both VMs verified with equal checksums"
	for p in preflight prepare load-kernel store-journal kexec restore verify; do
		grep -qE "^  $p +[0-9.]+ m?s\$" /tmp/report.out || fail "report: no time for phase $p"
	done
	# Each VM's own steps, from its VMMs' replies through the journal.
	[ "$(grep -cE '^ +vmm prepare [0-9.]+ m?s: RAM preserved [0-9.]+ m?s while running, paused [0-9.]+ m?s' /tmp/report.out)" = 2 ] ||
		fail "report: not both VMs' prepare steps"
	[ "$(grep -cE '^ +vmm restore [0-9.]+ m?s: retrieve [0-9.]+ m?s, VM built [0-9.]+ m?s' /tmp/report.out)" = 2 ] ||
		fail "report: not both VMs' restore steps"
	kvmlu report --json >/tmp/report.json
	grep -q '"blackout_ns":-1' /tmp/report.json && fail "report: a VM without blackout"
	for vm in vm-a vm-b; do
		# One pause time: what prepare-update answered (the report's) is
		# what the restored VMM read from the state.
		_p_report=$(tr -d ' \n' </tmp/report.json | tr '{' '\n' | grep "\"name\":\"$vm\"" |
			json_num paused_ns)
		_p_vmm=$(vm_ctl $vm update-status | json_num paused_at_ns)
		[ -n "$_p_report" ] && [ "$_p_report" = "$_p_vmm" ] ||
			fail "$vm: paused_at_ns ${_p_report:-none} in the report, ${_p_vmm:-none} from the restored VMM"
		_boot=$(cat "$HARNESS_CARRY/$vm.boot")
		vm_wait_tick $vm "$(cat /tmp/$vm.stale)" 120 || fail "$vm: no tick after the restore"
		[ "$(vm_last $vm boot)" = "$_boot" ] || fail "$vm: boot id changed: guest restarted"
		ag_running $vm
		# The guest walks its RAM at CPL 3 under nested TCG: one ask, with
		# time for that (the VMM's default 10 s is hardware's).
		_v=$($VM_CTL -t 320 "$VM_RUN_DIR/$vm.sock" '{"cmd":"guest-verify","args":{"timeout_ms":300000}}')
		if ! echo "$_v" | grep -q '"verified":true'; then
			# What the guest and its VMM said last, to tell why.
			for _f in /tmp/$vm.*; do
				[ -f "$_f" ] && { echo "--- $_f"; tail -n 15 "$_f"; }
			done
			fail "$vm: guest self-verification: $_v"
		fi
	done
	pass "host-update through the CLI: vm-a and vm-b restored by the agent, checksums equal, same boot ids, phase times reported"
}
