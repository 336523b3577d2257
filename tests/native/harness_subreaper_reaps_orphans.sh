#!/bin/bash
# The harness's subreaper (tests/harness/tools/subreaper.c), libvirtd's
# parent in the QEMU host: a process its command leaves behind (as
# libvirtd leaves QEMU, double-forked) is adopted by it and reaped as soon
# as it ends, not left a zombie (libvirt counts a zombie as alive and waits
# out its kill timeout); it exits with its command's status and passes
# SIGTERM on to it. KVMLU_SUBREAPER picks the binary (default the
# sanitizer build's). No /dev/kvm needed.
. "$(dirname "$0")/lib.sh"
SR=${KVMLU_SUBREAPER:-$KV_TOP/build/san/bin/subreaper}
[ -x "$SR" ] || kv_fail "$SR not built (make tests-build)"
KV_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kvmlu-$KV_NAME.XXXXXX")
SR_PID=
cleanup() {
	[ -n "$SR_PID" ] && kill -KILL "$SR_PID" 2>/dev/null
	[ -s "$KV_DIR/main" ] && kill -KILL "$(cat "$KV_DIR/main")" 2>/dev/null
	rm -rf "$KV_DIR"
}
trap cleanup EXIT

field() { sed -n "s/^$2:[[:space:]]*\([^[:space:]]*\).*/\1/p" "/proc/$1/status" 2>/dev/null; }

# The command: a subshell starts a 3 s sleep and exits (the sleep is
# orphaned), then the command itself sleeps on as the daemon would.
"$SR" bash -c 'echo $$ >"$1/main"; ( sleep 3 & echo $! >"$1/orphan" ); exec sleep 60' _ "$KV_DIR" &
SR_PID=$!
for _ in $(seq 50); do [ -s "$KV_DIR/orphan" ] && [ -s "$KV_DIR/main" ] && break; sleep 0.1; done
[ -s "$KV_DIR/orphan" ] || kv_fail "the command did not start its orphan within 5 s"
orphan=$(cat "$KV_DIR/orphan")
main=$(cat "$KV_DIR/main")

# Adopted: once the subshell is gone, the orphan's parent is the subreaper.
for _ in $(seq 20); do [ "$(field "$orphan" PPid)" = "$SR_PID" ] && break; sleep 0.1; done
pp=$(field "$orphan" PPid)
[ "$pp" = "$SR_PID" ] || kv_fail "orphan $orphan has parent '$pp', not the subreaper $SR_PID"
kv_log "orphan $orphan adopted by $SR_PID"

# Reaped: within 2 s of its end (at 3 s) it is gone, not a zombie.
for _ in $(seq 50); do [ -d "/proc/$orphan" ] || break; sleep 0.1; done
[ -d "/proc/$orphan" ] && kv_fail "orphan $orphan still there 5 s after its start: state $(field "$orphan" State)"
kv_log "orphan $orphan reaped"
kill -0 "$main" 2>/dev/null || kv_fail "the command ($main) ended with its orphan"

# SIGTERM goes on to the command; the subreaper exits with 128 + 15.
kill -TERM "$SR_PID"
wait "$SR_PID"
rc=$?
SR_PID=
[ $rc = 143 ] || kv_fail "after SIGTERM the subreaper exited $rc, not 143"
for _ in $(seq 20); do kill -0 "$main" 2>/dev/null || break; sleep 0.1; done
kill -0 "$main" 2>/dev/null && kv_fail "the command ($main) outlived the SIGTERM sent to the subreaper"

# The command's exit status, a command that cannot start, no command.
"$SR" sh -c 'exit 7'
rc=$?
[ $rc = 7 ] || kv_fail "subreaper sh -c 'exit 7' exited $rc"
"$SR" "$KV_DIR/no-such-program" 2>"$KV_DIR/err"
rc=$?
[ $rc = 127 ] && grep -q 'no-such-program' "$KV_DIR/err" || kv_fail "a missing command: exit $rc, '$(cat "$KV_DIR/err")'"
"$SR" 2>"$KV_DIR/err"
rc=$?
[ $rc = 2 ] && grep -q usage "$KV_DIR/err" || kv_fail "no command: exit $rc, '$(cat "$KV_DIR/err")'"
kv_pass
