# Harness case: a VMM killed after prepare-update but before the kexec
# loses its VM (the kernel closes its LUO session with the process and
# unpreserves the files), and only that one: the other VM survives, and
# the restore of the lost one says which session is missing and why.
# Stage 1 also aborts one prepare first: abort-update resumes the VM
# unchanged and releases the session (the same name can be prepared again).
HARNESS_MEM=2G
HARNESS_TIMEOUT=600

. /harness/vm_common.sh
# The sanitizer build (ASan+UBSan) when it is there: these paths must be clean.
[ -x /kvmlu/san/kvmlu-vmm ] && VM_BIN=/kvmlu/san/kvmlu-vmm

stage1() {
	vm_need_binaries
	vm_start vm-keep 64M 1
	vm_start vm-lost 64M 1
	vm_wait_running vm-keep
	vm_wait_running vm-lost

	r=$(vm_ctl vm-keep prepare-update)
	echo "$r" | grep -q '"ok":true' || fail "vm-keep: first prepare-update refused: $r"
	r2=$(vm_ctl vm-keep resume)
	echo "$r2" | grep -q '"class":"AlreadyPrepared"' || fail "vm-keep: resume while prepared: $r2"
	a=$(vm_ctl vm-keep abort-update)
	echo "$a" | grep -q '"state":"running"' || fail "vm-keep: abort-update: $a"
	t=$(vm_last vm-keep tick)
	vm_wait_tick vm-keep "$t" 60 || fail "vm-keep: ticks stuck at $t after abort-update"
	a=$(vm_ctl vm-keep abort-update)
	echo "$a" | grep -q '"class":"NotPrepared"' || fail "vm-keep: second abort-update: $a"
	report PASS harness/vm_lost_when_vmm_killed/abort_resumes "resume refused while prepared; abort-update resumed, ticks on"

	vm_prepare vm-keep
	vm_prepare vm-lost
	pid=$(cat /tmp/vm-lost.pid)
	kill -9 "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
	kill -0 "$pid" 2>/dev/null && fail "vm-lost: VMM $pid still alive after SIGKILL"
	harness_log "vm-lost: VMM $pid killed after prepare-update; kexec"
	echo "$pid" >"$HARNESS_CARRY/vm-lost.killed"
	vm_kexec_next_stage
}

stage2() {
	vm_need_binaries
	vm_restore vm-keep
	vm_restore vm-lost
	vm_check_continued vm-keep
	pid=$(cat /tmp/vm-lost.pid)
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	kill -0 "$pid" 2>/dev/null && fail "vm-lost: restore still running although its session should be gone"
	wait "$pid"
	rc=$?
	why=$(tail -n 1 /tmp/vm-lost.vmm)
	[ $rc -eq 4 ] || fail "vm-lost: restore exited $rc, expected 4 (no session of that name) as its VMM was killed before the kexec"
	case $why in
	*"RETRIEVE_SESSION"*"no session of that name"*ENOENT*) ;;
	*) fail "vm-lost: restore failed without naming the missing session: $why" ;;
	esac
	report PASS harness/vm_lost_when_vmm_killed/lost_vm_reported \
		"vm-lost (VMM pid $(cat "$HARNESS_CARRY/vm-lost.killed") killed after prepare-update) lost: $why"
	pass "vm-keep survived; vm-lost lost because its VMM died before the kexec (restore exit $rc: $why)"
}
