#!/bin/bash
# Proves: an agent out of file descriptors tells a new client so at once
# (Busy, "out of file descriptors") instead of retrying accept() in a
# tight loop while the client waits; once descriptors are free it
# answers requests again.
. "$(dirname "$0")/agent_lib.sh"
command -v python3 >/dev/null || ag_skip "python3 missing"
ag_init
ag_agent
python3 "$AG_TOP/tests/native/out_of_fds.py" "$AG_SOCK" --pid "$AG_AGENT_PID" \
	--request '{"cmd":"status"}' || ag_fail "the agent did not answer when out of descriptors"
grep -q 'ERROR: AddressSanitizer' "$AG_DIR/agent.err" && ag_fail "sanitizer report"
ag_pass
