# libguestmem: guest RAM files, memslots, checksums (XXH3).
$(eval $(call kvmlu_lib,guestmem,$(wildcard guestmem/*.c)))
LIB_guestmem_LDLIBS := -lxxhash

# make bench: checksum throughput next to plain memory reads (bench_checksum.sh).
$(eval $(call kvmlu_prog,kvmlu-bench-mem,tests/bench/bench_mem.c,guestmem common))
