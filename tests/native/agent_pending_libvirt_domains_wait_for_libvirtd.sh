#!/bin/bash
# Proves: kvmlu-agent (the daemon of kvmlu-agent.service) with a libvirt
# state file left by a kexec starts the pending libvirt domains on a
# thread of its own after its socket listens: `kvmlu status` answers at
# once while it waits for libvirtd, a host-update asked meanwhile gets
# Busy (the pending restore holds the update lock), and with no libvirtd
# answering the domains stay pending: nothing cold-booted, the state file
# kept for the next start. (`--restore` never gets here: tests/unit/agent/
# test_agent_restore.c; the real libvirtd case: test_libvirt_domains.c.)
. "$(dirname "$0")/agent_lib.sh"
ag_init
uuid=3f1c0b2a-1111-4222-8333-944455556666
state=$AG_DIR/lib/libvirt-domains.json
mkdir -p "$AG_DIR/lib"
printf '[{"name":"web1","uuid":"%s","state":"saved","was_paused":false,"suspended_ns":100,"saved_ns":200}]' \
	"$uuid" >"$state"
# No libvirtd behind this socket: the agent waits timeouts.libvirt_connect_ms
# (8 s here, 60 s by default), then gives up.
jq --arg s "$state" --arg u "qemu+unix:///system?socket=$AG_DIR/no-libvirtd.sock" \
	'. + {libvirt_state_file: $s, libvirt_uri: $u} | .timeouts.libvirt_connect_ms = 8000' "$AG_DIR/agent.json" >"$AG_DIR/agent.json.new" &&
	mv "$AG_DIR/agent.json.new" "$AG_DIR/agent.json"

ag_log "stage 1: the agent listens while the pending domains wait for libvirtd"
start=$(date +%s)
ag_agent
ag_kvmlu status --json
[ "$AG_RC" = 0 ] || ag_fail "status exited $AG_RC while the domains wait"
[ $(($(date +%s) - start)) -lt 30 ] || ag_fail "the agent answered only after $(($(date +%s) - start)) s"
cls=$("$AG_CTL" -t 5 "$AG_SOCK" '{"cmd":"host-update","id":1,"args":{"kernel":"/boot/vmlinuz","dry-run":true}}' |
	jq -r .error.class)
[ "$cls" = Busy ] || ag_fail "host-update during the pending restore: $cls, not Busy"

ag_log "stage 2: libvirtd never answers: the domains stay pending, the state file kept"
for i in $(seq 1 150); do
	grep -q "libvirt domains left by" "$AG_DIR/agent.err" && break
	kill -0 "$AG_AGENT_PID" 2>/dev/null || ag_fail "kvmlu-agent exited"
	sleep 0.5
done
grep -q "libvirt domains left by .*: 1 pending, 0 failed" "$AG_DIR/agent.err" ||
	ag_fail "no line saying 1 domain stays pending: $(tail -n 5 "$AG_DIR/agent.err")"
grep -q "after 8000 ms" "$AG_DIR/agent.err" ||
	ag_fail "the wait was not timeouts.libvirt_connect_ms: $(grep -m1 'libvirt' "$AG_DIR/agent.err")"
[ -f "$state" ] || ag_fail "the state file is gone: the next start could not try again"
ag_kvmlu status --json
[ "$AG_RC" = 0 ] || ag_fail "status exited $AG_RC after the pending restore"
cls=$("$AG_CTL" -t 5 "$AG_SOCK" '{"cmd":"host-update","id":2,"args":{"kernel":"/boot/vmlinuz","dry-run":true}}' |
	jq -r '.error.class // "ok"')
[ "$cls" != Busy ] || ag_fail "host-update still Busy after the pending restore gave up"
ag_pass
