# Harness case (docs/live-update-memory.md, lever 4), and the source of
# tests/bench/bench_folio_preserve.sh's numbers: a memfd in 2 MiB shmem
# THP folios survives a kexec through LUO with its folios still 2 MiB,
# next to a memfd of the same size in 4 KiB pages, in one run.
#  stage 1: shmem_enabled=advise (this QEMU host only; the setting a kvmlu
#    host is installed with), kvmlu-bench-folio fills both memfds, checks
#    by value that the huge one grew ShmemHugePages by its whole size and
#    is PMD-mapped whole, the small one not at all, times PRESERVE_FD;
#  stage 2 (new kernel, shmem_enabled back to its default `never`):
#    RETRIEVE_FD of each, timed; ShmemHugePages grows by the whole huge
#    file at its RETRIEVE_FD and by 0 at the small one's; every byte of
#    both equal; the huge one PMD-mapped whole again; no kernel WARNING or
#    BUG in dmesg.
# Each memfd is 1 GiB, or kvmlu.folio_mib=N MiB from the kernel command line
# (KVMLU_HARNESS_APPEND=kvmlu.folio_mib=2048: what the bench does); 6G of
# QEMU host RAM holds two of 2 GiB.
HARNESS_MEM=6G
HARNESS_TIMEOUT=900

folio_mib() { # MiB in each of the two memfds: kvmlu.folio_mib= on the command line, or 1024
	_m=$(sed -n 's/.*kvmlu\.folio_mib=\([0-9]*\).*/\1/p' /proc/cmdline)
	echo "${_m:-1024}"
}

folio_run() { # folio_run STAGE
	kvmlu-bench-folio "$1" --mib "$(folio_mib)" >/tmp/folio.out 2>&1
	_rc=$?
	cat /tmp/folio.out
	[ $_rc -eq 4 ] && skip "$(sed -n 's/^TEST SKIPPED: //p' /tmp/folio.out)"
	[ $_rc -eq 0 ] || fail "kvmlu-bench-folio $1 exited $_rc: $(grep 'TEST FAILED' /tmp/folio.out | tail -n 1)"
}

stage1() {
	command -v kvmlu-bench-folio >/dev/null || skip "kvmlu-bench-folio not in the initramfs (make)"
	[ -w /sys/kernel/mm/transparent_hugepage/shmem_enabled ] ||
		skip "no /sys/kernel/mm/transparent_hugepage/shmem_enabled: kernel without CONFIG_TRANSPARENT_HUGEPAGE"
	echo advise >/sys/kernel/mm/transparent_hugepage/shmem_enabled
	harness_log "shmem_enabled: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled)"
	folio_run preserve
	kexec_next_stage
}

stage2() {
	harness_log "shmem_enabled: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled)"
	folio_run retrieve
	if dmesg | grep -E 'WARNING:|BUG:|memfd_luo' | grep -v 'memfd_luo: .*registered' >/tmp/folio.dmesg; then
		cat /tmp/folio.dmesg
		grep -qE 'WARNING:|BUG:' /tmp/folio.dmesg && fail "kernel warned during retrieve: $(head -n 1 /tmp/folio.dmesg)"
	fi
	pass "$(folio_mib) MiB memfd in 2 MiB folios came back in 2 MiB folios (ShmemHugePages, PMD-mapped), 4 KiB one in 4 KiB pages, data equal"
}
