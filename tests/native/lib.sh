#!/bin/bash
# Shared helpers for tests/native/*.sh (sourced, not run): start a
# kvmlu-vmm (the sanitizer build) with the witness guest, wait for serial
# lines, talk JSON to its control socket with kvmlu-ctl, stop it, and end
# the test with one PASS/FAIL line. Every wait is bounded; the EXIT trap
# kills any VMM the test started (by its pid) and removes the work dir.
#
#   . "$(dirname "$0")/lib.sh"
#   kv_init
#   kv_start --memory 256M --cpus 2
#   kv_wait_serial 'cpu=0 tick=' 30
#   kv_ok '{"cmd":"pause"}'
#   kv_pass
set -u

KV_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KV_VMM=${KVMLU_VMM:-$KV_TOP/build/san/bin/kvmlu-vmm}
KV_CTL=${KVMLU_CTL:-$KV_TOP/build/bin/kvmlu-ctl}
KV_WITNESS=${KVMLU_WITNESS:-$KV_TOP/build/guest/witness.bin}
KV_CAPS=${KVMLU_TEST_CAPS:-$KV_TOP/build/bin/kvmlu-test-caps}
KV_NAME=$(basename "$0" .sh)
KV_DIR=
KV_PID=
KV_SOCK=
KV_SERIAL=
KV_STDERR=
KV_REPLY=
# ASan: a leak or error in the VMM must fail the test, with a report.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}

kv_log() { echo "[$KV_NAME] $*"; }

kv_fail() {
	kv_log "failed: $*"
	if [ -n "$KV_SERIAL" ] && [ -f "$KV_SERIAL" ]; then
		kv_log "serial (last 10 lines):"; tail -n 10 "$KV_SERIAL"
	fi
	if [ -n "$KV_STDERR" ] && [ -f "$KV_STDERR" ]; then
		kv_log "vmm stderr (last 20 lines):"; tail -n 20 "$KV_STDERR"
	fi
	echo "FAIL: $KV_NAME: $*"
	exit 1
}

kv_pass() { echo "PASS: $KV_NAME"; exit 0; }

# Exit 77 with the reason as the last line (tests/run-tests.sh shows it).
kv_skip() { echo "$*"; exit 77; }

kv_cleanup() {
	if [ -n "$KV_PID" ] && kill -0 "$KV_PID" 2>/dev/null; then
		kill -KILL "$KV_PID" 2>/dev/null
		wait "$KV_PID" 2>/dev/null
	fi
	[ -n "$KV_DIR" ] && rm -rf "$KV_DIR"
}

kv_init() {
	[ -x "$KV_VMM" ] || kv_fail "$KV_VMM not built (make tests-build)"
	[ -x "$KV_CTL" ] || kv_fail "$KV_CTL not built (make)"
	[ -f "$KV_WITNESS" ] || kv_fail "$KV_WITNESS not built (make)"
	command -v jq >/dev/null || kv_fail "jq missing (scripts/install-deps.sh)"
	[ -c /dev/kvm ] || kv_skip "no /dev/kvm on this machine"
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || kv_skip "/dev/kvm not accessible to uid $(id -u)"
	KV_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kvmlu-$KV_NAME.XXXXXX")
	trap kv_cleanup EXIT
}

# kv_need CAP...: what the test needs besides /dev/kvm, by the names of
# kvmlu-test-caps (tests/caps/: guest_memfd, liveupdate, thp_shmem), which
# asks the kernel. Where this machine lacks one the test SKIPs with a last
# line starting "this machine lacks": tests/run-tests.sh prints MOVED for
# it, and the harness's native cases (tests/harness/cases/native_common.inc)
# run it in the QEMU host. They find it by this call, so write it after
# kv_init at the top level of the test, on a line of its own:
#   kv_need guest_memfd
# There (KVMLU_TEST_REQUIRE_CAPS=1) a missing capability is a FAIL: the
# test was moved there to run.
kv_need() {
	local out rc line missing=
	[ -x "$KV_CAPS" ] || kv_fail "$KV_CAPS not built (make)"
	out=$("$KV_CAPS" "$@")
	rc=$?
	[ $rc = 0 ] && return 0
	[ $rc = 1 ] || kv_fail "$KV_CAPS $*: exit $rc"
	# "NAME: WHY" lines -> "NAME (WHY), NAME (WHY)"
	while IFS= read -r line; do
		missing+="${missing:+, }${line%%: *} (${line#*: })"
	done <<<"$out"
	[ "${KVMLU_TEST_REQUIRE_CAPS:-0}" = 1 ] &&
		kv_fail "moved to the QEMU host to run, and it lacks $missing too"
	kv_skip "this machine lacks $missing: runs in the QEMU host as harness/native_*/$KV_NAME"
}

# kv_start [kvmlu-vmm run options...]: a witness VM named after the test,
# 256M and 1 vCPU unless given; returns once the control socket answers.
kv_start() {
	local args=("$@") have_mem=0 have_cpus=0 a i
	for a in "${args[@]}"; do
		case $a in --memory*) have_mem=1 ;; --cpus*) have_cpus=1 ;; esac
	done
	[ $have_mem = 1 ] || args+=(--memory 256M)
	[ $have_cpus = 1 ] || args+=(--cpus 1)
	KV_SOCK=$KV_DIR/ctl.sock
	KV_SERIAL=$KV_DIR/serial.log
	KV_STDERR=$KV_DIR/vmm.err
	: >"$KV_SERIAL"
	kv_log "start: kvmlu-vmm run --name $KV_NAME ${args[*]}"
	"$KV_VMM" run --name "$KV_NAME" --payload "$KV_WITNESS" --serial "$KV_SERIAL" \
		--control "$KV_SOCK" "${args[@]}" 2>"$KV_STDERR" &
	KV_PID=$!
	# KV_NO_WAIT=1: the caller expects the guest to end the VMM by itself.
	[ "${KV_NO_WAIT:-0}" = 1 ] && return 0
	for i in $(seq 1 "$(kv_scaled 300)"); do
		if [ -S "$KV_SOCK" ] && "$KV_CTL" -t 2 "$KV_SOCK" '{"cmd":"status"}' >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$KV_PID" 2>/dev/null || kv_fail "kvmlu-vmm exited during start-up"
		sleep 0.1
	done
	kv_fail "control socket $KV_SOCK did not answer within $(kv_scaled 30) s"
}

# KV_WAIT_SCALE (default 1): how many times longer every wait here may
# be. The QEMU host's nested KVM (harness/native_*) sets 10: there a
# guest's vCPUs share one emulated CPU, and a bound meant to catch a hang
# on hardware would catch slowness instead. No test asserts a speed.
kv_scaled() { echo $(($1 * ${KV_WAIT_SCALE:-1})); }

# kv_request JSON [timeout]: one request; the reply in $KV_REPLY. (Not
# through kv_ctl >/dev/null: that would hide kv_fail's FAIL line.)
kv_request() {
	local t
	t=$(kv_scaled "${2:-20}")
	KV_REPLY=$("$KV_CTL" -t "$t" "$KV_SOCK" "$1") ||
		kv_fail "no reply to $1 within $t s"
}

# kv_verify [ID]: guest-verify, its wait scaled as above; the reply in
# $KV_REPLY, which must be ok and verified.
kv_verify() {
	local ms
	ms=$(kv_scaled 10000)
	kv_request "{\"cmd\":\"guest-verify\",\"id\":${1:-1},\"args\":{\"timeout_ms\":$ms}}" $((ms / 1000 + 10))
	[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] && [ "$(kv_ret verified)" = true ] ||
		kv_fail "guest-verify -> $KV_REPLY"
	kv_log "guest-verify -> $KV_REPLY"
}

# kv_ctl JSON [timeout]: kv_request, and the reply on stdout too.
kv_ctl() {
	kv_request "$@"
	echo "$KV_REPLY"
}

# kv_ok JSON: the request must succeed; the reply in $KV_REPLY.
kv_ok() {
	kv_request "$@"
	[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] || kv_fail "$1 -> $KV_REPLY"
	kv_log "$1 -> $KV_REPLY"
}

# kv_err JSON CLASS: the request must fail with that error class.
kv_err() {
	kv_request "$1"
	[ "$(jq -r .ok <<<"$KV_REPLY")" = false ] || kv_fail "$1 should fail, got $KV_REPLY"
	[ "$(jq -r .error.class <<<"$KV_REPLY")" = "$2" ] ||
		kv_fail "$1: expected class $2, got $KV_REPLY"
	kv_log "$1 -> $2 (as expected)"
}

# kv_ret FIELD: a field of the last reply's "return" object.
kv_ret() { jq -r ".return.$1" <<<"$KV_REPLY"; }

# kv_wait_serial REGEX [TIMEOUT_S] [MIN_COUNT]: wait until the serial log
# has MIN_COUNT (default 1) lines matching REGEX.
kv_wait_serial() {
	local re=$1 t min=${3:-1} i
	t=$(kv_scaled "${2:-30}")
	for i in $(seq 1 $((t * 10))); do
		[ "$(grep -cE -- "$re" "$KV_SERIAL" 2>/dev/null)" -ge "$min" ] && return 0
		kill -0 "$KV_PID" 2>/dev/null || kv_fail "kvmlu-vmm exited while waiting for '$re'"
		sleep 0.1
	done
	kv_fail "no $min serial line(s) matching '$re' within $t s"
}

# kv_serial_lines: the complete lines of the serial log's last 256 KiB.
# The line a vCPU is still writing may be cut short ("tick=6" of
# "tick=628228096", seen on a 1-vCPU QEMU host), and so may the window's
# first: both are left out. Only the tail, because a soak's log grows to
# megabytes and reading all of it on every 0.1 s look made its rounds
# twice as slow after an hour; 256 KiB is minutes of ticks of 4 vCPUs.
kv_serial_lines() {
	local tail=$KV_DIR/serial.tail window=262144
	tail -c "$window" "$KV_SERIAL" >"$tail"
	if [ "$(stat -c %s "$tail")" -lt "$window" ]; then
		head -n "$(wc -l <"$tail")" "$tail"
	else
		head -n "$(wc -l <"$tail")" "$tail" | tail -n +2
	fi
}

# kv_tick CPU: the last tick vCPU CPU printed (empty if none yet).
kv_tick() {
	kv_serial_lines |
		grep -E "^witness boot=[0-9a-f]{16} cpu=$1 tick=[0-9]+ uptime_ms=[0-9]+\$" | tail -n 1 |
		sed -E 's/.* tick=([0-9]+).*/\1/'
}

# kv_boot_ids: every distinct boot id seen on the serial log.
kv_boot_ids() { kv_boot_ids_of <"$KV_SERIAL"; }

# kv_recent_boot_ids: the same, over kv_serial_lines' window only (minutes
# of ticks): for a check after every round of a long run.
kv_recent_boot_ids() { kv_serial_lines | kv_boot_ids_of; }

# kv_boot_ids_of: the distinct boot ids of the witness lines on stdin.
kv_boot_ids_of() { grep -oE '^witness (start )?boot=[0-9a-f]{16}' | sed 's/.*boot=//' | sort -u; }

kv_tick_lines() { grep -cE '^witness boot=[0-9a-f]{16} cpu=[0-9]+ tick=' "$KV_SERIAL"; }

# kv_stop: shutdown over the socket; the VMM must exit 0 within 30 s.
kv_stop() {
	local i rc
	kv_ok '{"cmd":"shutdown"}'
	for i in $(seq 1 "$(kv_scaled 300)"); do
		kill -0 "$KV_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$KV_PID" 2>/dev/null && kv_fail "kvmlu-vmm still running $(kv_scaled 30) s after shutdown"
	wait "$KV_PID"
	rc=$?
	KV_PID=
	[ $rc = 0 ] || kv_fail "kvmlu-vmm exited with status $rc after shutdown"
	[ -e "$KV_SOCK" ] && kv_fail "control socket $KV_SOCK left behind"
	kv_log "stopped cleanly"
}
