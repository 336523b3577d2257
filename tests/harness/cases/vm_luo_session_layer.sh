# Harness case: the LUO layer (common/luo_session.c) against
# the real /dev/liveupdate of the project's kernel. Runs the cmocka unit
# test tests/unit/common/test_luo_session.c, whose device tests SKIP on machines
# without LUO: here they must run (create, GET_NAME, PRESERVE_FD, a second
# preserve of the same memfd refused with EBUSY, abort by close; the
# exclusive device held by another process -> EBUSY after the wait).
# Single stage, no kexec: the kexec path is in the vm_* cases.
HARNESS_TIMEOUT=180

stage1() {
	t=/kvmlu/test/test_luo_session
	[ -x "$t" ] || skip "build/san/test/test_luo_session not built (make tests-build)"
	[ -e /dev/liveupdate ] || fail "/dev/liveupdate missing: kernel without LIVEUPDATE or liveupdate=on"
	"$t" >/tmp/luo-unit.log 2>&1
	rc=$?
	cat /tmp/luo-unit.log
	grep -q '^\[  SKIPPED \]' /tmp/luo-unit.log &&
		fail "some LUO device tests skipped although /dev/liveupdate exists"
	[ $rc -eq 0 ] || fail "test_luo_session exited $rc"
	n=$(grep -c '^\[       OK \]' /tmp/luo-unit.log)
	pass "test_luo_session: $n cases passed on the real /dev/liveupdate, none skipped"
}
