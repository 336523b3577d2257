# Harness case: hashing guest RAM allocates none of its holes, and what
# prepare-update does to them is what docs/agent.md says. A 1 GiB VM
# whose payload is a 2-byte spin loop (`jmp .`: the witness fills all of
# its RAM, this guest touches nothing) keeps almost all of its memfd as
# holes. Measured as the RAM memfd's allocated blocks (stat -L through
# /proc/PID/fd) and the VMM's own status "memory_resident":
#  - pause + checksum: growth below 8 MiB (before the fix: all 1 GiB);
#  - prepare-update: the kernel's memfd preservation (mm/memfd_luo.c,
#    memfd_pin_folios) allocates every hole, so the file is fully
#    allocated, and the checksum prepare-update records equals the one
#    taken over the holes;
#  - abort-update: the pages stay allocated (the agent's preflight counts
#    this memory before any prepare-update); the VM runs again.
HARNESS_MEM=3G
HARNESS_TIMEOUT=400

. /harness/vm_common.sh
[ -x /kvmlu/san/kvmlu-vmm ] && VM_BIN=/kvmlu/san/kvmlu-vmm

V=vm-sparse
SIZE_KIB=$((1024 * 1024))

ram_kib() { # allocated KiB of the VM's guest RAM memfds
	_pid=$(cat "/tmp/$V.pid")
	_sum=0
	for _fd in $(ls -l "/proc/$_pid/fd" | grep "memfd:.*$V.*ram[0-9]* (deleted)" |
		     sed -n 's/.* \([0-9]*\) -> .*/\1/p'); do
		set -- $(stat -L -c '%b %B' "/proc/$_pid/fd/$_fd")
		_sum=$((_sum + $1 * $2 / 1024))
	done
	echo "$_sum"
}

resident_kib() { # the VMM's status memory_resident, in KiB
	_n=$(vm_ctl "$V" status | json_num memory_resident)
	[ -n "$_n" ] || fail "$V: status has no memory_resident"
	echo $((_n / 1024))
}

measure() { # measure LABEL: sets KIB, checks the VMM's figure agrees
	KIB=$(ram_kib)
	_r=$(resident_kib)
	harness_log "$V $1: RAM memfd allocated $KIB KiB of $SIZE_KIB, status memory_resident $_r KiB"
	[ "$KIB" -gt 0 ] || fail "$V: no RAM memfd found for pid $(cat "/tmp/$V.pid")"
	[ "$_r" -le "$KIB" ] && [ $((KIB - _r)) -le 1024 ] ||
		fail "$V $1: memory_resident $_r KiB disagrees with the file's $KIB KiB"
}

ok_or_fail() { # ok_or_fail WHAT REPLY
	echo "$2" | grep -q '"ok":true' || {
		tail -n 5 "/tmp/$V.vmm"
		fail "$V: $1 failed: $2"
	}
}

stage1() {
	vm_need_binaries
	printf '\353\376' >/tmp/spin.bin
	rm -f "/run/$V.sock"
	$VM_BIN run --name "$V" --memory 1G --cpus 1 --payload /tmp/spin.bin \
		--serial "/tmp/$V.serial" --control "/run/$V.sock" >"/tmp/$V.vmm" 2>&1 &
	echo $! >"/tmp/$V.pid"
	i=0
	until vm_ctl "$V" status 2>/dev/null | grep -q '"state":"running"'; do
		kill -0 "$(cat "/tmp/$V.pid")" 2>/dev/null || fail "$V: VMM exited: $(tail -n 3 "/tmp/$V.vmm")"
		[ $i -lt 120 ] || fail "$V: not running within 120 s"
		sleep 1
		i=$((i + 1))
	done

	measure "running"
	ok_or_fail pause "$(vm_ctl "$V" pause)"
	measure "paused"
	before=$KIB
	r=$(vm_ctl "$V" checksum)
	ok_or_fail checksum "$r"
	sum=$(echo "$r" | json_str digest)
	harness_log "$V checksum: $r"
	measure "after checksum"
	after=$KIB
	[ $((after - before)) -lt 8192 ] ||
		fail "$V: checksum allocated $((after - before)) KiB of holes ($before -> $after KiB)"
	[ "$before" -lt $((SIZE_KIB / 4)) ] ||
		fail "$V: not a mostly empty guest: $before KiB of $SIZE_KIB allocated before the checksum"
	ok_or_fail resume "$(vm_ctl "$V" resume)"

	r=$(vm_ctl "$V" prepare-update)
	ok_or_fail prepare-update "$r"
	harness_log "$V prepared: $r"
	[ "$(echo "$r" | json_str checksum)" = "$sum" ] ||
		fail "$V: prepare-update recorded another checksum than $sum over the same memory: $r"
	measure "after prepare-update"
	prepared=$KIB
	[ "$prepared" -eq "$SIZE_KIB" ] ||
		fail "$V: prepare-update left $prepared KiB of $SIZE_KIB allocated; docs/agent.md says the kernel allocates every hole"
	ok_or_fail abort-update "$(vm_ctl "$V" abort-update)"
	measure "after abort-update"
	aborted=$KIB
	[ "$aborted" -eq "$SIZE_KIB" ] ||
		fail "$V: after abort-update $aborted KiB allocated; docs/agent.md says the holes stay allocated"
	vm_ctl "$V" status | grep -q '"state":"running"' || fail "$V: not running after abort-update"
	vm_ctl "$V" shutdown >/dev/null
	wait "$(cat "/tmp/$V.pid")"
	pass "1 GiB VM: checksum allocated $((after - before)) KiB ($before -> $after KiB), digest $sum = prepare-update's; prepare-update allocated all holes ($prepared KiB), still $aborted KiB after abort-update"
}
