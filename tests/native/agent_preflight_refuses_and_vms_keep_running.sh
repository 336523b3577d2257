#!/bin/bash
# Proves, on this machine (no /dev/liveupdate): kvmlu-agent finds two real
# witness VMs in its run dir and `kvmlu vms` / `kvmlu status` show them;
# `kvmlu host-update` (dry run and real) is refused by preflight with the
# reason, before any VM is paused, and the report says so; a VMM that
# accepts connections but never answers is named as not answering; every
# VM is running, unpaused, with ticks advancing afterwards.
. "$(dirname "$0")/agent_lib.sh"
ag_init
[ -e /dev/liveupdate ] && ag_skip "this machine has /dev/liveupdate: the refusal tested here would not happen"

ag_log "stage 1: two witness VMs and the agent"
ag_vm w1
ag_vm w2 --cpus 2
ag_wait_ticks w1 1
ag_wait_ticks w2 1
ag_agent

ag_kvmlu vms
[ $AG_RC = 0 ] || ag_fail "kvmlu vms exited $AG_RC"
grep -qE '^w1 +kvmlu-vmm +running +64M +1 +memfd' <<<"$AG_OUT" || ag_fail "vms does not show w1 running"
grep -qE '^w2 +kvmlu-vmm +running +64M +2 +memfd' <<<"$AG_OUT" || ag_fail "vms does not show w2 running"
ag_kvmlu vms --json
[ "$(jq -r '.vms | length' <<<"$AG_OUT")" = 2 ] || ag_fail "vms --json does not list 2 VMs"
ag_kvmlu status
grep -q 'VMs: 2' <<<"$AG_OUT" || ag_fail "status does not count 2 VMs"
grep -q 'no update running' <<<"$AG_OUT" || ag_fail "status shows an update running"

# A kernel image that exists: preflight must refuse on the host, not the file.
kernel=$AG_TOP/build/kernel/bzImage
[ -f "$kernel" ] || kernel=$AG_WITNESS

ag_log "stage 2: dry run refused with the reason"
t1=$(ag_ticks w1)
ag_kvmlu host-update --kernel "$kernel" --append "console=ttyS0 kho=on liveupdate=on" --dry-run
[ $AG_RC = 1 ] || ag_fail "dry run exited $AG_RC, expected 1 (refused)"
grep -q 'refused (dry run)' <<<"$AG_OUT" || ag_fail "dry run not reported as refused"
grep -q 'failed in preflight: no /dev/liveupdate' <<<"$AG_OUT" || ag_fail "no /dev/liveupdate reason"
grep -q 'preflight: FAILED' <<<"$AG_OUT" || ag_fail "no preflight progress line"

ag_log "stage 3: real update refused: no liveupdate, no kho=on, kexec not allowed"
ag_kvmlu host-update --kernel "$kernel" --append "console=ttyS0" --json
[ $AG_RC = 1 ] || ag_fail "host-update exited $AG_RC, expected 1"
[ "$(jq -r '"\(.kvmlu) \(.version) \(.outcome)"' <<<"$AG_OUT")" = "host-update 1 refused" ] ||
	ag_fail "not a host-update document version 1 with outcome refused"
err=$(jq -r .report.error <<<"$AG_OUT")
for want in "no /dev/liveupdate" "lacks kho=on" "lacks liveupdate=on" "kexec not allowed"; do
	grep -qF "$want" <<<"$err" || ag_fail "refusal lacks \"$want\": $err"
done
[ "$(jq -r '[.report.vms[].state] | unique | join(",")' <<<"$AG_OUT")" = listed ] ||
	ag_fail "a VM was touched: $(jq -c '[.report.vms[].state]' <<<"$AG_OUT")"
[ "$(jq -r '.report.phases | keys | join(",")' <<<"$AG_OUT")" = preflight ] ||
	ag_fail "phases beyond preflight ran: $(jq -c '.report.phases | keys' <<<"$AG_OUT")"

ag_log "stage 4: a VMM that does not answer is named"
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' "$AG_DIR/vms/mute.sock" &
AG_PIDS+=($!)
for i in $(seq 1 50); do [ -S "$AG_DIR/vms/mute.sock" ] && break; sleep 0.1; done
ag_kvmlu vms
grep -qE '^mute +kvmlu-vmm +unreachable' <<<"$AG_OUT" || ag_fail "the mute VMM is not shown unreachable"
ag_kvmlu host-update --kernel "$kernel" --append "kho=on liveupdate=on" --dry-run
grep -q 'VM mute: its VMM .* does not answer: no answer within 2000 ms' <<<"$AG_OUT" ||
	ag_fail "refusal does not name the mute VMM"
kill -KILL "${AG_PIDS[-1]}"
rm -f "$AG_DIR/vms/mute.sock"

ag_log "stage 5: history and the VMs"
ag_kvmlu report --json
[ "$(jq -r '"\(.kvmlu) \(.version) \(.updates | length)"' <<<"$AG_OUT")" = "report 1 3" ] ||
	ag_fail "not a report document version 1 with 3 updates"
[ "$(jq -r '[.updates[].outcome] | unique | join(",")' <<<"$AG_OUT")" = refused ] ||
	ag_fail "report outcomes: $(jq -c '[.updates[].outcome]' <<<"$AG_OUT")"
ag_kvmlu report
grep -q 'failed in preflight' <<<"$AG_OUT" || ag_fail "report text lacks the failure"
for vm in w1 w2; do
	[ "$(ag_vm_state $vm)" = running ] || ag_fail "VM $vm is $(ag_vm_state $vm), not running"
done
ag_wait_ticks w1 $((t1 + 2))
[ -e "$AG_DIR/state/journal.json" ] && ag_fail "journal left in state_dir after refusals"
ag_pass
