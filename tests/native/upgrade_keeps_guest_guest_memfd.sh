#!/bin/bash
# Proves: a guest_memfd-backed witness guest with 1 and then 4 vCPUs
# survives 10 live upgrades in a row each (make soak runs 300 on memfd): same boot id, every vCPU's
# ticks continue, guest time neither goes back nor jumps by more than the
# exchange, all 256 MiB copied into the new VM's own guest_memfd (a
# guest_memfd cannot move to another VM), the checksum taken at pause
# matches in the new process (every 5th round), guest-verify passes at
# the end, no sanitizer report. Where this machine's KVM has no
# guest_memfd the QEMU host runs it (kv_need).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init
kv_need guest_memfd
for cpus in 1 4; do
	kv_log "== $cpus vCPU(s), guest_memfd"
	up_upgrades_in_row guest_memfd "$cpus"
	: >"$KV_STDERR"
done
kv_pass
