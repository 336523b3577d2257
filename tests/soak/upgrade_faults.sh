#!/bin/bash
# Soak: KVMLU_SOAK_FAULTS (default 500) live upgrades of a 2-vCPU witness,
# each with one fault at a random message of the hand-over, in either
# process: killed, stopped (SIGCONT 0.2..3 s later) or delayed 0.1..3 s
# (the test-only LD_PRELOAD shim, tests/native/upgrade_fault_shim.c;
# nothing in the product reads a test variable). Upgrade timeout 1.5 s.
#
# After each upgrade (and every stopped process continued), the reply
# must match where the VM is, and the VM must be in one process at most:
#   ok                  the new process (the reply's pid), alone
#   "VM running here"   the old process, alone (the new one is gone)
#   Timeout "... is pid N's now"  pid N, alone (committed, confirmed late)
#   "VM lost"           no process: reported lost by the failing command
#   no reply at all     the old process was killed: the VM is in the new
#                       process if the commit went out first, else it
#                       ended with the killed process (the command failed)
# A VM that is somewhere must run: every vCPU prints new ticks, from the
# process answering the socket. Double runs are judged by the witness:
# every vCPU's tick and uptime_ms must rise strictly over the whole
# serial log of each boot. A lost VM is booted afresh for the next round.
# Prints the counts; exit 0 only with 0 double runs, 0 silent losses and
# 0 mismatches. KVMLU_SOAK_SEED repeats a run's faults.
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
. "$(dirname "$0")/../native/lib.sh"
. "$(dirname "$0")/../native/upgrade_lib.sh"
kv_init
n=${KVMLU_SOAK_FAULTS:-500}
seed=${KVMLU_SOAK_SEED:-$$}
RANDOM=$seed
# Every time here is hardware's, times KV_WAIT_SCALE (tests/native/lib.sh):
# in the QEMU host's nested KVM a hand-over takes that much longer, and
# the faults must still land before and after the deadline alike.
sc=${KV_WAIT_SCALE:-1}
tmo=$((1500 * sc))
points=(send:prepare recv:prepare send:ready recv:ready send:state recv:state
	send:restored recv:restored send:commit recv:commit send:resumed recv:resumed)
declare -A count=()
for k in ok kept committed_late lost_reported old_killed_vm_moved old_killed_vm_ended \
	 double_runs silent_losses mismatches restarts; do count[$k]=0; done
boots=0

holders() { up_holders; }

boot_vm() {
	up_kill_all
	[ -n "${KV_SERIAL:-}" ] && [ -f "$KV_SERIAL" ] && mv "$KV_SERIAL" "$KV_DIR/serial.$boots.log"
	[ -n "${KV_STDERR:-}" ] && [ -f "$KV_STDERR" ] && mv "$KV_STDERR" "$KV_DIR/vmm.$boots.err"
	rm -f "$KV_SOCK"
	boots=$((boots + 1))
	up_fault_start --memory 256M --cpus 2
	kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60
}

# violations: lines where a vCPU's ticks or time did not rise (all boots so far).
violations() {
	cat "$KV_DIR"/serial.*.log "$KV_SERIAL" 2>/dev/null | awk '
	/^witness boot=[0-9a-f]+ cpu=[0-9]+ tick=[0-9]+ uptime_ms=[0-9]+$/ {
		split($2, b, "="); split($3, c, "="); split($4, t, "="); split($5, u, "=")
		k = b[2] " " c[2]
		if ((k in tick) && (t[2] + 0 <= tick[k] || u[2] + 0 <= up[k])) bad++
		tick[k] = t[2] + 0; up[k] = u[2] + 0
	}
	END { print bad + 0 }'
}

# running_in PID: the socket answers from PID, the VM runs there and every
# vCPU prints a new tick within 30 s.
running_in() {
	local i t0 t1 c0 c1
	KV_REPLY=$("$KV_CTL" -t $((10 * sc)) "$KV_SOCK" '{"cmd":"status"}' 2>/dev/null) || return 1
	[ "$(kv_ret pid)" = "$1" ] && [ "$(kv_ret state)" = running ] || return 1
	t0=$(kv_tick 0) t1=$(kv_tick 1)
	for i in $(seq 1 $((300 * sc))); do
		c0=$(kv_tick 0) c1=$(kv_tick 1)
		[ "${c0:-0}" -gt "${t0:-0}" ] && [ "${c1:-0}" -gt "${t1:-0}" ] && return 0
		up_alive "$1" || return 1
		sleep 0.1
	done
	return 1
}

boot_vm
bad_before=$(violations)
for round in $(seq 1 "$n"); do
	pt=${points[RANDOM % ${#points[@]}]}
	case $((RANDOM % 3)) in
	0) act=kill ;;
	1) act=stop ;;
	2) act=delay:$(((100 + RANDOM % 2900) * sc)) ;;
	esac
	spec=$pt:$act
	old=$KV_PID
	mark=$(wc -l <"$KV_STDERR")
	up_fault "$spec"
	"$KV_CTL" -t $((60 * sc)) "$KV_SOCK" "{\"cmd\":\"upgrade\",\"args\":{\"timeout_ms\":$tmo}}" \
		>"$KV_DIR/reply" 2>/dev/null &
	ctl=$!
	stopped= cont_at=
	# Continue a stopped process 0.2..3 s after it stopped, reply or not.
	for i in $(seq 1 $((600 * sc))); do
		if [ "$act" = stop ] && [ -z "$stopped" ]; then
			stopped=$(tail -n +$((mark + 1)) "$KV_STDERR" |
				sed -n "s/^kvmlu-upgrade-fault: pid \([0-9]*\) $spec\$/\1/p" | head -n 1)
			[ -n "$stopped" ] && cont_at=$((i + (2 + RANDOM % 28) * sc))
		fi
		if [ -n "$cont_at" ] && [ "$i" -ge "$cont_at" ]; then
			kill -CONT "$stopped" 2>/dev/null
			cont_at=
		fi
		if ! kill -0 "$ctl" 2>/dev/null && [ -z "$cont_at" ]; then
			break
		fi
		sleep 0.1
	done
	wait "$ctl"
	up_fault ""
	[ -n "$cont_at" ] && kill -CONT "$stopped" 2>/dev/null
	reply=$(cat "$KV_DIR/reply")
	desc=$(jq -r '.error.desc // empty' <<<"$reply" 2>/dev/null)
	h=($(holders))
	where=${h[*]}
	expect= outcome=
	if [ "$(jq -r .ok <<<"$reply" 2>/dev/null)" = true ]; then
		outcome=ok expect=$(jq -r .return.pid <<<"$reply")
	elif grep -q 'VM running here' <<<"$desc"; then
		outcome=kept expect=$old
	elif grep -q "the VM is pid [0-9]*'s now" <<<"$desc"; then
		outcome=committed_late expect=$(grep -oE "the VM is pid [0-9]+" <<<"$desc" | grep -oE '[0-9]+$')
	elif grep -q 'VM lost' <<<"$desc"; then
		outcome=lost_reported expect=none
	elif [ -z "$reply" ] && ! up_alive "$old"; then
		# The new process either got the commit and serves the socket, or
		# sees the old one gone and exits: wait for one or the other.
		for i in $(seq 1 $((100 * sc))); do
			h=($(holders))
			[ ${#h[@]} = 0 ] && break
			[ ${#h[@]} = 1 ] && KV_REPLY=$("$KV_CTL" -t 2 "$KV_SOCK" '{"cmd":"status"}' 2>/dev/null) &&
				[ "$(kv_ret pid)" = "${h[0]}" ] && break
			sleep 0.1
		done
		where=${h[*]}
		if [ ${#h[@]} = 1 ]; then
			outcome=old_killed_vm_moved expect=${h[0]}
		else
			outcome=old_killed_vm_ended expect=none
		fi
	else
		outcome=mismatches expect=?
	fi
	# Settle (30 s at most): a handed-off or failed process exits (ASan's
	# leak check takes a while on a loaded host), a new one that lost its
	# old one notices it and exits.
	for i in $(seq 1 $((300 * sc))); do
		[ "$outcome" = mismatches ] && break
		h=($(holders))
		where=${h[*]}
		[ "$expect" = none ] && [ ${#h[@]} = 0 ] && break
		[ "$where" = "$expect" ] && break
		sleep 0.1
	done
	if [ "$expect" = none ]; then
		if [ ${#h[@]} != 0 ]; then
			outcome=mismatches
			kv_log "round $round ($spec): '$desc' but the VM is in pid(s) $where"
		fi
	elif [ "$outcome" != mismatches ]; then
		if [ "$where" != "$expect" ]; then
			outcome=mismatches
			kv_log "round $round ($spec): reply $reply: the VM should be in pid $expect alone, is in '$where'"
		elif KV_PID=$expect && ! running_in "$expect"; then
			# Said to run somewhere, and it does not: lost without a word.
			outcome=silent_losses
			kv_log "round $round ($spec): reply $reply: pid $expect does not run the VM: $KV_REPLY"
		fi
	else
		kv_log "round $round ($spec): reply '$reply' does not say where the VM is (pids '$where')"
	fi
	count[$outcome]=$((count[$outcome] + 1))
	bad=$(violations)
	if [ "$bad" -gt "$bad_before" ]; then
		count[double_runs]=$((count[double_runs] + 1))
		kv_log "round $round ($spec): DOUBLE RUN: a vCPU's ticks or time went back ($((bad - bad_before)) lines)"
		bad_before=$bad
	fi
	kv_log "round $round: $spec -> $outcome (pid ${where:-none})"
	if [ "$expect" = none ] || [ "$outcome" = mismatches ] || [ "$outcome" = silent_losses ]; then
		count[restarts]=$((count[restarts] + 1))
		boot_vm
	fi
done
summary=
for k in ok kept committed_late lost_reported old_killed_vm_moved old_killed_vm_ended \
	 double_runs silent_losses mismatches restarts; do
	summary="$summary $k=${count[$k]}"
done
kv_log "$n faulted upgrades (seed $seed):$summary"
up_kill_all
KV_PID=
grep -lE 'AddressSanitizer|LeakSanitizer|runtime error:' "$KV_DIR"/vmm*.err &&
	kv_fail "sanitizer report in kvmlu-vmm stderr"
[ "${count[double_runs]}" = 0 ] && [ "${count[silent_losses]}" = 0 ] && [ "${count[mismatches]}" = 0 ] ||
	kv_fail "$n faulted upgrades:$summary"
kv_pass
exit
}
