# Harness case: the unit tests that need /dev/kvm or /dev/liveupdate, run
# inside the QEMU host on the project's kernel (nested KVM, LUO, the
# guest_memfd patches). On a machine without /dev/kvm this is where they
# run at all; on one with it, it adds their run against the patched
# kernel (KVM_LINK_GUEST_MEMFD, a real LUO device). Every cmocka case is a
# result of its own: harness/unit_on_nested_kvm/<binary>/<case>.
HARNESS_TIMEOUT=900

stage1() {
	# This host is the QEMU harness: tests may make tap interfaces here
	# (test_vm_virtio_net), never on the machine that runs QEMU.
	export KVMLU_TEST_TAPS=1
	# The tests this machine skipped for a capability it lacks (NEED_CAP,
	# tests/unit/need_cap.h: guest_memfd, /dev/liveupdate) were moved
	# here to run: a capability missing here too is a FAIL, not a SKIP.
	export KVMLU_TEST_REQUIRE_CAPS=1
	ran=0 bad=0 tab=$(printf '\t')
	for t in /kvmlu/unit/test_*; do
		[ -x "$t" ] || continue
		b=$(basename "$t")
		# Non-zero: a case failed or a sanitizer fired.
		"$t" >"/tmp/$b.log" 2>&1
		rc=$?
		awk -f /kvmlu/unit/cmocka_results.awk "/tmp/$b.log" >"/tmp/$b.results"
		while IFS=$tab read -r st name why; do
			report "$st" "harness/$HARNESS_CASE/$b/$name" "$why"
			ran=$((ran + 1))
			[ "$st" = FAIL ] && bad=$((bad + 1))
		done <"/tmp/$b.results"
		if [ $rc -ne 0 ]; then
			bad=$((bad + 1))
			harness_log "$b exited $rc; its log ends:"
			tail -n 30 "/tmp/$b.log"
		fi
		grep -q '^PASS' "/tmp/$b.results" || {
			bad=$((bad + 1))
			harness_log "$b: no case passed here; its log ends:"
			tail -n 10 "/tmp/$b.log"
		}
	done
	[ $ran -gt 0 ] || fail "no unit test binary in /kvmlu/unit"
	[ $bad = 0 ] || fail "$bad failures among $ran unit test cases"
	pass "$ran unit test cases on the nested KVM"
}
