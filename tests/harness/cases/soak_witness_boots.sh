# Harness case for `make soak` only (tests/soak/run.sh writes
# build/harness/soak-boots as "COUNT MEMORY CPUS"; without it the case
# skips): boots that many witness VMs one after another on the nested KVM
# and counts those that end before every vCPU ticks. The emulator's nested
# triple fault struck witnesses at boot, so this is its direct measure.
HARNESS_TIMEOUT=5400
HARNESS_MEM=8G

. /harness/vm_common.sh

stage1() {
	[ -f /harness/soak_boots ] || skip "a soak case: run by tests/soak/run.sh"
	read -r count mem cpus </harness/soak_boots
	vm_need_binaries
	bad=0 i=1
	while [ $i -le "$count" ]; do
		n=boot$i
		vm_start $n "$mem" "$cpus"
		pid=$(cat /tmp/$n.pid) ok=0 s=0
		while [ $s -lt 300 ] && kill -0 "$pid" 2>/dev/null; do
			ok=1 c=0
			while [ $c -lt "$cpus" ]; do
				t=$(vm_last $n tick $c)
				case $t in '' | *[!0-9]*) ok=0 ;; *) [ "$t" -gt 0 ] || ok=0 ;; esac
				c=$((c + 1))
			done
			[ $ok = 1 ] && break
			sleep 1
			s=$((s + 1))
		done
		if [ $ok = 1 ]; then
			echo "boot $i: every vCPU ticked after ${s} s"
		else
			bad=$((bad + 1))
			echo "boot $i: FAILED (VMM $(kill -0 "$pid" 2>/dev/null && echo running || echo gone) after ${s} s)"
			# What each vCPU got to, and what the VMM says of them.
			tail -n 4 /tmp/$n.vmm
			tail -n 6 "$VM_SERIAL_DIR/$n.serial" | cat -v
			kill -0 "$pid" 2>/dev/null && vm_ctl $n status
		fi
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rm -f "$VM_SERIAL_DIR/$n.serial" /tmp/$n.vmm
		i=$((i + 1))
	done
	echo "witness boots: $count of $mem with $cpus vCPUs, $bad failed"
	[ $bad = 0 ] || fail "$bad of $count witness boots failed"
	pass "$count witness boots ($mem, $cpus vCPUs), none failed"
}
