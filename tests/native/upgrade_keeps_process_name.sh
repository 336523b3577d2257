#!/bin/bash
# Proves: after a live upgrade the new process is still named kvmlu-vmm
# (ps -o comm=, what ps -C and pidof match), though the upgrade execs it
# through /proc/self/exe, which the kernel would call "exe".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
kv_init
up_start --memory 256M --cpus 1
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60
comm=$(ps -o comm= -p "$KV_PID")
kv_log "before the upgrade: pid $KV_PID is '$comm'"
[ "$comm" = kvmlu-vmm ] || kv_fail "process name '$comm' before the upgrade"
for round in 1 2; do
	up_upgrade
	comm=$(ps -o comm= -p "$KV_PID")
	kv_log "after upgrade $round: pid $KV_PID is '$comm'"
	[ "$comm" = kvmlu-vmm ] || kv_fail "process name '$comm' after upgrade $round, expected kvmlu-vmm"
	ps -C kvmlu-vmm -o pid= | grep -qw "$KV_PID" || kv_fail "ps -C kvmlu-vmm does not list $KV_PID"
done
up_check_sanitizers
up_stop
kv_pass
