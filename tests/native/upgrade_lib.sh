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
	UP_REPLY=$KV_REPLY
	UP_NEW_PID=$(kv_ret pid)
	UP_BLACKOUT_NS=$(kv_ret blackout_ns)
	[[ $UP_BLACKOUT_NS =~ ^[0-9]+$ ]] || kv_fail "upgrade reply: blackout_ns $UP_BLACKOUT_NS is not an integer"
	UP_BLACKOUT=$(awk -v ns="$UP_BLACKOUT_NS" 'BEGIN { printf "%.3f", ns / 1e6 }')	# ms, for the log
	UP_COPIED=$(kv_ret memory_copied_bytes)
	UP_MEMORY=$(kv_ret memory)
	UP_CHECKSUM=$(kv_ret checksum)
	[ "$UP_NEW_PID" -gt 0 ] 2>/dev/null || kv_fail "upgrade reply without pid"
	# The new process's resume steps, each an integer count of ns.
	jq -e '.return.steps | (keys == ["apply_ns","build_ns","start_ns","verify_ns"]) and
		all(.[]; type == "number" and . == floor and . >= 0) and
		.build_ns > 0 and .apply_ns > 0 and .start_ns > 0' <<<"$KV_REPLY" >/dev/null ||
		kv_fail "upgrade reply without its resume steps in integer ns: $KV_REPLY"
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
# UP_U[c] (uptime_ms) and UP_S[c], the host's clock at the end of the read
# that showed it, by when it had been written. Ticks count up for the life
# of a boot, so the last one says whether a new line came; all vCPUs wait
# at once (one after another, a round of 4 vCPUs spent 8 s in these waits).
up_sample_all() {
	local cpus=$1 i c t u left
	local -a base
	shift
	if [ $# -gt 0 ]; then
		base=("$@")
	else
		while read -r c t u; do base[$c]=$t; done < <(up_last_ticks "$cpus")
	fi
	UP_T=() UP_U=() UP_S=()
	for i in $(seq 1 "$(kv_scaled 300)"); do
		up_last_ticks "$cpus" >"$KV_DIR/ticks"
		up_clock
		while read -r c t u; do
			[ -z "${UP_T[$c]:-}" ] && [ "$t" -gt "${base[$c]:--1}" ] &&
				UP_T[$c]=$t UP_U[$c]=$u UP_S[$c]=$UP_NOW
		done <"$KV_DIR/ticks"
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

# The guest's clock against the host's. A tick line's uptime_ms was read
# some time before the host saw the line: the witness reads its clock as
# the line's last field goes out, one exit per byte, and on a loaded
# nested host a vCPU thread can wait seconds for its turn (7.4 s seen for
# one of four vCPUs after an upgrade, while the other three were fresh),
# and the read that shows it ends up to a second after it was written. So
# for a line, uptime_ms - UP_S is the guest clock's offset from the host's
# less that lateness: never more than the offset, and the most of several
# lines is near it. A jump of the guest clock raises the offset; a late
# line only lowers the figure. (A check from the two lines' own times
# took a line that appeared 8 s after its clock read for a jump: the
# native soak's upgrade 145 on 2026-12-06.)
#
# up_note_offsets: keep the most of uptime_ms - UP_S over the vCPUs of
# the last up_sample_all, with its UP_S, among the last 10 kept.
UP_OFFSETS=() UP_BEFORE_T=() UP_BEFORE_U=()
up_note_offsets() {
	local c d best= at=
	for c in "${!UP_U[@]}"; do
		d=$((UP_U[c] - UP_S[c]))
		if [ -z "$best" ] || [ "$d" -gt "$best" ]; then best=$d at=${UP_S[c]}; fi
	done
	UP_OFFSETS+=("$best $at")
	[ ${#UP_OFFSETS[@]} -le 10 ] || UP_OFFSETS=("${UP_OFFSETS[@]:1}")
}

# up_offsets_prime: five samples of every vCPU's clock before any check.
up_offsets_prime() {
	local cpus=$1 i
	for i in 1 2 3 4 5; do
		up_sample_all "$cpus"
		up_note_offsets
	done
}

# up_before_upgrade CPUS: the sample up_check_continue measures from,
# taken just before an upgrade: every vCPU's tick line (UP_BEFORE_T,
# UP_BEFORE_U), its offset kept by up_note_offsets.
up_before_upgrade() {
	up_sample_all "$1"
	up_note_offsets
	UP_BEFORE_T=("${UP_T[@]}") UP_BEFORE_U=("${UP_U[@]}")
}

# up_check_continue CPUS: after an upgrade, waits for a tick line of every
# vCPU above the one up_before_upgrade took and checks the guest
# continued: guest time did not go back, and its offset from the host's
# clock (above) grew by no more than 1 s, plus 1 ms a second since the
# kept sample it is measured from (the host's clock may be slewed by NTP;
# the guest's TSC runs at the host's rate, vmm/vm.c), plus the spread of
# the kept samples. The bound is the most over the kept samples: each is
# the offset less its lateness, so the least late is nearest the truth.
# The spread (most less least) is how much that lateness varied: when
# every kept sample came late (a loaded nested host: the native soak's
# upgrade 34 on 2026-12-06 read 1064 ms "ahead" beside three other QEMU
# hosts), a line after the upgrade that comes on time would otherwise
# read as a jump. On a quiet host the spread is small and the check is
# near 1 s. The exact guarantee is elsewhere: a live upgrade hands the
# vCPUs' TSC offsets over unchanged (vmm/state/cpu_state.c; the unit test
# tests/unit/vmm/test_state_roundtrip.c compares them). What the guest
# itself sees is checked here: its time across an upgrade neither goes
# back nor jumps by more than that; the pause counts as time.
up_check_continue() {
	local cpus=$1 c d bound b kept off at least= most= spread seen= list=
	[ ${#UP_BEFORE_T[@]} -ge "$cpus" ] || kv_fail "up_check_continue without up_before_upgrade"
	[ ${#UP_OFFSETS[@]} -gt 0 ] || kv_fail "up_check_continue without a kept sample (up_offsets_prime)"
	for kept in "${UP_OFFSETS[@]}"; do
		read -r off at <<<"$kept"
		if [ -z "$least" ] || [ "$off" -lt "$least" ]; then least=$off; fi
		if [ -z "$most" ] || [ "$off" -gt "$most" ]; then most=$off; fi
		list="$list $off"
	done
	spread=$((most - least))
	up_sample_all "$cpus" "${UP_BEFORE_T[@]}"
	for c in $(seq 0 $((cpus - 1))); do
		[ "${UP_U[$c]}" -gt "${UP_BEFORE_U[$c]}" ] ||
			kv_fail "cpu $c guest time went back: uptime_ms ${UP_BEFORE_U[$c]} -> ${UP_U[$c]}"
		d=$((UP_U[c] - UP_S[c])) bound=
		seen="$seen $d"
		for kept in "${UP_OFFSETS[@]}"; do
			read -r off at <<<"$kept"
			b=$((off + 1000 + spread + (UP_S[c] - at) / 1000))
			if [ -z "$bound" ] || [ "$b" -gt "$bound" ]; then bound=$b; fi
		done
		[ "$d" -le "$bound" ] ||
			kv_fail "cpu $c guest time jumped: uptime_ms ${UP_BEFORE_U[$c]} -> ${UP_U[$c]}, the guest clock $((d - bound + 1000 + spread)) ms ahead of the host's beyond the freshest kept sample ($((1000 + spread)) allowed: 1000 and the kept samples' spread; offsets kept, oldest first, ms:$list; after the upgrade:$seen)"
	done
	kv_log "clock: offsets after the upgrade (ms):$seen; kept $least..$most"
	up_note_offsets
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

# up_upgrades_in_row BACKEND CPUS: the main scenario, UP_ROUNDS (10) upgrades in a row.
up_upgrades_in_row() {
	local backend=$1 cpus=$2 n=${UP_ROUNDS:-10} boot round
	up_start --memory 256M --cpus "$cpus" --memory-backend "$backend"
	kv_wait_serial "^witness boot=[0-9a-f]{16} cpu=$((cpus - 1)) tick=" 60
	boot=$(kv_boot_ids)
	[ "$(wc -l <<<"$boot")" = 1 ] || kv_fail "more than one boot id: $boot"
	up_offsets_prime "$cpus"
	for round in $(seq 1 "$n"); do
		up_before_upgrade "$cpus"
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
		up_check_continue "$cpus"
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

# Faults at the upgrade's messages, from the test-only LD_PRELOAD shim
# (tests/native/upgrade_fault_shim.c has the fault syntax): up_fault_start
# is up_start with the shim in the VMM and every generation after it;
# up_fault SPEC sets the fault of the next upgrades ("" for none).
UP_SHIM=${KVMLU_UPGRADE_SHIM:-$KV_TOP/build/san/test/upgrade_fault_shim.so}
up_fault_start() {
	[ -f "$UP_SHIM" ] || kv_fail "$UP_SHIM not built (make tests-build)"
	UP_FAULT_FILE=$KV_DIR/upgrade.fault
	: >"$UP_FAULT_FILE"
	# A failed test may leave a generation that is not KV_PID: end them all.
	trap 'up_kill_all; kv_cleanup' EXIT
	# ASan wants its runtime first; the shim only wraps sendmsg/recvmsg.
	LD_PRELOAD=$UP_SHIM KVMLU_UPGRADE_FAULT_FILE=$UP_FAULT_FILE \
		ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" up_start "$@"
}
up_fault() { echo "$1" >"$UP_FAULT_FILE"; }

# up_holders: every live (not zombie) kvmlu-vmm of this test started by
# up_fault_start, of any generation: they alone have this fault file in
# their environment.
up_holders() {
	local f p
	# Before up_fault_start nothing of this test carries a fault file.
	[ -n "${UP_FAULT_FILE:-}" ] || return 0
	for f in $(grep -lszxF "KVMLU_UPGRADE_FAULT_FILE=$UP_FAULT_FILE" /proc/[0-9]*/environ); do
		p=${f#/proc/}
		p=${p%/environ}
		up_alive "$p" && echo "$p"
	done
}
up_kill_all() {
	local p
	for p in $(up_holders); do kill -KILL "$p" 2>/dev/null; done
}

# up_fault_pid SPEC: wait (30 s at most, scaled) for the shim's line of a
# fault SPEC that fired; UP_FAULT_PID is the pid it fired in.
up_fault_pid() {
	local i
	UP_FAULT_PID=
	for i in $(seq 1 "$(kv_scaled 300)"); do
		UP_FAULT_PID=$(sed -n "s/^kvmlu-upgrade-fault: pid \([0-9]*\) $1\$/\1/p" "$KV_STDERR" | tail -n 1)
		[ -n "$UP_FAULT_PID" ] && return 0
		sleep 0.1
	done
	kv_fail "fault $1 never fired"
}

# up_check_monotonic: over the whole serial log, every vCPU's tick and
# uptime_ms rise strictly from line to line within a boot: a guest that
# ran in two processes (the stale one resumed after the other ran it)
# prints a tick or a time it printed before.
up_check_monotonic() {
	local bad
	bad=$(awk '
	/^witness boot=[0-9a-f]+ cpu=[0-9]+ tick=[0-9]+ uptime_ms=[0-9]+$/ {
		split($2, b, "="); split($3, c, "="); split($4, t, "="); split($5, u, "=")
		k = b[2] " " c[2]
		if ((k in tick) && (t[2] + 0 <= tick[k] || u[2] + 0 <= up[k]))
			print "boot " b[2] " cpu " c[2] ": tick " tick[k] " uptime_ms " up[k] " then tick " t[2] " uptime_ms " u[2]
		tick[k] = t[2] + 0; up[k] = u[2] + 0
	}' "$KV_SERIAL" | head -n 3)
	[ -z "$bad" ] || kv_fail "the guest ran twice (time went back): $bad"
}

# up_alive PID: the process exists and is not a zombie (the first VMM is
# this shell's child: once it exits it stays a zombie until waited for).
up_alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}
