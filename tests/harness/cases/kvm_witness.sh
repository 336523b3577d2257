# Harness case: KVM works inside the QEMU host (nested SVM under TCG).
# kvmlu-vmm runs the witness guest on the nested /dev/kvm; its ticks
# advance; over the control socket (kvmlu-ctl) pause stops the ticks and two
# checksums while paused agree, resume lets the ticks go on with the same
# boot id. Single stage, no kexec. SKIPs while the binaries are not built.
HARNESS_TIMEOUT=240

W_SERIAL=/tmp/witness.serial
W_SOCK=/run/witness.sock

witness_last() { # witness_last FIELD: that field of the last cpu=0 tick line
	serial_lines "$W_SERIAL" | grep 'cpu=0 tick=' | tail -n 1 | sed -n "s/.* $1=\([^ ]*\).*/\1/p"
}

witness_wait_tick() { # witness_wait_tick AFTER SECONDS: wait for a tick > AFTER
	local i=0 t
	while [ $i -lt "$2" ]; do
		t=$(witness_last tick)
		[ -n "$t" ] && [ "$t" -gt "$1" ] && return 0
		sleep 1
		i=$((i + 1))
	done
	return 1
}

ctl() { # ctl CMD: one control request, the JSON reply line on stdout
	kvmlu-ctl -t 30 "$W_SOCK" "{\"cmd\":\"$1\"}"
}

ok() { grep -q '"ok": *true'; }

digest() { # digest: the "digest" of a checksum reply on stdin
	sed -n 's/.*"digest": *"\([0-9a-f]*\)".*/\1/p'
}

stage1() {
	for f in /kvmlu/bin/kvmlu-vmm /kvmlu/bin/kvmlu-ctl /kvmlu/guest/witness.bin; do
		[ -e "$f" ] || skip "build/${f#/kvmlu/} not built yet (run make)"
	done
	[ -e /dev/kvm ] || fail "/dev/kvm missing in the harness host (KVM_AMD nested SVM?)"
	kvmlu-vmm run --name witness --memory 64M --cpus 2 \
		--payload /kvmlu/guest/witness.bin --serial "$W_SERIAL" \
		--control "$W_SOCK" >/tmp/vmm.log 2>&1 &
	vmm=$!
	witness_wait_tick 0 120 || {
		cat /tmp/vmm.log "$W_SERIAL"
		fail "witness printed no tick within 120 s"
	}
	boot=$(witness_last boot)
	t1=$(witness_last tick)
	witness_wait_tick "$t1" 30 || fail "witness ticks stuck at $t1"
	harness_log "witness boot=$boot ticks advance: $t1 -> $(witness_last tick)"

	r=$(ctl pause)
	echo "$r" | ok || fail "pause refused: $r"
	sleep 2
	p1=$(witness_last tick)
	r=$(ctl checksum)
	c1=$(echo "$r" | digest)
	[ -n "$c1" ] || fail "checksum gave no digest: $r"
	sleep 3
	c2=$(ctl checksum | digest)
	p2=$(witness_last tick)
	[ "$p1" = "$p2" ] || fail "ticks went on while paused: $p1 -> $p2"
	[ "$c1" = "$c2" ] || fail "checksums differ while paused: $c1 vs $c2"
	harness_log "paused at tick $p1, checksum $c1 twice"
	r=$(ctl resume)
	echo "$r" | ok || fail "resume refused: $r"
	witness_wait_tick "$p2" 30 || fail "ticks did not resume after $p2"
	[ "$(witness_last boot)" = "$boot" ] ||
		fail "boot id changed across pause/resume: $boot -> $(witness_last boot)"
	ctl shutdown >/dev/null
	kill "$vmm" 2>/dev/null
	cat "$W_SERIAL" | tail -n 5
	pass "witness on nested KVM: ticks advance, pause holds, checksum stable, resume continues"
}
