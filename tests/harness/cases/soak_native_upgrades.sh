# Harness case for `make soak` only (tests/soak/run.sh writes
# build/harness/soak-upgrades with the number of upgrades; without it the
# case skips): tests/soak/native_upgrades.sh on the nested KVM, for a
# machine without /dev/kvm.
HARNESS_TIMEOUT=5400
HARNESS_MEM=3G

stage1() {
	[ -f /harness/soak_upgrades ] || skip "a soak case: run by tests/soak/run.sh"
	export KVMLU_SOAK_UPGRADES=$(cat /harness/soak_upgrades) PATH=/usr/bin:$PATH
	# The upgrade's 10 s deadline is hardware's (tests/native/upgrade_lib.sh).
	export KV_UPGRADE_TIMEOUT_MS=120000
	/usr/bin/bash /kvmlu/tree/tests/soak/native_upgrades.sh >/tmp/soak.log 2>&1
	rc=$?
	grep -E 'round [0-9]+:|FAIL' /tmp/soak.log | tail -n 40
	[ $rc = 0 ] || fail "native soak: $(grep '^FAIL' /tmp/soak.log | tail -n 1)"
	pass "$KVMLU_SOAK_UPGRADES live upgrades of a 4-vCPU witness on the nested KVM, 0 failures"
}
