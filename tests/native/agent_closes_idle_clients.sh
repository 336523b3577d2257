#!/bin/bash
# Proves: idle or half-sent connections cannot exhaust the agent. 1000
# connections (half sending nothing, half half a request line): the agent
# serves at most max_clients at once (default 64) and tells the rest
# Busy, so its threads and fds stay bounded; a new client gets its answer
# or Busy at once (never a hang: 2 s bound, latency printed); every held
# connection is told Timeout and closed after timeouts.client_idle_ms;
# then a new client gets its real answer. SIGTERM then removes the
# agent's socket file.
. "$(dirname "$0")/agent_lib.sh"
command -v python3 >/dev/null || ag_skip "python3 missing"
ag_init
idle_ms=1000
sed -i "s|\"timeouts\": { \"vmm_ms\": 2000 }|\"timeouts\": { \"vmm_ms\": 2000, \"client_idle_ms\": $idle_ms }|" \
	"$AG_DIR/agent.json"
grep -q client_idle_ms "$AG_DIR/agent.json" || ag_fail "could not set client_idle_ms"
ag_agent

# 64 connection threads and their fds, plus the agent's own few.
python3 "$AG_TOP/tests/native/control_flood.py" "$AG_SOCK" --conns 1000 --idle-ms $idle_ms \
	--pid "$AG_AGENT_PID" --max-tasks $((64 + 8)) --max-fds $((64 + 32)) ||
	ag_fail "the agent's socket did not hold up under the flood"

ag_log "SIGTERM: the agent removes its socket file"
kill -TERM "$AG_AGENT_PID"
for _ in $(seq 1 100); do kill -0 "$AG_AGENT_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$AG_AGENT_PID" 2>/dev/null && ag_fail "agent still running 10 s after SIGTERM"
wait "$AG_AGENT_PID"
rc=$?
AG_AGENT_PID=
ag_log "agent exit status $rc"
[ $rc = 143 ] || ag_fail "agent exit status $rc after SIGTERM, expected 143 (killed by SIGTERM)"
[ -e "$AG_SOCK" ] && ag_fail "socket file $AG_SOCK left behind after SIGTERM"
grep -q 'ERROR: AddressSanitizer' "$AG_DIR/agent.err" && ag_fail "sanitizer report"
ag_pass
