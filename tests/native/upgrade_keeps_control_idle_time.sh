#!/bin/bash
# Proves: the new process of a live upgrade serves the control socket
# with the idle time the old one was started with (--control-idle-ms),
# not the default: an idle client is told Timeout naming that time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init
command -v python3 >/dev/null || kv_skip "python3 missing"
idle_ms=1500
up_start --memory 256M --cpus 1 --control-idle-ms $idle_ms
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60

idle_reply() { # the line an idle client gets, or a note why none came
	python3 - "$KV_SOCK" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(30)
buf = b""
try:
    while not buf.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
except socket.timeout:
    buf = b"no line within 30 s"
print(buf.decode(errors="replace").strip())
PY
}

line=$(idle_reply)
kv_log "before the upgrade, an idle client got: $line"
grep -q "within $idle_ms ms" <<<"$line" || kv_fail "before the upgrade: expected a Timeout naming $idle_ms ms, got '$line'"
up_upgrade
line=$(idle_reply)
kv_log "after the upgrade, an idle client got: $line"
grep -q '"Timeout"' <<<"$line" || kv_fail "after the upgrade: no Timeout line: '$line'"
grep -q "within $idle_ms ms" <<<"$line" ||
	kv_fail "after the upgrade the new process closes idle clients after another time: '$line'"
up_check_sanitizers
up_stop
kv_pass
