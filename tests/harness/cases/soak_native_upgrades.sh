# Harness case for `make soak` only (tests/soak/run.sh writes
# build/harness/soak-upgrades with the number of upgrades; without it the
# case skips): tests/soak/native_upgrades.sh on the nested KVM, for a
# machine without /dev/kvm. There a round takes 25-45 s (the witness's
# 4 vCPUs share the one-vCPU QEMU host's emulated CPU with the test's own
# polling; 75 s seen with the native suite's waits): 300 rounds are 2-4
# hours, and the bound leaves room for a loaded machine.
HARNESS_TIMEOUT=43200
HARNESS_MEM=3G

stage1() {
	[ -f /harness/soak_upgrades ] || skip "a soak case: run by tests/soak/run.sh"
	export KVMLU_SOAK_UPGRADES=$(cat /harness/soak_upgrades) PATH=/usr/bin:$PATH
	# The upgrade's 10 s deadline is hardware's (tests/native/upgrade_lib.sh).
	export KV_UPGRADE_TIMEOUT_MS=120000
	# And every other wait ten times longer, as for the native_* cases.
	export KV_WAIT_SCALE=10
	# Hours long: each round's lines (its blackout, the clock offsets its
	# check saw) go to the console as they come, so the host's log shows
	# how far it got.
	/usr/bin/bash /kvmlu/tree/tests/soak/native_upgrades.sh >/tmp/soak.log 2>&1 &
	_sp=$!
	tail -f /tmp/soak.log 2>/dev/null | grep -E 'round [0-9]+:|clock:|FAIL' &
	_tp=$!
	wait $_sp
	rc=$?
	kill $_tp 2>/dev/null
	pkill -f 'tail -f /tmp/soak.log' 2>/dev/null
	[ $rc = 0 ] || fail "native soak: $(grep '^FAIL' /tmp/soak.log | tail -n 1)"
	pass "$KVMLU_SOAK_UPGRADES live upgrades of a 4-vCPU witness on the nested KVM, 0 failures"
}
