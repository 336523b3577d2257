#!/bin/bash
# Helpers for the live-upgrade tests (sourced after lib.sh, not run).
# After an upgrade the VM lives in a new kvmlu-vmm that is not a child of
# this shell: KV_PID then names it (kv_cleanup still kills it), the old
# one must have exited 0, and the final stop polls instead of waiting.
# Sanitizer reports of every generation land in the same stderr file.

# up_upgrade [JSON_ARGS]: one upgrade that must succeed; the old process
# must exit (status 0 if it is our child), the new one must answer on the
# same socket path; KV_PID becomes the new pid.
#
# KV_UPGRADE_TIMEOUT_MS (set where the tests run on a nested KVM under TCG,
# ~100x slower than hardware): the upgrade's own deadline for the new
# process, 10 s by default, which load there can exceed; the VM then
# stays in the old process, correctly, but the round fails.
up_upgrade() {
	local old=$KV_PID args=${1:-} tmo=${KV_UPGRADE_TIMEOUT_MS:-} rc i
	[ -n "$args" ] || args='{}'
	if [ -n "$tmo" ] && [ "$(jq 'has("timeout_ms")' <<<"$args")" = false ]; then
		args=$(jq -c --argjson t "$tmo" '. + {timeout_ms: $t}' <<<"$args")
	fi
	kv_ok "{\"cmd\":\"upgrade\",\"args\":$args}" $(( ${tmo:-10000} / 1000 + 20 ))
	UP_NEW_PID=$(kv_ret pid)
	UP_BLACKOUT=$(kv_ret blackout_ms)
	UP_COPIED=$(kv_ret memory_copied_bytes)
	UP_MEMORY=$(kv_ret memory)
	UP_CHECKSUM=$(kv_ret checksum)
	[ "$UP_NEW_PID" -gt 0 ] 2>/dev/null || kv_fail "upgrade reply without pid"
	for i in $(seq 1 "$(kv_scaled 300)"); do
		kill -0 "$old" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$old" 2>/dev/null && kv_fail "old kvmlu-vmm $old still running 30 s after upgrade"
	if [ "$old" = "${UP_FIRST_PID:-}" ]; then
		wait "$old"
		rc=$?
		[ $rc = 0 ] || kv_fail "old kvmlu-vmm $old exited with status $rc after upgrade"
	fi
	KV_PID=$UP_NEW_PID
	kill -0 "$KV_PID" 2>/dev/null || kv_fail "new kvmlu-vmm $KV_PID not running"
	kv_request '{"cmd":"status"}'
	[ "$(kv_ret pid)" = "$KV_PID" ] || kv_fail "socket answered by pid $(kv_ret pid), not $KV_PID"
	[ "$(kv_ret state)" = running ] || kv_fail "VM is $(kv_ret state) after upgrade"
}

# up_start ARGS: kv_start, remembering the first (child) pid.
up_start() {
	kv_start "$@"
	UP_FIRST_PID=$KV_PID
}

# up_check_sanitizers: no ASan/UBSan report from any generation.
up_check_sanitizers() {
	grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$KV_STDERR" &&
		kv_fail "sanitizer report in kvmlu-vmm stderr"
	return 0
}

# up_stop: shutdown; the current VMM (maybe not our child) must go away
# and remove its socket.
up_stop() {
	local i
	if [ "$KV_PID" = "${UP_FIRST_PID:-}" ]; then
		kv_stop
		return
	fi
	kv_ok '{"cmd":"shutdown"}'
	for i in $(seq 1 "$(kv_scaled 300)"); do
		kill -0 "$KV_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$KV_PID" 2>/dev/null && kv_fail "kvmlu-vmm $KV_PID still running $(kv_scaled 30) s after shutdown"
	KV_PID=
	[ -e "$KV_SOCK" ] && kv_fail "control socket $KV_SOCK left behind"
	grep -q 'stopped (shutdown-command)' "$KV_STDERR" || kv_fail "no clean stop message"
	kv_log "stopped cleanly"
}

# up_clock: UP_NOW, the host's time in ms, without a fork (a fork is
# slow on a loaded nested host, and the polls below time their reads).
up_clock() { UP_NOW=${EPOCHREALTIME/./}; UP_NOW=$((UP_NOW / 1000)); }

# up_last_ticks CPUS: "CPU TICK UPTIME_MS" of the last complete tick line
# of each vCPU 0..CPUS-1 that has one in kv_serial_lines' window: every
# vCPU from one read of the log.
up_last_ticks() {
	kv_serial_lines | awk -v n="$1" '
	/^witness boot=[0-9a-f]+ cpu=[0-9]+ tick=[0-9]+ uptime_ms=[0-9]+$/ {
		split($3, c, "="); split($4, t, "="); split($5, u, "=")
		last[c[2]] = t[2] " " u[2]
	}
	END { for (i = 0; i < n; i++) if (i in last) print i, last[i] }'
}

# up_sample_all CPUS [TICK...]: for every vCPU 0..CPUS-1, wait (30 s at
# most, scaled) for a tick line above TICK (its tick now when not given)
# and take that line in the 0.1 s poll that first shows it: UP_T[c],
# UP_U[c] (uptime_ms), and when on the host's clock it was written: after
# UP_A[c] (the start of the read before, which did not show it; only
# without TICK, where the first read is that one) and by UP_S[c] (the end
# of the read that did). On a loaded nested host one read
# of the log can take a second, so a single time for the line could be a
# second late at one end of an upgrade and not at the other, and that
# difference counted as a jump of guest time (2026-12-05, round 20 of a
# soak: 46 ms beyond a fixed 1 s allowance). Ticks count up for the life
# of a boot, so the last one says whether a new line came; all vCPUs wait
# at once (one after another, a round of 4 vCPUs spent 8 s in these waits).
up_sample_all() {
	local cpus=$1 i c t u prev start left
	local -a base
	shift
	up_clock
	prev=$UP_NOW
	if [ $# -gt 0 ]; then
		base=("$@")
	else
		while read -r c t u; do base[$c]=$t; done < <(up_last_ticks "$cpus")
	fi
	UP_T=() UP_U=() UP_S=() UP_A=()
	for i in $(seq 1 "$(kv_scaled 300)"); do
		up_clock
		start=$UP_NOW
		up_last_ticks "$cpus" >"$KV_DIR/ticks"
		up_clock
		while read -r c t u; do
			[ -z "${UP_T[$c]:-}" ] && [ "$t" -gt "${base[$c]:--1}" ] &&
				UP_T[$c]=$t UP_U[$c]=$u UP_S[$c]=$UP_NOW UP_A[$c]=$prev
		done <"$KV_DIR/ticks"
		prev=$start
		left=
		for c in $(seq 0 $((cpus - 1))); do
			[ -n "${UP_T[$c]:-}" ] || left="$left $c"
		done
		[ -z "$left" ] && return 0
		kill -0 "$KV_PID" 2>/dev/null || kv_fail "kvmlu-vmm $KV_PID died"
		sleep 0.1
	done
	kv_fail "cpu(s)$left printed no new tick for $(kv_scaled 30) s"
}

# up_check_continue CPUS TICKS UPTIMES SINCES: each a space-separated
# list by vCPU, what up_sample_all took before an upgrade (UP_T, UP_U,
# UP_A). Waits for a tick line of every vCPU above its TICK and checks it
# continues the guest seen then: guest time (uptime_ms, TSC based) did
# not go back, and it moved by no more than the most host time there can
# have been between the two lines (from the earliest the first can have
# been written, UP_A, to the latest the second, UP_S) plus 1 s (a line is
# written some time after the guest read its clock for it: the witness
# reads it as the line's last field goes out, serial_line_send_ended();
# read before waiting for the print lock, it was once 6 s old). That is the
# claim: time across an upgrade neither goes back nor jumps by more than
# the pause.
up_check_continue() {
	local cpus=$1 c
	local -a tick0 up0 seen0
	read -r -a tick0 <<<"$2"
	read -r -a up0 <<<"$3"
	read -r -a seen0 <<<"$4"
	up_sample_all "$cpus" "${tick0[@]}"
	for c in $(seq 0 $((cpus - 1))); do
		[ "${UP_U[$c]}" -gt "${up0[$c]}" ] ||
			kv_fail "cpu $c guest time went back: uptime_ms ${up0[$c]} -> ${UP_U[$c]}"
		# A jump is a step, not a rate: the guest's clock may run a few
		# per cent off the host's (a nested host's TSC calibration under
		# load), so the allowance scales the host time by the rate
		# measured before.
		[ $((UP_U[c] - up0[c])) -le $(((UP_S[c] - seen0[c]) * ${UP_RATE_PERMILLE:-1000} / 1000 + 1000)) ] ||
			kv_fail "cpu $c guest time jumped: uptime_ms ${up0[$c]} -> ${UP_U[$c]} in at most $((UP_S[c] - seen0[c])) ms of host time (guest clock rate ${UP_RATE_PERMILLE:-1000}/1000 of the host's)"
	done
}

# up_wait_ticks CPU TICK: wait (30 s at most, scaled) for a tick line of
# that vCPU above TICK (empty TICK: any tick line).
up_wait_ticks() {
	local i t
	for i in $(seq 1 "$(kv_scaled 300)"); do
		t=$(kv_tick "$1")
		[ -n "$t" ] && [ "$t" -gt "${2:--1}" ] && return 0
		kill -0 "$KV_PID" 2>/dev/null || kv_fail "kvmlu-vmm $KV_PID died"
		sleep 0.1
	done
	kv_fail "cpu $1 printed no tick above ${2:-none} for $(kv_scaled 30) s"
}

# up_measure_rate: UP_RATE_PERMILLE, vCPU 0's clock rate against the
# host's over a few seconds without an upgrade, plus 5% for noise (never
# below 1000).
up_measure_rate() {
	local up0 seen0 i
	up_sample_all 1
	up0=${UP_U[0]} seen0=${UP_S[0]}
	for i in 1 2 3 4; do up_sample_all 1; done
	UP_RATE_PERMILLE=$(( (UP_U[0] - up0) * 1050 / (UP_S[0] - seen0 > 0 ? UP_S[0] - seen0 : 1) ))
	[ "$UP_RATE_PERMILLE" -ge 1000 ] || UP_RATE_PERMILLE=1000
	kv_log "guest clock rate: $((UP_U[0] - up0)) ms of guest time in $((UP_S[0] - seen0)) ms of host time; allowance $UP_RATE_PERMILLE/1000"
}

# up_twenty_upgrades BACKEND CPUS: the main scenario, 20 upgrades in a row.
up_twenty_upgrades() {
	local backend=$1 cpus=$2 n=${UP_ROUNDS:-20} boot round tick up seen
	up_start --memory 256M --cpus "$cpus" --memory-backend "$backend"
	kv_wait_serial "^witness boot=[0-9a-f]{16} cpu=$((cpus - 1)) tick=" 60
	boot=$(kv_boot_ids)
	[ "$(wc -l <<<"$boot")" = 1 ] || kv_fail "more than one boot id: $boot"
	up_measure_rate
	for round in $(seq 1 "$n"); do
		up_sample_all "$cpus"
		tick="${UP_T[*]}" up="${UP_U[*]}" seen="${UP_A[*]}"
		# Every 5th round with the memory checksum taken at pause and
		# compared by the new process before it resumes the guest.
		if [ $((round % 5)) = 0 ]; then
			up_upgrade '{"checksum":true}'
			[ "$UP_CHECKSUM" != null ] || kv_fail "checksum upgrade without checksum"
		else
			up_upgrade
		fi
		kv_log "round $round: pid $KV_PID blackout $UP_BLACKOUT ms, copied $UP_COPIED bytes"
		# memfd RAM is shared with the new process; a guest_memfd is linked
		# into its new VM where the kernel has the project's patch, else
		# copied whole (it is bound to the VM that made it).
		case $backend/$UP_MEMORY in
		memfd/shared | guest_memfd/linked)
			[ "$UP_COPIED" = 0 ] || kv_fail "$backend upgrade ($UP_MEMORY) copied $UP_COPIED bytes" ;;
		guest_memfd/copied)
			[ "$UP_COPIED" = $((256 << 20)) ] || kv_fail "guest_memfd upgrade copied $UP_COPIED bytes" ;;
		*) kv_fail "$backend upgrade: memory handled as '$UP_MEMORY'" ;;
		esac
		up_check_continue "$cpus" "$tick" "$up" "$seen"
		[ "$(kv_recent_boot_ids)" = "$boot" ] ||
			kv_fail "round $round: boot id changed: $(kv_recent_boot_ids | tr '\n' ' ')"
		grep -q 'witness FATAL' "$KV_SERIAL" && kv_fail "round $round: guest reported FATAL"
		# UP_VERIFY_EVERY=N: the guest checks all its memory every N rounds.
		if [ -n "${UP_VERIFY_EVERY:-}" ] && [ $((round % UP_VERIFY_EVERY)) = 0 ]; then
			kv_request '{"cmd":"guest-verify","args":{"timeout_ms":300000}}' 320
			[ "$(kv_ret verified)" = true ] || kv_fail "guest-verify after round $round: $KV_REPLY"
			kv_log "round $round: guest-verify ok"
		fi
	done
	[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "after $n rounds: boot ids $(kv_boot_ids | tr '\n' ' ')"
	kv_verify
	up_stop
	up_check_sanitizers
}
