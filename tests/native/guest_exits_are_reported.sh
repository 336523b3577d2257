#!/bin/bash
# Proves: the VMM survives and reports whatever a guest does at the edges.
#  - a guest hammering unknown ports and unbacked MMIO keeps running; the
#    accesses are counted in `status`; SIGTERM while it is paused then
#    stops it cleanly (exit 0, socket removed);
#  - a triple fault ends the VMM with status 10 and says so;
#  - a reset through port 0xcf9 ends it with status 11 and says so.
# The guests are a few bytes of 64-bit code written here (hex below, from
# the assembly in the comments), loaded with --payload.
. "$(dirname "$0")/lib.sh"
kv_init

payload() { # payload NAME HEX
	# shellcheck disable=SC2059
	printf "$(sed 's/../\\x&/g' <<<"$2")" >"$KV_DIR/$1.bin"
	KV_WITNESS=$KV_DIR/$1.bin
}

# expect_exit STATUS MESSAGE_REGEX: the VMM exits by itself with STATUS.
expect_exit() {
	local i rc
	for i in $(seq 1 "$(kv_scaled 300)"); do
		kill -0 "$KV_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$KV_PID" 2>/dev/null && kv_fail "VMM still running, expected exit $1"
	wait "$KV_PID"; rc=$?; KV_PID=
	kv_log "exit status $rc: $(tail -n 1 "$KV_STDERR")"
	[ "$rc" = "$1" ] || kv_fail "exit status $rc, want $1"
	grep -qE "$2" "$KV_STDERR" || kv_fail "stderr does not say '$2'"
	[ -e "$KV_SOCK" ] && kv_fail "control socket left behind"
	return 0
}

kv_log "stage 1: unknown I/O and MMIO, then SIGTERM"
# 1: in $0x99,%al; out %al,$0x80; movabs 0x20000000,%eax; movabs %eax,0x20000000; jmp 1b
payload junk e499e680a10000002000000000a30000002000000000ebe8
kv_start --memory 64M --cpus 2
sleep 2
kv_ok '{"cmd":"status"}'
for k in pio_reads pio_writes mmio_reads mmio_writes; do
	n=$(jq -r ".return.unhandled_io.$k" <<<"$KV_REPLY")
	[ "$n" -gt 0 ] || kv_fail "unhandled_io.$k is $n after 2 s of junk I/O"
done
kv_ok '{"cmd":"pause"}'
kv_ok '{"cmd":"resume"}'
# SIGTERM with every vCPU parked: they must wake up and leave, too.
kv_ok '{"cmd":"pause"}'
kill -TERM "$KV_PID"
expect_exit 0 'stopped \(signal\)'

kv_log "stage 2: triple fault"
# ud2 with an empty IDT: #UD -> #GP -> #DF -> shutdown
payload triple 0f0b
KV_NO_WAIT=1 kv_start --memory 64M --cpus 1
expect_exit 10 'triple fault'

kv_log "stage 3: reset through port 0xcf9"
# mov $0xcf9,%dx; mov $6,%al; out %al,%dx; jmp .
payload reset 66baf90cb006eeebfe
KV_NO_WAIT=1 kv_start --memory 64M --cpus 1
expect_exit 11 'guest reset \(write to port 0xcf9\)'

kv_pass
