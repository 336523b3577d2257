# Harness case for `make soak` only (tests/soak/run.sh writes
# build/harness/soak-faults with the number of faulted upgrades; without
# it the case skips): tests/soak/upgrade_faults.sh on the nested KVM, for
# a machine without /dev/kvm. Every time of the soak (the upgrade's
# deadline, the faults' delays and stops, its waits) is scaled by
# KV_WAIT_SCALE, so the faults land before and after the deadline as on
# hardware. A hand-over takes tens of seconds here: 500 rounds are hours.
HARNESS_TIMEOUT=86400
HARNESS_MEM=3G

stage1() {
	[ -f /harness/soak_faults ] || skip "a soak case: run by tests/soak/run.sh"
	export KVMLU_SOAK_FAULTS=$(cat /harness/soak_faults) PATH=/usr/bin:$PATH
	export KV_WAIT_SCALE=10
	/usr/bin/bash /kvmlu/tree/tests/soak/upgrade_faults.sh >/tmp/soak.log 2>&1 &
	_sp=$!
	tail -f /tmp/soak.log 2>/dev/null | grep -E 'round [0-9]+:|faulted upgrades|FAIL' &
	_tp=$!
	wait $_sp
	rc=$?
	kill $_tp 2>/dev/null
	pkill -f 'tail -f /tmp/soak.log' 2>/dev/null
	[ $rc = 0 ] || fail "faulted upgrades: $(grep -E '^FAIL|faulted upgrades' /tmp/soak.log | tail -n 1)"
	pass "$(grep 'faulted upgrades' /tmp/soak.log | tail -n 1 | sed 's/^\[[^]]*\] //')"
}
