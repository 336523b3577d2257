# make bench: checksum throughput next to plain memory reads (bench_checksum.sh).
$(eval $(call kvmlu_prog,kvmlu-bench-mem,tests/bench/bench_mem.c,guestmem common))
# make bench: PRESERVE_FD/RETRIEVE_FD of 4 KiB against 2 MiB memfd folios,
# inside the QEMU host (bench_folio_preserve.sh, harness/memfd_folio_preserve).
$(eval $(call kvmlu_prog,kvmlu-bench-folio,tests/bench/bench_folio.c,guestmem common))
# make bench: the QEMU peer of the live-upgrade bench talks QMP with it
# (bench_upgrade.sh, upgrade_peer.sh).
$(eval $(call kvmlu_prog,qmp-call,tests/bench/qmp_call.c,))
