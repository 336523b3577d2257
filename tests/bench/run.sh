#!/bin/bash
# `make bench`: every tests/bench/bench_*.sh in name order. Each prints its
# own table; figures that matter are ratios measured side by side in one run
# (these machines are noisy), never absolute thresholds.
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -u
cd "$(dirname "$0")/../.."
rc=0
for b in tests/bench/bench_*.sh; do
	[ -x "$b" ] || continue
	echo "=== $(basename "$b" .sh)"
	"$b" || { echo "bench $(basename "$b") failed (exit $?)"; rc=1; }
	echo
done
exit $rc
}
