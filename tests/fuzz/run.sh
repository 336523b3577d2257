#!/bin/bash
# `make fuzz`: run each libFuzzer target for a bounded time, starting from
# its seed corpus (tests/fuzz/corpus/<target>/, committed) and keeping what
# it finds in build/fuzz/corpus/<target>/. KVMLU_FUZZ_SECONDS sets the time
# per target (default 60). Any crash fails the run and leaves the input in
# build/fuzz/crashes/.
set -u
cd "$(dirname "$0")/../.."
secs=${KVMLU_FUZZ_SECONDS:-60}
rc=0 pass=0 fail=0
mkdir -p build/fuzz/crashes
for f in "$@"; do
	name=$(basename "$f")
	work=build/fuzz/corpus/$name
	mkdir -p "$work"
	seeds=tests/fuzz/corpus/$name
	[ -d "$seeds" ] || seeds=
	echo "== $name for ${secs}s"
	if "$f" -max_total_time="$secs" -artifact_prefix=build/fuzz/crashes/"$name"- \
		-print_final_stats=1 "$work" $seeds >build/fuzz/"$name".log 2>&1; then
		grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units)' build/fuzz/"$name".log | tail -n 1
		echo "PASS: fuzz/$name"; pass=$((pass + 1))
	else
		tail -n 40 build/fuzz/"$name".log
		echo "FAIL: fuzz/$name (input kept in build/fuzz/crashes/)"; fail=$((fail + 1)); rc=1
	fi
done
echo "$pass passed, $fail failed"
exit $rc
