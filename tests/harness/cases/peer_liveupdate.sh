# Peer test: upstream tools/testing/selftests/liveupdate/liveupdate, the
# /dev/liveupdate ioctl tests (kselftest harness, no kexec). Each of its
# TAP results is reported as peer/liveupdate/<test>; the case passes when
# the binary exits 0.
HARNESS_NAME=peer/liveupdate
HARNESS_TIMEOUT=120

stage1() {
	[ -e /dev/liveupdate ] || fail "/dev/liveupdate missing"
	/peer/liveupdate/liveupdate >/tmp/peer.out 2>&1
	rc=$?
	cat /tmp/peer.out
	# TAP: "ok 3 liveupdate_device.name", "not ok 4 ...", "ok 5 ... # SKIP why"
	sed -n -E 's/^(not ok|ok) [0-9]+ ([^ ]+)(.*)$/\1|\2|\3/p' /tmp/peer.out |
	while IFS='|' read -r st t rest; do
		t=peer/liveupdate/${t#liveupdate_device.}
		case "$st$rest" in
		*"# SKIP"*) report SKIP "$t" "${rest#*# SKIP }" ;;
		"not ok"*) report FAIL "$t" "see the serial log" ;;
		*) report PASS "$t" ;;
		esac
	done
	[ $rc -eq 0 ] || fail "liveupdate exited $rc"
	pass "liveupdate ioctl tests passed"
}
