#!/bin/bash
# Proves: kvmlu-libvirt-hook (the sanitizer build) tells the agent about a
# good libvirt call in one JSON line with the domain, uuid and operation;
# odd argv, malformed, hostile or huge XML and opted-out domains send
# nothing and are logged; an agent that is down or never answers costs
# the hook a bounded time; the hook always exits 0 and never writes to
# stdout (libvirt would take it as replacement XML for restore).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
hook=${KVMLU_LIBVIRT_HOOK:-$top/build/san/bin/kvmlu-libvirt-hook}
name=$(basename "$0" .sh)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}
log() { echo "[$name] $*"; }
fail() { log "failed: $*"; [ -f "$dir/hook.err" ] && tail -n 5 "$dir/hook.err"; echo "FAIL: $name"; exit 1; }

[ -x "$hook" ] || { echo "$hook not built"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed (fake agent)"; exit 77; }
dir=$(mktemp -d /tmp/kvmlu-hook-XXXXXX)
agent_pid=
cleanup() { [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT

uuid=3f1c0b2a-1111-4222-8333-944455556666
xml() { # xml NAME [METADATA]
	printf "<domain type='qemu'><name>%s</name><uuid>%s</uuid><metadata>%s</metadata></domain>" \
		"$1" "$uuid" "${2:-}"
}
echo "{\"socket\":\"$dir/agent.sock\"}" >"$dir/agent.json"
export KVMLU_AGENT_CONFIG=$dir/agent.json

# fake_agent MODE: "answer" records each line and replies ok; "silent" never replies.
fake_agent() {
	rm -f "$dir/agent.sock" "$dir/ready"
	python3 - "$dir/agent.sock" "$dir/received" "$1" "$dir/ready" <<'PY' &
import socket, sys, time
path, out, mode, ready = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path); s.listen(8)
open(ready, "w").close()
while True:
    c, _ = s.accept()
    data = b""
    while not data.endswith(b"\n"):
        b = c.recv(4096)
        if not b:
            break
        data += b
    with open(out, "ab") as f:
        f.write(data)
    if mode == "silent":
        time.sleep(30)
    else:
        c.sendall(b'{"ok":true,"return":{},"id":1}\n')
    c.close()
PY
	agent_pid=$!
	for _ in $(seq 100); do [ -f "$dir/ready" ] && return 0; sleep 0.05; done
	fail "fake agent did not start"
}
stop_agent() { kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null; agent_pid=; }

# run_hook STDIN_FILE ARGS...: the hook must exit 0 and print nothing on stdout.
run_hook() {
	local in=$1 rc
	shift
	# 30 s is no performance bound, only "it did not hang" (its own alarm is 3 s).
	timeout 30 "$hook" "$@" <"$in" >"$dir/hook.out" 2>>"$dir/hook.err"
	rc=$?
	[ $rc -ne 124 ] || fail "hook hung for: $*"
	[ $rc -eq 0 ] || fail "hook exited $rc for: $*"
	[ ! -s "$dir/hook.out" ] || fail "hook wrote to stdout for: $*"
}
received() { [ -f "$dir/received" ] && wc -l <"$dir/received" || echo 0; }

log "stage 1: a good call reaches the agent"
fake_agent answer
xml web1 >"$dir/good.xml"
run_hook "$dir/good.xml" web1 started begin -
[ "$(received)" = 1 ] || fail "agent got $(received) lines for one good call"
python3 - "$dir/received" "$uuid" <<'PY' || fail "message does not carry the event"
import json, sys
m = json.loads(open(sys.argv[1]).readline())
a = m["args"]
assert m["cmd"] == "libvirt-event" and a["domain"] == "web1", m
assert a["uuid"] == sys.argv[2] and a["op"] == "started" and a["sub"] == "begin", m
PY

log "stage 2: hostile or malformed input sends nothing and is logged"
: >"$dir/hook.err"
n_before=$(received)
cases=0
bad() { # bad STDIN_FILE LOG_REGEX ARGS...
	local in=$1 re=$2
	shift 2
	: >"$dir/hook.err"
	run_hook "$in" "$@"
	grep -Eq "$re" "$dir/hook.err" || fail "no log line matching '$re' for: $*"
	cases=$((cases + 1))
}
bad "$dir/good.xml" 'arguments, want 4' web1 started begin
bad "$dir/good.xml" 'arguments, want 4' web1 started begin - extra
bad "$dir/good.xml" 'operation .* unknown' web1 'rm -rf' begin -
bad "$dir/good.xml" 'domain name .* refused' "$(printf 'web1\nFORGED')" started begin -
bad "$dir/good.xml" 'sub-operation .* refused' web1 started '$(id)' -
xml web2 >"$dir/other.xml"
bad "$dir/other.xml" 'XML is of domain' web1 started begin -
printf '<domain><name>web1</name><uuid>%s' "$uuid" >"$dir/cut.xml"
bad "$dir/cut.xml" 'does not parse' web1 started begin -
printf '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><domain><name>web1&b;</name><uuid>%s</uuid></domain>' "$uuid" >"$dir/laughs.xml"
bad "$dir/laughs.xml" 'DOCTYPE refused' web1 started begin -
printf '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><domain><name>&x;</name><uuid>%s</uuid></domain>' "$uuid" >"$dir/xxe.xml"
bad "$dir/xxe.xml" 'DOCTYPE refused' root started begin -
head -c 3000000 /dev/zero | tr '\0' ' ' >"$dir/huge.xml"
bad "$dir/huge.xml" 'more than 1048576' web1 started begin -
head -c 4096 /dev/urandom >"$dir/garbage.xml"
bad "$dir/garbage.xml" 'refused the XML' web1 started begin -
: >"$dir/empty.xml"
bad "$dir/empty.xml" 'refused the XML' web1 started begin -
xml web1 "<kvmlu:config xmlns:kvmlu='https://kvmlu.invalid/ns/1' optout='perhaps'/>" >"$dir/badopt.xml"
bad "$dir/badopt.xml" 'want yes or no' web1 started begin -
xml web1 "<kvmlu:config xmlns:kvmlu='https://kvmlu.invalid/ns/1' optout='yes'/>" >"$dir/optout.xml"
bad "$dir/optout.xml" 'opted out' web1 started begin -
[ "$(received)" = "$n_before" ] || fail "agent got $(( $(received) - n_before )) lines from refused calls"
log "$cases refused calls, none reached the agent"

log "stage 3: an agent that is down or silent does not hold libvirt"
stop_agent
t0=$(date +%s%N)
: >"$dir/hook.err"
run_hook "$dir/good.xml" web1 stopped end shutdown
grep -q 'agent not told' "$dir/hook.err" || fail "agent down not logged"
fake_agent silent
run_hook "$dir/good.xml" web1 stopped end shutdown
grep -q 'agent not told' "$dir/hook.err" || fail "silent agent not logged"
t1=$(date +%s%N)
stop_agent
log "agent down and silent: $(( (t1 - t0) / 1000000 )) ms for both calls"
echo "PASS: $name"
