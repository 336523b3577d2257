#!/bin/bash
# Proves: the witness runs with guest RAM in a memfd: ticks advance, the
# guest verifies its own memory, a paused checksum is stable
# (memory_backend_lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/memory_backend_lib.sh"
kv_init
mb_runs memfd
kv_pass
