#!/bin/bash
# Proves: bad control input gets an error reply of the right class and
# changes nothing: malformed JSON (ParseError), unknown command
# (UnknownCommand), unknown key / wrong types / bad args (InvalidRequest),
# a key twice (DuplicateKey: {"cmd":"status","cmd":"shutdown"} must not
# stop the VM), an oversized line (LineTooLong, and the same connection
# still answers the next request), raw garbage bytes; the guest keeps
# ticking throughout.
. "$(dirname "$0")/lib.sh"
kv_init

kv_start --memory 256M --cpus 1
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60
boot=$(kv_boot_ids)

kv_log "stage 1: one bad request per connection"
kv_err '{"cmd":"pause"' ParseError
kv_err 'nonsense' ParseError
kv_err '{"cmd":"pause"} {"cmd":"resume"}' ParseError
kv_err '{"cmd":"reboot-host","id":5}' UnknownCommand
[ "$(jq -r .id <<<"$KV_REPLY")" = 5 ] || kv_fail "id not echoed on UnknownCommand"
kv_err '{"cmd":"pause","force":true,"id":6}' InvalidRequest
[ "$(jq -r .id <<<"$KV_REPLY")" = 6 ] || kv_fail "id not echoed on unknown key"
kv_err '{"cmd":7}' InvalidRequest
kv_err '{"cmd":"pause","id":[1]}' InvalidRequest
kv_err '{"cmd":"status","args":"x"}' InvalidRequest
kv_err '{"cmd":"status","args":{"all":true}}' InvalidRequest
kv_err '{"cmd":"guest-verify","args":{"timeout_ms":"soon"}}' InvalidRequest
kv_err '{"cmd":"guest-verify","args":{"timeout_ms":-1}}' InvalidRequest
kv_err '["pause"]' InvalidRequest
kv_err '{}' InvalidRequest
kv_err '{"cmd":"status","cmd":"shutdown"}' DuplicateKey
kv_err '{"cmd":"status","args":{"x":1,"x":2}}' DuplicateKey
kv_err '{"cmd":"status","id":99999999999999999999999999999}' ParseError
kv_ok '{"cmd":"status"}'
[ "$(kv_ret state)" = running ] || kv_fail "a bad request changed the state to $(kv_ret state)"

kv_log "stage 2: oversized line, then a good request, on one connection"
big=$KV_DIR/big.txt
{
	printf '{"cmd":"status","pad":"'
	head -c 300000 /dev/zero | tr '\0' a
	printf '"}\n{"cmd":"status","id":"after"}\n'
} >"$big"
out=$("$KV_CTL" -t 20 -n 2 "$KV_SOCK" <"$big") || kv_fail "no replies to the oversized line"
kv_log "replies: $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
[ "$(wc -l <<<"$out")" = 2 ] || kv_fail "expected 2 replies, got: $out"
[ "$(head -n 1 <<<"$out" | jq -r .error.class)" = LineTooLong ] || kv_fail "first reply: $(head -n 1 <<<"$out")"
[ "$(tail -n 1 <<<"$out" | jq -r .ok)" = true ] || kv_fail "connection did not survive: $(tail -n 1 <<<"$out")"
[ "$(tail -n 1 <<<"$out" | jq -r .id)" = after ] || kv_fail "second reply id: $(tail -n 1 <<<"$out")"

kv_log "stage 2b: a line of exactly 256 KiB (without its newline) is a request"
exact=$KV_DIR/exact.txt
{
	start='{"cmd":"status","id":"exact"'
	printf '%s' "$start"
	head -c $((262144 - ${#start} - 1)) /dev/zero | tr '\0' ' '
	printf '}\n'
} >"$exact"
[ "$(stat -c %s "$exact")" = 262145 ] || kv_fail "exact line is $(stat -c %s "$exact") bytes"
out=$("$KV_CTL" -t 20 -n 1 "$KV_SOCK" <"$exact") || kv_fail "no reply to the 256 KiB line"
[ "$(jq -r .id <<<"$out")" = exact ] && [ "$(jq -r .ok <<<"$out")" = true ] ||
	kv_fail "256 KiB line: $(cut -c1-200 <<<"$out")"

kv_log "stage 3: several requests in one write, binary junk, an empty line"
out=$(printf '{"cmd":"status","id":1}\n\x01\x02\xff\xfe\n\n{"cmd":"status","id":2}\n' |
	"$KV_CTL" -t 20 -n 4 "$KV_SOCK") || kv_fail "no replies to the batch"
[ "$(wc -l <<<"$out")" = 4 ] || kv_fail "expected 4 replies, got: $out"
[ "$(sed -n 1p <<<"$out" | jq -r .id)" = 1 ] || kv_fail "batch reply 1: $out"
[ "$(sed -n 2p <<<"$out" | jq -r .error.class)" = ParseError ] || kv_fail "junk reply: $out"
[ "$(sed -n 3p <<<"$out" | jq -r .error.class)" = ParseError ] || kv_fail "empty-line reply: $out"
[ "$(sed -n 4p <<<"$out" | jq -r .id)" = 2 ] || kv_fail "batch reply 4: $out"

kv_log "stage 4: a client that connects and goes away mid-line"
printf '{"cmd":"pau' | "$KV_CTL" -t 5 "$KV_SOCK" >/dev/null 2>&1 || true

kv_log "stage 5: the guest kept running"
lines=$(kv_tick_lines)
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 30 $((lines + 2))
[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot id changed"
kv_ok '{"cmd":"status"}'
[ "$(kv_ret state)" = running ] || kv_fail "state $(kv_ret state)"

kv_stop
kv_pass
