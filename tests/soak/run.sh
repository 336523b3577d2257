#!/bin/bash
# make soak: the tests that must never need a retry, many times over.
#  1. native: KVMLU_SOAK_UPGRADES (300) live upgrades of a 4-vCPU witness,
#     guest-verify every 25 (tests/soak/native_upgrades.sh), on this
#     machine's /dev/kvm or, without one, inside the QEMU host;
#  1b. native: KVMLU_SOAK_FAULTS (500) live upgrades, each with a fault
#     at a random message of the hand-over (tests/soak/upgrade_faults.sh,
#     which prints its counts: double runs and silent losses must be 0);
#     on this machine's /dev/kvm or, without one, inside the QEMU host
#     (harness/soak_upgrade_faults, every time scaled by KV_WAIT_SCALE);
#  2. KVMLU_SOAK_BOOTS (40) witness boots of 512 MiB with 2 vCPUs, one
#     after another in one QEMU host (harness/soak_witness_boots): the
#     direct count of the emulator's nested fault at boot;
#  3. KVMLU_SOAK_LINUX_BOOTS (40) boots of the stock Debian guest on 2
#     vCPUs with its records disk, one after another in one QEMU host
#     (harness/soak_linux_guest_boots): the count of the boot that twice
#     stopped linux_guest_disk_keeps_acked_records;
#  4. harness: every VM-survival and agent case (the witness's vm_*, the
#     stock Linux guest's three linux_guest_* cases that keep it across
#     upgrades and a kexec: its disk records, its clock and counter, its TCP
#     connections), and the native tests in the QEMU host (harness/native_*),
#     KVMLU_SOAK_ROUNDS (20) rounds.
# Prints each failure and ends with "N passed, N failed".
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -u
cd "$(dirname "$0")/../.."
rounds=${KVMLU_SOAK_ROUNDS:-20}
upgrades=${KVMLU_SOAK_UPGRADES:-300}
boots=${KVMLU_SOAK_BOOTS:-40}
linux_boots=${KVMLU_SOAK_LINUX_BOOTS:-40}
pass=0 fail=0
logs=build/test-logs/soak
mkdir -p "$logs" build/harness
# The Linux guest of the linux_guest_* and native cases, fetched and built
# as make check does (tests/run-tests.sh); without it they skip or fail.
out=$(tests/guest/linux/prepare.sh) || echo "soak: the Linux guest is not available: $out"

if [ -c /dev/kvm ]; then
	echo "soak: $upgrades live upgrades on this machine's /dev/kvm"
	KVMLU_SOAK_UPGRADES=$upgrades tests/soak/native_upgrades.sh >"$logs/native.log" 2>&1
	rc=$?
	filter=
else
	echo "soak: no /dev/kvm here: $upgrades live upgrades inside the QEMU host"
	echo "$upgrades" >build/harness/soak-upgrades
	KVMLU_TEST_FILTER='^harness/soak_native_upgrades$' \
		tests/harness/check.sh >"$logs/native.log" 2>&1
	grep -q '^PASS: harness/soak_native_upgrades' "$logs/native.log"
	rc=$?
	rm -f build/harness/soak-upgrades
fi
if [ $rc = 0 ]; then
	pass=$((pass + 1)); echo "PASS: soak/native_upgrades ($upgrades upgrades)"
else
	fail=$((fail + 1)); echo "FAIL: soak/native_upgrades: $(grep -E '^FAIL' "$logs/native.log" | tail -n 1)"
fi

faults=${KVMLU_SOAK_FAULTS:-500}
if [ -c /dev/kvm ]; then
	echo "soak: $faults faulted live upgrades on this machine's /dev/kvm"
	KVMLU_SOAK_FAULTS=$faults tests/soak/upgrade_faults.sh >"$logs/upgrade_faults.log" 2>&1
	rc=$?
	grep -E 'faulted upgrades' "$logs/upgrade_faults.log" | tail -n 1
	if [ $rc = 0 ]; then
		pass=$((pass + 1)); echo "PASS: soak/upgrade_faults ($faults upgrades)"
	else
		fail=$((fail + 1)); echo "FAIL: soak/upgrade_faults: $(grep -E '^FAIL' "$logs/upgrade_faults.log" | tail -n 1)"
	fi
else
	echo "soak: no /dev/kvm here: $faults faulted live upgrades inside the QEMU host"
	echo "$faults" >build/harness/soak-faults
	KVMLU_TEST_FILTER='^harness/soak_upgrade_faults$' \
		tests/harness/check.sh >"$logs/upgrade_faults.log" 2>&1
	rm -f build/harness/soak-faults
	grep -E '^(PASS|FAIL): harness/soak_upgrade_faults' "$logs/upgrade_faults.log" | tail -n 1
	if grep -q '^PASS: harness/soak_upgrade_faults' "$logs/upgrade_faults.log"; then
		pass=$((pass + 1)); echo "PASS: soak/upgrade_faults ($faults upgrades, in the QEMU host)"
	else
		fail=$((fail + 1)); echo "FAIL: soak/upgrade_faults: log $logs/upgrade_faults.log"
	fi
fi

# boots_case CASE FILE LINE WHAT: one boot-count case, LINE its count file
boots_case() {
	echo "soak: $4 inside the QEMU host"
	echo "$3" >"build/harness/$2"
	KVMLU_TEST_FILTER="^harness/$1\$" tests/harness/check.sh >"$logs/$1.log" 2>&1
	rm -f "build/harness/$2"
	if grep -q "^PASS: harness/$1" "$logs/$1.log"; then
		pass=$((pass + 1)); echo "PASS: soak/${1#soak_} ($4)"
	else
		fail=$((fail + 1)); echo "FAIL: soak/${1#soak_}: $(grep -E '^FAIL' "$logs/$1.log" | tail -n 1)"
	fi
}
boots_case soak_witness_boots soak-boots "$boots 512M 2" "$boots witness boots"
boots_case soak_linux_guest_boots soak-linux-boots "$linux_boots" "$linux_boots Linux guest boots"

round_cases='(vm_|agent_|native_|linux_guest_(disk_keeps|survives|tcp_survives))[a-z_]*'
for r in $(seq 1 "$rounds"); do
	KVMLU_TEST_FILTER="^harness/$round_cases\$" \
		tests/harness/check.sh >"$logs/round-$r.log" 2>&1
	p=$(grep -cE "^PASS: harness/$round_cases\$" "$logs/round-$r.log")
	f=$(grep -cE '^FAIL: ' "$logs/round-$r.log")
	pass=$((pass + p)) fail=$((fail + f))
	echo "soak: round $r of $rounds: $p cases passed, $f failed"
	grep -E '^FAIL: ' "$logs/round-$r.log"
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
exit
}
