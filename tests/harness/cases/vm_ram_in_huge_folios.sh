# Harness case (lever 4, 2 MiB folios): on a host set up as README.md's
# "Installing on a host" says (shmem_enabled=advise; here through the
# kernel command line, so every stage has it), a witness VM's memfd RAM
# is in 2 MiB folios, and stays so through prepare-update (dirty logging
# on and off), a kexec and the restore.
#  stage 1: a 256 MiB, 2-vCPU witness (it fills all its RAM); its status
#    says memory_folio "2M", shmem_enabled "advise", and memory_huge, the
#    bytes its VMM maps with PMDs (measured, /proc/PID/smaps), is at least
#    half the RAM; the VMM's log names the folio size; prepare-update;
#    ShmemHugePages in /proc/meminfo carried; kexec.
#  stage 2: restore; same guest, checksum equal, guest verify ok
#    (vm_check_continued); ShmemHugePages at least 256 MiB (the retrieved
#    file kept its folios); the restored VMM's memory_huge at least half
#    the RAM again.
HARNESS_MEM=2G
HARNESS_TIMEOUT=700
HARNESS_APPEND="transparent_hugepage_shmem=advise"

. /harness/vm_common.sh

V=vm-huge
RAM_MIB=256

shmem_huge_kib() {
	sed -n 's/^ShmemHugePages: *\([0-9]*\) kB/\1/p' /proc/meminfo
}

check_huge() { # check_huge WHEN: status says 2M and at least half the RAM is PMD-mapped
	_s=$(vm_ctl "$V" status)
	harness_log "$V $1: status $_s"
	[ "$(echo "$_s" | json_str memory_folio)" = 2M ] || fail "$V $1: memory_folio is not 2M: $_s"
	[ "$(echo "$_s" | json_str shmem_enabled)" = advise ] || fail "$V $1: shmem_enabled is not advise: $_s"
	_h=$(echo "$_s" | json_num memory_huge)
	[ -n "$_h" ] || fail "$V $1: status has no memory_huge: $_s"
	[ "$_h" -ge $((RAM_MIB * 1024 * 1024 / 2)) ] ||
		fail "$V $1: only $_h bytes of $RAM_MIB MiB mapped in 2 MiB folios"
	HUGE=$_h
}

stage1() {
	vm_need_binaries
	grep -q '\[advise\]' /sys/kernel/mm/transparent_hugepage/shmem_enabled ||
		skip "shmem_enabled is $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled) despite transparent_hugepage_shmem=advise (kernel without THP?)"
	vm_start "$V" "${RAM_MIB}M" 2
	vm_wait_running "$V"
	grep -q "guest RAM in 2 MiB folios" "/tmp/$V.vmm" ||
		fail "$V: the VMM did not log its folio size: $(head -n 3 "/tmp/$V.vmm")"
	# The witness fills its RAM at boot; its second tick comes after that.
	vm_wait_tick "$V" 1 180 || fail "$V: no second tick"
	check_huge running
	harness_log "ShmemHugePages $(shmem_huge_kib) kB before prepare-update"
	vm_prepare "$V"
	shmem_huge_kib >"$HARNESS_CARRY/shmem_huge_kib"
	harness_log "ShmemHugePages $(cat "$HARNESS_CARRY/shmem_huge_kib") kB after prepare-update"
	echo "$HUGE" >"$HARNESS_CARRY/huge"
	vm_kexec_next_stage
}

stage2() {
	vm_need_binaries
	# Synchronous verification: the lazy path maps each verified chunk with
	# 4 KiB PTEs (UFFDIO_CONTINUE), so memory_huge would read 0 although the
	# folios stay 2 MiB (docs/live-update-memory.md, lever 3 and 4 together).
	vm_restore "$V" --verify sync
	vm_check_continued "$V"
	_k=$(shmem_huge_kib)
	harness_log "ShmemHugePages $_k kB after the restore (stage 1: $(cat "$HARNESS_CARRY/shmem_huge_kib") kB)"
	[ "$_k" -ge $((RAM_MIB * 1024)) ] ||
		fail "$V: ShmemHugePages $_k kB after the restore, less than the $RAM_MIB MiB of RAM"
	check_huge restored
	pass "$V: $RAM_MIB MiB memfd RAM in 2 MiB folios ($(cat "$HARNESS_CARRY/huge") bytes PMD-mapped before, $HUGE after the kexec, ShmemHugePages $_k kB), checksum equal, guest verify ok"
}
