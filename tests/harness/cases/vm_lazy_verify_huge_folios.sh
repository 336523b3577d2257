# Harness case (docs/live-update-memory.md, levers 3+4): lazy verification
# after a kexec of guest RAM that is in 2 MiB folios. Lazy verification
# maps each verified chunk with UFFDIO_CONTINUE, which installs 4 KiB
# PTEs; this case shows what that does to the folios and that the
# guarantee holds. Host as README.md's "Installing on a host" sets it up
# (shmem_enabled=advise, here from the kernel command line, every stage).
#  stage 1: test_guestmem_folio (the remapping step, unit) with THP on;
#    vm-hl (128 MiB, 2 vCPUs) and vm-hc (64 MiB, 1 vCPU), witness
#    guests that fill their RAM: both in 2 MiB folios (status says
#    memory_folio 2M and at least half the RAM PMD-mapped); both
#    prepared; 8 bytes written into vm-hc's preserved RAM memfd at 32 MiB
#    from outside (chunk 16, inside a 2 MiB folio); ShmemHugePages
#    carried (it is the two VMs' RAM: nothing else here uses shmem THP);
#    kexec.
#  stage 2:
#  - vm-hl, restored lazily (background verifiers and guest faults): it
#    runs, same guest, verified lazily (not the synchronous fallback),
#    checksum equal, guest verify ok; ShmemHugePages right after the
#    resume and after the verdict is not below stage 1's: the retrieved
#    files keep their 2 MiB folios through UFFDIO_CONTINUE's 4 KiB
#    mappings; once all is verified the VMM maps them with 2 MiB entries
#    again (MADV_COLLAPSE, its log says so): memory_huge at least half
#    the RAM (without that step it read 2 MiB of 128: every chunk stayed
#    4 KiB-mapped, and KVM's nested page tables with it);
#  - vm-hc, restored lazily with no background pass
#    (KVMLU_TEST_LAZY_FAULT_ONLY): it ticks on the chunks it touches;
#    its own memory check walks into chunk 16 and never gets past it:
#    the VMM names chunk 16, holds the VM as checksum-mismatch, pauses it
#    before the touch, refuses resume, keeps the session; the guest never
#    prints its verify result; ShmemHugePages still not below stage 1's.
# Without userfaultfd, or without shmem THP in this kernel: SKIP.
HARNESS_MEM=2G
HARNESS_TIMEOUT=900
HARNESS_APPEND="transparent_hugepage_shmem=advise"

. /harness/vm_common.sh
# The sanitizer build (ASan+UBSan) when it is there: these paths must be clean.
[ -x /kvmlu/san/kvmlu-vmm ] && VM_BIN=/kvmlu/san/kvmlu-vmm

shmem_huge_kib() {
	sed -n 's/^ShmemHugePages: *\([0-9]*\) kB/\1/p' /proc/meminfo
}

check_huge() { # check_huge N MIB: status says 2M and at least half the RAM is PMD-mapped
	_s=$(vm_ctl "$1" status)
	[ "$(echo "$_s" | json_str memory_folio)" = 2M ] || fail "$1: memory_folio is not 2M: $_s"
	_h=$(echo "$_s" | json_num memory_huge)
	[ -n "$_h" ] && [ "$_h" -ge $(($2 * 1024 * 1024 / 2)) ] ||
		fail "$1: only ${_h:-no} bytes of $2 MiB mapped in 2 MiB folios: $_s"
	harness_log "$1: memory_folio 2M, $_h bytes PMD-mapped"
}

check_folios_kept() { # check_folios_kept WHEN: ShmemHugePages not below stage 1's
	_k=$(shmem_huge_kib)
	_was=$(cat "$HARNESS_CARRY/shmem_huge_kib")
	harness_log "ShmemHugePages $_k kB $1 (stage 1, after prepare-update: $_was kB)"
	[ "$_k" -ge "$_was" ] ||
		fail "ShmemHugePages $_k kB $1, $_was kB before the kexec: 2 MiB folios were lost or split"
}

stage1() {
	vm_lazy_expected || skip "no /dev/userfaultfd: this kernel has no CONFIG_USERFAULTFD, restores verify synchronously"
	vm_need_binaries
	grep -q '\[advise\]' /sys/kernel/mm/transparent_hugepage/shmem_enabled ||
		skip "shmem_enabled is $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled) despite transparent_hugepage_shmem=advise (kernel without THP?)"
	# The unit test of the remapping step, on a kernel with shmem THP
	# (this machine's own is at never: there it SKIPs).
	if [ -x /kvmlu/test/test_guestmem_folio ]; then
		/kvmlu/test/test_guestmem_folio >/tmp/test_guestmem_folio.log 2>&1 ||
			{ cat /tmp/test_guestmem_folio.log; fail "test_guestmem_folio failed with shmem_enabled=advise"; }
		grep -q 'OK \] test_collapse_maps_huge_folios_with_pmds_again' /tmp/test_guestmem_folio.log ||
			{ cat /tmp/test_guestmem_folio.log; fail "test_collapse_maps_huge_folios_with_pmds_again did not pass"; }
		report PASS "harness/$HARNESS_CASE/unit-collapse" "test_guestmem_folio with shmem_enabled=advise: PTE-mapped 2 MiB folios mapped with PMDs again"
	fi
	vm_start vm-hl 128M 2
	vm_start vm-hc 64M 1
	vm_wait_running vm-hl
	vm_wait_running vm-hc
	# The witness fills its RAM at boot; its second tick comes after that.
	vm_wait_tick vm-hl 1 240 || fail "vm-hl: no second tick"
	vm_wait_tick vm-hc 1 240 || fail "vm-hc: no second tick"
	check_huge vm-hl 128
	check_huge vm-hc 64
	vm_prepare vm-hl
	vm_prepare vm-hc
	vm_corrupt_ram vm-hc
	_k=$(shmem_huge_kib)
	harness_log "ShmemHugePages $_k kB after prepare-update"
	# Both VMs' RAM (192 MiB) in 2 MiB folios, at least half of it.
	[ "$_k" -ge $((96 * 1024)) ] || fail "ShmemHugePages $_k kB: the VMs' RAM is not in 2 MiB folios"
	echo "$_k" >"$HARNESS_CARRY/shmem_huge_kib"
	vm_kexec_next_stage
}

stage2_corrupted() {
	_pid=$(cat /tmp/vm-hc.pid)
	vm_lazy_touch_held vm-hc
	_t1=$VM_HELD_TICK
	_st=$(vm_ctl vm-hc update-status)
	echo "$_st" | grep -q '"phase":"checksum-mismatch"' || fail "vm-hc: update-status: $_st"
	echo "$_st" | grep -q '"session_finished":false' || fail "vm-hc: session finished: $_st"
	_r=$(vm_ctl vm-hc resume)
	echo "$_r" | grep -q 'ChecksumMismatch' || fail "vm-hc: resume not refused as a mismatch: $_r"
	sleep 2
	[ "$(vm_last vm-hc tick)" = "$_t1" ] || fail "vm-hc: resume ran the guest on changed memory"
	grep -q 'witness verify' /tmp/vm-hc.serial &&
		fail "vm-hc: the guest finished reading its memory: $(grep 'witness verify' /tmp/vm-hc.serial)"
	check_folios_kept "with vm-hc held"
	vm_ctl vm-hc shutdown >/dev/null
	wait "$_pid"
	_rc=$?
	[ $_rc -eq 2 ] || fail "vm-hc: restore exited $_rc after shutdown, expected 2"
	report PASS "harness/$HARNESS_CASE/mismatch" "2 MiB folios, lazy: the guest's touch of the changed chunk 16 never completed: held, paused, resume refused, exit 2"
}

stage2() {
	vm_need_binaries
	vm_restore vm-hl
	export KVMLU_TEST_LAZY_FAULT_ONLY=1
	vm_restore vm-hc
	unset KVMLU_TEST_LAZY_FAULT_ONLY
	vm_wait_restored vm-hl || fail "vm-hl: did not resume: $(tail -n 3 /tmp/vm-hl.vmm)"
	# vm-hc's folios count in ShmemHugePages only once its restore has
	# retrieved its files: wait for that too before comparing (a one-vCPU
	# QEMU host once compared while vm-hc's restore had not got there).
	vm_wait_restored vm-hc || fail "vm-hc: did not resume: $(tail -n 3 /tmp/vm-hc.vmm)"
	_st=$(vm_ctl vm-hl update-status)
	harness_log "vm-hl right after the resume: $_st"
	echo "$_st" | grep -q '"verify_mode":"lazy"' || fail "vm-hl: not verified lazily: $_st"
	check_folios_kept "right after vm-hl resumed"
	# Same guest, verified lazily, checksum equal, guest verify ok.
	vm_check_continued vm-hl
	check_folios_kept "with vm-hl verified"
	_s=$(vm_ctl vm-hl status)
	harness_log "vm-hl verified: memory_folio $(echo "$_s" | json_str memory_folio), memory_huge $(echo "$_s" | json_num memory_huge) bytes PMD-mapped of 128 MiB"
	harness_log "vm-hl: $(grep 'mapped with 2 MiB entries again' /tmp/vm-hl.vmm)"
	grep -q 'mapped with 2 MiB entries again' /tmp/vm-hl.vmm ||
		fail "vm-hl: the VMM did not map the verified RAM huge again: $(tail -n 3 /tmp/vm-hl.vmm)"
	echo "$_s" | json_num memory_huge >"/tmp/vm-hl.huge"
	[ "$(cat /tmp/vm-hl.huge)" -ge $((64 << 20)) ] ||
		fail "vm-hl: after the verdict only $(cat /tmp/vm-hl.huge) bytes of 128 MiB mapped with 2 MiB entries: $_s"
	report PASS "harness/$HARNESS_CASE/verified" "2 MiB folios verified lazily: checksum equal, guest verify ok, ShmemHugePages kept, $(cat /tmp/vm-hl.huge) bytes PMD-mapped again after the verdict"
	stage2_corrupted
	pass "lazy verification of RAM in 2 MiB folios: folios kept in the files ($(shmem_huge_kib) kB), checksum equal, guest verify ok; a changed chunk is never run (memory_huge after the verdict: $(cat /tmp/vm-hl.huge) bytes)"
}
