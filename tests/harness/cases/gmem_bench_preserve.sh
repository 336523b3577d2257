# Bench case (tests/bench/bench_gmem_preserve.sh reads its BENCH lines; as a
# `make check` case it shows that a 256 MiB guest_memfd and memfd survive a
# kexec together): kernel/selftests/gmem_luo_kexec -b 256 times
# LIVEUPDATE_SESSION_PRESERVE_FD (stage 1) and RETRIEVE_FD (stage 2) of a
# guest_memfd and a memfd of the same size in one session, in one run.
HARNESS_NAME=harness/gmem_bench_preserve
HARNESS_MEM=2G
HARNESS_TIMEOUT=300

gmem_selftest=/kvmlu/kselftest/gmem_luo_kexec
gmem_bench_mib=256

gmem_bench() { # gmem_bench STAGE
	local rc
	"$gmem_selftest" -b "$gmem_bench_mib" -s "$1" >/tmp/gmem.out 2>&1
	rc=$?
	cat /tmp/gmem.out
	[ $rc -eq 4 ] && skip "$(grep 'TEST SKIPPED' /tmp/gmem.out | sed 's/^TEST SKIPPED: //')"
	[ $rc -eq 0 ] || fail "gmem_luo_kexec -b $gmem_bench_mib -s $1 exited $rc: $(grep 'TEST FAILED' /tmp/gmem.out | tail -n 1)"
	[ "$(grep -c '^BENCH ' /tmp/gmem.out)" -eq 2 ] || fail "stage $1 printed no BENCH lines"
}

stage1() {
	[ -x "$gmem_selftest" ] ||
		skip "$gmem_selftest missing (kernel/selftests/build.sh builds it only against headers of a kernel with the guest_memfd patches)"
	gmem_bench 1
	kexec_next_stage
}

stage2() {
	gmem_bench 2
	pass "preserve and retrieve of $gmem_bench_mib MiB guest_memfd and memfd timed"
}
