#!/bin/bash
# Proves: the witness runs with guest RAM in a guest_memfd (mmap-able,
# shared): ticks advance, the guest verifies its own memory, a paused
# checksum is stable (memory_backend_lib.sh). Where this machine's KVM has
# no guest_memfd the QEMU host runs it (kv_need).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/memory_backend_lib.sh"
kv_init
kv_need guest_memfd
mb_runs guest_memfd
kv_pass
