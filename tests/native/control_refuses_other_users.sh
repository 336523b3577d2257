#!/bin/bash
# Proves: only root and the socket's owner may use the control socket.
# The file is mode 0600, so another uid (nobody, via setpriv) cannot even
# connect; and with the mode opened up on purpose, the server itself
# still refuses that uid (SO_PEERCRED) with PermissionDenied. The VM is
# unaffected either way.
. "$(dirname "$0")/lib.sh"
kv_init
[ "$(id -u)" = 0 ] || kv_skip "needs root to switch to uid 65534"
command -v setpriv >/dev/null || kv_skip "setpriv (util-linux) missing"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

kv_start --memory 256M --cpus 1
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60

mode=$(stat -c %a "$KV_SOCK")
[ "$mode" = 600 ] || kv_fail "socket mode $mode, want 600"

# nobody must reach the socket's directory to get as far as the socket.
chmod 0711 "$KV_DIR"
cp "$KV_CTL" "$KV_DIR/ctl"; chmod 0755 "$KV_DIR/ctl"

kv_log "stage 1: uid 65534 against mode 0600"
if out=$(as_nobody "$KV_DIR/ctl" -t 5 "$KV_SOCK" '{"cmd":"shutdown"}' 2>&1); then
	kv_fail "uid 65534 got a reply: $out"
fi
kv_log "refused: $out"
grep -q 'Permission denied' <<<"$out" || kv_fail "unexpected failure: $out"

kv_log "stage 2: uid 65534 with the file opened to everyone: the server refuses"
chmod 0666 "$KV_SOCK"
# The server may close before the request is even sent (EPIPE on our
# side); the reply is still there to read. Only stdout is the reply.
out=$(as_nobody "$KV_DIR/ctl" -t 5 "$KV_SOCK" '{"cmd":"shutdown"}' 2>"$KV_DIR/ctl.err") ||
	kv_fail "no reply for uid 65534: $out $(cat "$KV_DIR/ctl.err")"
kv_log "reply: $out"
[ "$(jq -r .error.class <<<"$out")" = PermissionDenied ] || kv_fail "class: $out"
chmod 0600 "$KV_SOCK"

kv_log "stage 3: the VM still runs and root is still served"
kv_ok '{"cmd":"status"}'
[ "$(kv_ret state)" = running ] || kv_fail "state $(kv_ret state) after the refused shutdown"
lines=$(kv_tick_lines)
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 30 $((lines + 1))

kv_stop
kv_pass
