#!/bin/bash
# Proves: a memfd-backed witness guest with 1 and then 4 vCPUs survives 10
# live upgrades in a row each (make soak runs 300): same boot id, every vCPU's ticks continue,
# guest time neither goes back nor jumps by more than the exchange, no
# memory copied, the checksum taken at pause matches in the new process
# (every 5th round), guest-verify passes at the end, no sanitizer report.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init
for cpus in 1 4; do
	kv_log "== $cpus vCPU(s), memfd"
	up_upgrades_in_row memfd "$cpus"
	: >"$KV_STDERR"
done
kv_pass
