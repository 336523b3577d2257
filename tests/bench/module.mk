# make bench: checksum throughput next to plain memory reads (bench_checksum.sh).
$(eval $(call kvmlu_prog,kvmlu-bench-mem,tests/bench/bench_mem.c,guestmem common))
# make bench: PRESERVE_FD/RETRIEVE_FD of 4 KiB against 2 MiB memfd folios,
# inside the QEMU host (bench_folio_preserve.sh, harness/memfd_folio_preserve).
$(eval $(call kvmlu_prog,kvmlu-bench-folio,tests/bench/bench_folio.c,guestmem common))
# make bench: the load generator of bench_virtio_io.sh, static so that the
# same binary runs in the stock Linux guest (busybox initramfs) and in the
# QEMU host. Not a kvmlu_prog: no project libraries, no sanitizer build.
$(BINDIR_rel)/kvmlu-loadgen: tests/bench/loadgen.c
	@mkdir -p $(@D)
	$(CC) $(STD) $(WARN) -O2 -static -o $@ $<
all: $(BINDIR_rel)/kvmlu-loadgen
# make bench: the QEMU peer of the live-upgrade bench talks QMP with it
# (bench_upgrade.sh, upgrade_peer.sh).
$(eval $(call kvmlu_prog,qmp-call,tests/bench/qmp_call.c,))
