#!/bin/bash
# Proves: the VMM's control replies speak protocol 2 (docs/control-protocol.md):
# `status` says "protocol":2, and every duration and time in the replies of
# status, pause, resume, checksum (full and incremental), guest-verify,
# update-status and upgrade is an integer under a key ending in _ns, to
# the nanosecond; no reply carries a number with a fraction or exponent
# (the one rate, checksum's gbps, aside) nor a key in ms or us (the
# running_hash_ms budget echoed back aside: a limit, in the unit it is
# given). prepare-update is refused here (no /dev/liveupdate) before
# anything runs; its reply's shape is the harness's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init

# The checker: argv REPLY NAME KEY...; prints what is wrong, "" if nothing.
CHECK_PY='
import json, re, sys
line, name, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
bad = []
reply = json.loads(line)
def walk(o, path):
    if isinstance(o, dict):
        for k, v in o.items():
            p = path + k
            if re.search(r"_(ms|us)$", k) and k != "checksum_running_budget_ms":
                bad.append("key in ms or us: " + p)
            if isinstance(v, float) and p != "return.gbps":
                bad.append("not an integer: %s = %r" % (p, v))
            walk(v, p + ".")
    elif isinstance(o, list):
        for i, v in enumerate(o):
            walk(v, "%s%d." % (path, i))
walk(reply, "")
ret = reply.get("return", {})
for k in keys:
    v = ret.get(k)
    if type(v) is not int or v < 0:
        bad.append("%s: %r, not an integer >= 0" % (k, v))
print("; ".join(bad))
'

# check_reply NAME KEY...: the last reply is ok, has each KEY as an
# integer >= 0 in its "return", and no number with a fraction or exponent
# (json makes those floats) and no _ms or _us key anywhere.
check_reply() {
	local name=$1 bad
	shift
	[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] || kv_fail "$name: $KV_REPLY"
	bad=$(python3 -c "$CHECK_PY" "$KV_REPLY" "$name" "$@") || kv_fail "$name: the checker failed"
	[ -z "$bad" ] || kv_fail "$name: $bad in $KV_REPLY"
	kv_log "$name: integer ns ($*)"
}

up_start --memory 256M --cpus 2
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 60

kv_ok '{"cmd":"status"}'
check_reply status uptime_ns memory serial_bytes
[ "$(kv_ret protocol)" = 2 ] || kv_fail "status says protocol $(kv_ret protocol), not 2"
[ "$(kv_ret uptime_ns)" -gt 0 ] || kv_fail "uptime_ns $(kv_ret uptime_ns)"

kv_ok '{"cmd":"pause"}'
check_reply pause latency_ns
[ "$(kv_ret latency_ns)" -gt 0 ] || kv_fail "pause of a running VM took 0 ns: $KV_REPLY"
kv_ok '{"cmd":"checksum"}'
check_reply checksum checksum_ns bytes
[ "$(kv_ret checksum_ns)" -gt 0 ] || kv_fail "a checksum of 256 MiB in 0 ns: $KV_REPLY"
kv_ok '{"cmd":"resume"}'
check_reply resume latency_ns

kv_ok '{"cmd":"checksum","args":{"incremental":true}}' 120
check_reply "checksum incremental" checksum_running_ns checksum_paused_ns full_checksum_ns
kv_ok '{"cmd":"resume"}'

kv_verify
check_reply guest-verify verify_ns
[ "$(kv_ret verify_ns)" -gt 0 ] || kv_fail "guest-verify answered in 0 ns: $KV_REPLY"

kv_ok '{"cmd":"update-status"}'
check_reply update-status
[ "$(kv_ret phase)" = none ] || kv_fail "update-status: $KV_REPLY"

up_upgrade
KV_REPLY=$UP_REPLY
check_reply upgrade blackout_ns pause_ns prepare_ns restore_ns create_ns
[ "$UP_BLACKOUT_NS" -gt 0 ] || kv_fail "upgrade blackout 0 ns: $KV_REPLY"
kv_log "upgrade blackout $UP_BLACKOUT ms ($UP_BLACKOUT_NS ns)"

up_stop
up_check_sanitizers
kv_pass
