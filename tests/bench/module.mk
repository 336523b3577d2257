# make bench: checksum throughput next to plain memory reads (bench_checksum.sh).
$(eval $(call kvmlu_prog,kvmlu-bench-mem,tests/bench/bench_mem.c,guestmem common))
