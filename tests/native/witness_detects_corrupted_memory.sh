#!/bin/bash
# Proves the witness guest's verification is real: a pause/resume without
# changes verifies ok; one word of guest RAM changed from outside while
# paused (through the VMM's memfd, /proc/PID/fd) makes the next verify
# fail, naming exactly that word; putting the original bytes back makes
# it pass again. The boot id stays the same throughout (no restart).
. "$(dirname "$0")/lib.sh"
kv_init

# 16 MiB: well inside the pattern, which starts at KVMLU_PAYLOAD_AREA_END.
OFFSET=$((16 << 20))
OFFSET_HEX=$(printf %x $OFFSET)

# verify ok|failed: guest-verify's reply says so, and a new witness line
# (printed before the guest writes its result port) is left in $line.
verify() {
	local before
	before=$(grep -c '^witness verify ' "$KV_SERIAL")
	kv_ok "{\"cmd\":\"guest-verify\",\"args\":{\"timeout_ms\":$(kv_scaled 10000)}}" 30
	[ "$(kv_ret result)" = "$1" ] || kv_fail "guest-verify result $(kv_ret result), want $1"
	kv_wait_serial '^witness verify ' 10 $((before + 1))
	line=$(grep '^witness verify ' "$KV_SERIAL" | tail -n 1)
	kv_log "$line"
}

# ram_fd: $fd, the VMM's guest RAM memfd; region 0 is at GPA 0, so offset = GPA.
ram_fd() {
	for fd in /proc/"$KV_PID"/fd/*; do
		case $(readlink "$fd") in
		"/memfd:kvmlu:$KV_NAME:ram0"*) return 0 ;;
		esac
	done
	kv_fail "no memfd kvmlu:$KV_NAME:ram0 in /proc/$KV_PID/fd"
}

word_at() { # word_at FILE: the 8 bytes at OFFSET, as hex
	dd if="$1" bs=8 skip=$((OFFSET / 8)) count=1 status=none | od -An -tx1 | tr -d ' \n'
}

put_word() { # put_word FILE HEX16: write those 8 bytes at OFFSET, in place
	local esc= i
	for ((i = 0; i < 16; i += 2)); do
		esc+="\\x${2:i:2}"
	done
	printf %b "$esc" | dd of="$1" bs=8 seek=$((OFFSET / 8)) count=1 conv=notrunc status=none ||
		kv_fail "writing 8 bytes at $OFFSET to $1"
	[ "$(word_at "$1")" = "$2" ] || kv_fail "word at $OFFSET is $(word_at "$1") after writing $2"
}

kv_log "stage 1: boot a 256M, 2-vCPU witness"
kv_start --memory 256M --cpus 2
kv_wait_serial '^witness start boot=' 60
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=1 tick=' 30
boot=$(kv_boot_ids)
kv_log "$(grep '^witness start' "$KV_SERIAL")"

kv_log "stage 2: pause, change nothing, resume: verify must say ok"
kv_ok '{"cmd":"pause"}'
kv_ok '{"cmd":"resume"}'
verify ok
[[ $line =~ ^witness\ verify\ boot=$boot\ result=ok\ pages=[0-9]+\ ms=[0-9]+$ ]] ||
	kv_fail "unexpected verify line: $line"

kv_log "stage 3: pause, change the word at GPA 0x$OFFSET_HEX through the memfd, resume"
kv_ok '{"cmd":"pause"}'
ram_fd
orig=$(word_at "$fd")
[ ${#orig} = 16 ] || kv_fail "could not read 8 bytes at $OFFSET from $fd"
[ "$orig" != 0000000000000000 ] || kv_fail "RAM at $OFFSET is zero: the pattern was never written"
bad=
for ((i = 0; i < 16; i += 2)); do
	bad+=$(printf %02x $((0x${orig:i:2} ^ 0xa5)))
done
put_word "$fd" "$bad"
kv_log "word was $orig, now $bad"
kv_ok '{"cmd":"resume"}'

kv_log "stage 4: verify must fail and name exactly that word"
verify failed
[ "$line" = "witness verify boot=$boot result=FAILED bad_words=1 first_bad=$OFFSET_HEX" ] ||
	kv_fail "expected bad_words=1 first_bad=$OFFSET_HEX, got: $line"

kv_log "stage 5: pause, put the original word back, resume: verify must say ok again"
kv_ok '{"cmd":"pause"}'
put_word "$fd" "$orig"
kv_ok '{"cmd":"resume"}'
verify ok

kv_log "stage 6: the guest never restarted"
[ "$(kv_boot_ids)" = "$boot" ] || kv_fail "boot ids: $(kv_boot_ids | tr '\n' ' ')"
grep -q FATAL "$KV_SERIAL" && kv_fail "the witness reported: $(grep FATAL "$KV_SERIAL")"

kv_stop
kv_pass
