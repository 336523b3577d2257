#!/bin/bash
# The test run behind `make check`: the include-layering lint, cmocka unit
# tests, native /dev/kvm integration tests, then the QEMU host-harness
# cases. Every case ends as PASS, FAIL or SKIP (with its reason); the last
# line is the summary "N passed, N failed, N skipped" that CI reads.
# Nothing runs twice: a failure is a failure. Exit status 1 on any FAIL.
#
# KVMLU_TESTS=lint,unit,native,harness picks suites; KVMLU_TEST_FILTER=regex
# picks lint/native/harness cases by name.
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -u
cd "$(dirname "$0")/.."
top=$PWD
logs=$top/build/test-logs
mkdir -p "$logs"
suites=${KVMLU_TESTS:-lint,unit,native,harness}
filter=${KVMLU_TEST_FILTER:-.}
pass=0 fail=0 skip=0
failed=()

result() { # result PASS|FAIL|SKIP name [reason]
	case $1 in
	PASS) pass=$((pass + 1)); echo "PASS: $2" ;;
	FAIL) fail=$((fail + 1)); failed+=("$2"); echo "FAIL: $2${3:+ ($3)}" ;;
	SKIP) skip=$((skip + 1)); echo "SKIP: $2 (${3:-no reason given})" ;;
	esac
}

want() { [[ ",$suites," == *",$1,"* ]]; }

# Debian's stock kernel and the busybox initramfs for the Linux guest tests
# (unit, native and harness), fetched and built once into caches here, not
# by whichever test happens to run first: on a machine without /dev/kvm the
# native test that used to do it is skipped. Failing that, those tests SKIP
# with the reason (exit 77 of the scripts means offline or no busybox-static).
if want unit || want harness; then
	out=$(tests/guest/linux/prepare.sh) || echo "setup: Linux guest not available: $out"
fi

if want unit; then
	echo "== unit tests (cmocka, ASan+UBSan)"
	for t in build/san/test/test_*; do
		[ -x "$t" ] || continue
		name=unit/$(basename "$t")
		log=$logs/${name//\//_}.log
		timeout 300 "$t" >"$log" 2>&1
		rc=$?
		while IFS=$'\t' read -r status case reason; do
			# A case skipped for the QEMU host (tests/unit/need_cap.h)
			# must be shipped there, or it would run nowhere.
			if [ "$status" = SKIP ] && [[ $reason == *harness/unit_on_nested_kvm* ]] &&
				! grep -q "^$t " tests/harness/cases/unit_on_nested_kvm.files; then
				status=FAIL reason="skipped for harness/unit_on_nested_kvm, whose .files does not ship $t"
			fi
			result "$status" "$name/$case" "$reason"
		done < <(awk -f tests/unit/cmocka_results.awk "$log")
		if [ $rc -ne 0 ] && ! grep -q '^\[  FAILED  \]' "$log"; then
			result FAIL "$name" "exit $rc, see $log"
			tail -n 20 "$log"
		elif [ $rc -ne 0 ]; then
			tail -n 30 "$log"
		fi
	done
fi

# A case script exits 0 (pass), 77 (skip: its last output line is the
# reason) or anything else (fail). Its output goes to a log, shown on FAIL.
run_case() { # run_case suite script timeout
	local name=$1/$(basename "$2" .sh) log rc
	[[ $name =~ $filter ]] || return 0
	log=$logs/${name//\//_}.log
	timeout --foreground -k 10 "$3" "$2" >"$log" 2>&1
	rc=$?
	case $rc in
	0) result PASS "$name" ;;
	77)
		# Without /dev/kvm, or without a capability the test needs
		# (kv_need: "this machine lacks guest_memfd (...)"), a native
		# test runs in the QEMU host instead: the harness's native cases
		# run exactly those (tests/harness/cases/native_common.inc).
		if [ "$1" = native ] && [ ! -c /dev/kvm ] && want harness &&
			grep -q 'no /dev/kvm on this machine' "$log"; then
			echo "MOVED: $name: no /dev/kvm here; runs in the QEMU host as harness/native_*/${name#native/}"
		elif [ "$1" = native ] && want harness &&
			[[ $(tail -n 1 "$log") == "this machine lacks "* ]]; then
			lacks=$(tail -n 1 "$log")
			echo "MOVED: $name: ${lacks%%: runs in the QEMU host*}; runs in the QEMU host as harness/native_*/${name#native/}"
		else
			result SKIP "$name" "$(tail -n 1 "$log")"
		fi ;;
	124) result FAIL "$name" "timed out after $3 s, log $log"; tail -n 30 "$log" ;;
	*) result FAIL "$name" "exit $rc, log $log"; tail -n 30 "$log" ;;
	esac
}

if want lint; then
	echo "== lint (include layering, tests/lint/)"
	for s in tests/lint/*.sh; do
		[ -x "$s" ] && run_case lint "$s" 120
	done
fi

if want native; then
	echo "== native tests (kvmlu-vmm on this machine's /dev/kvm)"
	for s in tests/native/*.sh; do
		[ -x "$s" ] && run_case native "$s" 600
	done
fi

if want harness; then
	echo "== harness tests (QEMU host running the project's kernel)"
	if [ -x tests/harness/check.sh ]; then
		# The harness prints its own PASS:/FAIL:/SKIP: lines.
		while IFS= read -r line; do
			case $line in
			"PASS: "*) result PASS "${line#PASS: }" ;;
			"FAIL: "*) result FAIL "${line#FAIL: }" ;;
			"SKIP: "*) r=${line#SKIP: }; result SKIP "${r%% (*}" "$(sed -n 's/^[^(]*(\(.*\))$/\1/p' <<<"$r")" ;;
			*) echo "$line" ;;
			esac
		done < <(KVMLU_TEST_FILTER=$filter tests/harness/check.sh 2>&1)
	else
		result SKIP harness "tests/harness/check.sh not present"
	fi
fi

echo
if [ $fail -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${failed[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
exit
}
