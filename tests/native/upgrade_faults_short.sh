#!/bin/bash
# Proves, in short, what `make soak` proves at length: 20 live upgrades,
# each with a fault at a random message of the hand-over (either process
# killed, stopped or delayed), never run the guest twice and never lose
# a VM without the failing command saying so (tests/soak/upgrade_faults.sh
# has the checks).
KVMLU_SOAK_FAULTS=${KVMLU_SOAK_FAULTS:-20} exec "$(dirname "$0")/../soak/upgrade_faults.sh"
