#!/bin/bash
# Proves: the upgrade tests' check of guest time (up_check_continue in
# upgrade_lib.sh) fails on a jump of the guest clock of more than 1 s
# (and the spread of lateness it saw before) and on time going back, and
# passes a pause, a late tick line (before or after the upgrade) and a
# sub-second step. It runs the real functions against a made-up witness:
# a serial log and a host clock that the test moves, so it needs no VM and
# runs the same on every machine.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"

KV_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kvmlu-$KV_NAME.XXXXXX")
trap kv_cleanup EXIT

# scenario PAUSE_MS JUMP_MS LATE_BEFORE LATE_AFTER [LATE_PRIMING]: five
# priming samples and a round's sample of a 4-vCPU guest whose clock is
# the host's less 5 s, then a pause of PAUSE_MS in which the guest clock
# steps by JUMP_MS, and the check. LATE_*: per vCPU, how long before the
# host saw a line its clock was read, in the round's sample, in the one
# after the upgrade and in the priming ones (none unless given).
# Prints the check's FAIL line, or "ok".
scenario() (
	host=1000000 tick=0 step=0
	read -r -a late <<<"$3"
	read -r -a late_after <<<"$4"
	read -r -a late_priming <<<"${5:-0 0 0 0}"
	up_clock() { UP_NOW=$host; }
	# Every read of the log: a second later, a new line from every vCPU.
	up_last_ticks() {
		local c
		host=$((host + 1000)) tick=$((tick + 1))
		for c in $(seq 0 $(($1 - 1))); do
			echo "$c $tick $((host - 5000 + step - ${late[c]}))"
		done
	}
	sleep() { :; }
	KV_PID=$BASHPID
	exec 2>&1
	saved=("${late[@]}") late=("${late_priming[@]}")
	up_offsets_prime 4
	late=("${saved[@]}")
	up_before_upgrade 4
	# The first line after the pause is read late by at most the pause.
	host=$((host + $1)) step=$2 late=("${late_after[@]}")
	(up_check_continue 4) >"$KV_DIR/out"
	grep '^FAIL' "$KV_DIR/out" || echo ok
)

expect() { # expect WHAT RESULT-REGEX SCENARIO-ARGS...
	local what=$1 want=$2 got
	shift 2
	got=$(scenario "$@")
	[[ $got =~ $want ]] || kv_fail "$what: the check printed '$got', expected /$want/"
	kv_log "$what: $got"
}

none="0 0 0 0"
expect "a 2 s pause" '^ok$' 2000 0 "$none" "$none"
expect "a 60 s pause" '^ok$' 60000 0 "$none" "$none"
expect "a 0.9 s step" '^ok$' 2000 900 "$none" "$none"
expect "a 1.5 s jump" 'guest time jumped.* 1[0-9]{3} ms ahead' 2000 1500 "$none" "$none"
expect "an 8 s jump" 'guest time jumped.* [78][0-9]{3} ms ahead' 2000 8000 "$none" "$none"
expect "a step back" 'guest time went back' 2000 -3000 "$none" "$none"
# vCPU 3's line of the round read its clock 8 s before it appeared: the
# native soak's upgrade 145 (2026-12-06), which the old check failed.
expect "one line 8 s late before" '^ok$' 2000 0 "0 0 0 8000" "$none"
expect "all lines 3 s late before" '^ok$' 2000 0 "3000 3000 3000 3000" "$none"
# The kept samples now spread over 3 s of lateness, so the check allows
# 1 s more than that (its resolution on a host this loaded); beyond, a jump.
expect "all lines 3 s late before, then a 4.5 s jump" 'guest time jumped.* 4[0-9]{3} ms ahead.*\(4000 allowed' 2000 4500 "3000 3000 3000 3000" "$none"
# Every kept sample late, by 2 s and then 3.5 s, and the lines after the
# upgrade on time: the native soak's upgrade 34 (2026-12-06, three other
# QEMU hosts beside it), which the check without the spread failed.
expect "every kept sample 2-3.5 s late, then on time" '^ok$' 2000 0 "3500 3500 3500 3500" "$none" "2000 2000 2000 2000"
expect "every kept sample 2-3.5 s late, then a 3 s jump" 'guest time jumped' 2000 3000 "3500 3500 3500 3500" "$none" "2000 2000 2000 2000"
expect "one line 1.5 s late after" '^ok$' 2000 0 "$none" "0 1500 0 0"
kv_pass
