# Harness case: after the kexec, a VM whose restore cannot finish is held,
# not lost, and runs on once the cause is fixed. Installed as the README
# says (shipped configs/agent.json, the units' directories). Stage 1: two
# witness VMs, host update. Stage 2, before `kvmlu-agent --restore`, two
# causes a host can have: vm-ser's serial file cannot be opened (a
# directory stands at serial_dir/vm-ser.serial), vm-ctl's control socket
# cannot be bound (a plain file stands at run_dir/vm-ctl.sock). The agent
# must report both "held" with the reason (outcome partial, not failed);
# each VMM keeps its VM paused with the session taken and answers on a
# control socket (vm-ctl on the held name @kvmlu/held/vm-ctl). Then the
# causes are removed, `resume` is sent, and both guests run on: same boot
# id, the memory checksum after the kexec equal to the one at pause, ticks
# going on, the guest's own verification passing.
HARNESS_MEM=3G
HARNESS_TIMEOUT=900

. /harness/agent_common.sh

stage1() {
	ag_need
	ag_install_shipped
	ag_unit_dirs
	vm_start vm-ctl 64M 1
	vm_start vm-ser 64M 1
	vm_wait_running vm-ctl
	vm_wait_running vm-ser
	ag_start
	for vm in vm-ctl vm-ser; do
		vm_last $vm boot >"$HARNESS_CARRY/$vm.boot"
	done
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build the next initramfs"
	harness_log "host-update: kexec to stage 2"
	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$(ag_next_cmdline)"
	fail "kvmlu host-update returned $? instead of kexecing; $(tail -n 3 /tmp/agent.log)"
}

held_ctl() { # held_ctl N SOCK CMD: one request to a held VMM
	$VM_CTL -t 300 "$2" "{\"cmd\":\"$3\"}"
}

stage2() {
	ag_need
	ag_use_shipped
	ag_unit_dirs
	for vm in vm-ctl vm-ser; do
		_stale=$(vm_last $vm tick)
		echo "${_stale:-0}" >/tmp/$vm.stale
	done
	# The two causes.
	rm -f "$VM_SERIAL_DIR/vm-ser.serial"
	mkdir "$VM_SERIAL_DIR/vm-ser.serial"
	echo 0 >/tmp/vm-ser.stale	# its log starts afresh once it can be opened
	: >"$VM_RUN_DIR/vm-ctl.sock"

	$KVMLU_AGENT --config "$AG_CONF" --restore >/tmp/restore.out 2>&1
	rc=$?
	cat /tmp/restore.out
	[ $rc != 0 ] || fail "kvmlu-agent --restore exited 0 with two VMs held"
	ag_start
	kvmlu report | tee /tmp/report.out
	grep -q ': partial' /tmp/report.out || fail "report: outcome not partial"
	grep -qE '^  vm-ser +held ' /tmp/report.out || fail "report: vm-ser not held"
	grep -qE '^  vm-ctl +held ' /tmp/report.out || fail "report: vm-ctl not held"
	grep -q 'error: restore: held by kvmlu-vmm .*--serial .*vm-ser.serial' /tmp/report.out ||
		fail "report: vm-ser's reason does not name its serial file"
	grep -q 'error: restore: held by kvmlu-vmm .*vm-ctl.sock.*@kvmlu/held/vm-ctl' /tmp/report.out ||
		fail "report: vm-ctl's reason does not name its socket and where it is held"
	grep -q 'held, not lost' /tmp/report.out || fail "report: no note that held VMs are not lost"
	report PASS harness/agent_restore_holds_vm_until_fixed/reported_held "both VMs reported held, with their reasons"

	ser_sock=$VM_RUN_DIR/vm-ser.sock
	ctl_sock=@kvmlu/held/vm-ctl
	for pair in "vm-ser $ser_sock" "vm-ctl $ctl_sock"; do
		set -- $pair
		st=$(held_ctl $1 $2 status)
		echo "$st" | grep -q '"state":"held"' || fail "$1: status on $2: $st"
		echo "$st" | grep -q '"resumable":true' || fail "$1: not resumable: $st"
		r=$(held_ctl $1 $2 pause)
		echo "$r" | grep -q '"class":"Held"' || fail "$1: pause of a held VM not refused with Held: $r"
		sleep 2
		# vm-ser has no serial file to show ticks in; its status says held.
		[ $1 = vm-ser ] || [ "$(vm_last $1 tick)" = "$(cat /tmp/$1.stale)" ] ||
			fail "$1: the guest ran while held"
		# resume before the cause is fixed: still held, says why.
		r=$(held_ctl $1 $2 resume)
		echo "$r" | grep -q '"class":"Held"' || fail "$1: resume with the cause still there: $r"
	done
	report PASS harness/agent_restore_holds_vm_until_fixed/held_paused "held VMs stay paused, answer status, refuse other commands"

	rmdir "$VM_SERIAL_DIR/vm-ser.serial"
	rm -f "$VM_RUN_DIR/vm-ctl.sock"
	for pair in "vm-ser $ser_sock" "vm-ctl $ctl_sock"; do
		set -- $pair
		r=$(held_ctl $1 $2 resume)
		echo "$r" | grep -q '"state":"running"' || fail "$1: resume after the fix: $r"
		harness_log "$1 resumed after the fix: $r"
	done
	# vm-ctl now answers on its own path; the held name is gone.
	vm_ctl vm-ctl status | grep -q '"state":"running"' || fail "vm-ctl: not running on $VM_RUN_DIR/vm-ctl.sock"
	$VM_CTL -t 5 "$ctl_sock" '{"cmd":"status"}' >/dev/null 2>&1 && fail "vm-ctl still answers on $ctl_sock"
	for vm in vm-ctl vm-ser; do
		vm_wait_tick $vm "$(cat /tmp/$vm.stale)" 120 || fail "$vm: no tick after resume"
		[ "$(vm_last $vm boot)" = "$(cat "$HARNESS_CARRY/$vm.boot")" ] || fail "$vm: boot id changed"
		# Restored lazily, the guest runs before its RAM is all verified.
		st=$(vm_wait_verified $vm)
		echo "$st" | grep -q '"phase":"restored"' || fail "$vm: update-status: $st"
		echo "$st" | grep -q '"memory_verified":true' || fail "$vm: memory not verified: $st"
		[ "$(echo "$st" | json_str checksum_now)" = "$(echo "$st" | json_str checksum_recorded)" ] ||
			fail "$vm: checksum after the kexec differs from the one at pause: $st"
		sum=$(sed -n "/^  $vm /s/.* \([0-9a-f]\{32\}\) .*/\1/p" /tmp/report.out | head -n 1)
		[ -n "$sum" ] && [ "$sum" = "$(echo "$st" | json_str checksum_now)" ] ||
			fail "$vm: checksum $(echo "$st" | json_str checksum_now) is not the one the report gives at pause ($sum)"
		v=$($VM_CTL -t 320 "$VM_RUN_DIR/$vm.sock" '{"cmd":"guest-verify","args":{"timeout_ms":300000}}')
		echo "$v" | grep -q '"verified":true' || fail "$vm: guest self-verification: $v"
	done
	pass "held VMs resumed once the causes were fixed: same boot ids, checksums equal to those at pause, guests verified"
}
