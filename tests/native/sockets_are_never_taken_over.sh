#!/bin/bash
# Proves: a live socket is never taken over and a file that is not a
# socket is never removed, by the agent or by kvmlu-vmm (one rule,
# common/sock_path.c):
#  1. an agent configured with a running VM's control socket refuses to
#     start; the VM still answers there;
#  2. a second agent on a running agent's socket refuses; the first still
#     answers;
#  3. a regular file at the socket path: agent and VMM refuse, the file
#     is still there, unchanged;
#  4. a stale socket (bound, nobody listening) is replaced by the agent;
#  5. a VMM refuses the agent's live socket as its --control.
. "$(dirname "$0")/agent_lib.sh"
command -v python3 >/dev/null || ag_skip "python3 missing"
ag_init

# agent_with SOCKET: run an agent whose config names SOCKET; its exit status in $rc
# (it must not start serving: killed after 10 s if it does).
agent_with() {
	sed "s|\"socket\": \"[^\"]*\"|\"socket\": \"$1\"|" "$AG_DIR/agent.json" >"$AG_DIR/other.json"
	timeout 10 "$AG_BIN/kvmlu-agent" --config "$AG_DIR/other.json" 2>"$AG_DIR/other.err"
	rc=$?
	ag_log "agent on $1: exit $rc: $(tail -n 1 "$AG_DIR/other.err")"
}

answers() { "$AG_CTL" -t 5 "$1" '{"cmd":"status"}' 2>/dev/null | jq -e .ok >/dev/null; }

ag_log "stage 1: an agent on a live VM's control socket"
ag_vm vm1
vm_sock=$AG_DIR/vms/vm1.sock
agent_with "$vm_sock"
[ $rc = 1 ] || ag_fail "agent on the VM's socket: exit $rc, expected 1 (refused)"
grep -q 'another process is listening there' "$AG_DIR/other.err" || ag_fail "no clear reason"
answers "$vm_sock" || ag_fail "the VM no longer answers on its socket"
[ "$(ag_vm_state vm1)" = running ] || ag_fail "VM vm1 not running"

ag_log "stage 2: a second agent on a running agent's socket"
ag_agent
ino=$(stat -c %i "$AG_SOCK")
agent_with "$AG_SOCK"
[ $rc = 1 ] || ag_fail "second agent: exit $rc, expected 1 (refused)"
grep -q 'another process is listening there' "$AG_DIR/other.err" || ag_fail "no clear reason"
[ "$(stat -c %i "$AG_SOCK")" = "$ino" ] || ag_fail "the agent's socket file was replaced"
answers "$AG_SOCK" || ag_fail "the first agent no longer answers"

ag_log "stage 3: a regular file at the path is refused, never removed"
plain=$AG_DIR/plain
echo "keep me" >"$plain"
agent_with "$plain"
[ $rc = 1 ] || ag_fail "agent on a regular file: exit $rc, expected 1"
grep -q 'exists and is not a socket' "$AG_DIR/other.err" || ag_fail "no clear reason"
[ "$(cat "$plain")" = "keep me" ] || ag_fail "the regular file was removed or changed"
timeout 20 "$AG_VMM" run --name plain --memory 64M --cpus 1 --payload "$AG_WITNESS" \
	--serial "$AG_DIR/plain.serial" --control "$plain" 2>"$AG_DIR/plain.err"
rc=$?
ag_log "vmm on a regular file: exit $rc: $(tail -n 1 "$AG_DIR/plain.err")"
[ $rc = 1 ] || ag_fail "VMM on a regular file: exit $rc, expected 1"
grep -q 'exists and is not a socket' "$AG_DIR/plain.err" || ag_fail "VMM: no clear reason"
[ "$(cat "$plain")" = "keep me" ] || ag_fail "the VMM removed or changed the regular file"

ag_log "stage 4: a stale socket (nobody listening) is replaced"
stale=$AG_DIR/stale.sock
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$stale"
[ -S "$stale" ] || ag_fail "could not make a stale socket"
sed "s|\"socket\": \"[^\"]*\"|\"socket\": \"$stale\"|" "$AG_DIR/agent.json" >"$AG_DIR/stale.json"
"$AG_BIN/kvmlu-agent" --config "$AG_DIR/stale.json" 2>"$AG_DIR/stale.err" &
stale_pid=$!
AG_PIDS+=("$stale_pid")
for _ in $(seq 1 100); do answers "$stale" && break; sleep 0.1; done
answers "$stale" || ag_fail "the agent did not take the stale socket: $(cat "$AG_DIR/stale.err")"

ag_log "stage 5: a VMM refuses the agent's live socket as its --control"
timeout 20 "$AG_VMM" run --name thief --memory 64M --cpus 1 --payload "$AG_WITNESS" \
	--serial "$AG_DIR/thief.serial" --control "$AG_SOCK" 2>"$AG_DIR/thief.err"
rc=$?
ag_log "vmm on the agent's socket: exit $rc: $(tail -n 1 "$AG_DIR/thief.err")"
[ $rc = 1 ] || ag_fail "VMM on the agent's socket: exit $rc, expected 1"
grep -q 'another process is listening there' "$AG_DIR/thief.err" || ag_fail "VMM: no clear reason"
[ "$(stat -c %i "$AG_SOCK")" = "$ino" ] || ag_fail "the agent's socket file was replaced"
answers "$AG_SOCK" || ag_fail "the agent no longer answers"
answers "$vm_sock" || ag_fail "the VM no longer answers"
ag_pass
