#!/bin/bash
# Soak: KVMLU_SOAK_UPGRADES (default 300) live upgrades in a row of a
# 4-vCPU memfd witness, with the upgrade checks of every round (same boot
# id, every vCPU's ticks continue, guest time neither back nor jumping,
# nothing copied, the checksum at pause every 5th round) and guest-verify
# every 25 rounds. Any failure ends it (one FAIL line, the round named).
# Run by `make soak` on /dev/kvm, or inside the QEMU host without it.
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
. "$(dirname "$0")/../native/lib.sh"
. "$(dirname "$0")/../native/upgrade_lib.sh"
kv_init
UP_ROUNDS=${KVMLU_SOAK_UPGRADES:-300}
UP_VERIFY_EVERY=25
kv_log "== $UP_ROUNDS upgrades, 4 vCPUs, memfd"
up_upgrades_in_row memfd 4
kv_log "$UP_ROUNDS upgrades, 0 failures"
kv_pass
exit
}
