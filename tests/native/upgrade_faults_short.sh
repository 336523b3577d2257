#!/bin/bash
# Proves, in short, what `make soak` proves at length: 20 live upgrades,
# each with a fault at a random message of the hand-over (either process
# killed, stopped or delayed), never run the guest twice and never lose
# a VM without the failing command saying so (tests/soak/upgrade_faults.sh
# has the checks).
# Its 1.5 s upgrade deadline and 0.1..3 s faults are hardware's: under
# the QEMU host's nested KVM (KV_WAIT_SCALE > 1) nearly every upgrade
# would just time out, so it does not run there.
if [ "${KV_WAIT_SCALE:-1}" -gt 1 ]; then
	echo "fault timings are for hardware KVM, not nested (KV_WAIT_SCALE=$KV_WAIT_SCALE)"
	exit 77
fi
KVMLU_SOAK_FAULTS=${KVMLU_SOAK_FAULTS:-20} exec "$(dirname "$0")/../soak/upgrade_faults.sh"
