# Every tests/fuzz/fuzz_*.c is one libFuzzer target linked with all libraries.
$(foreach t,$(wildcard tests/fuzz/fuzz_*.c),$(eval $(call kvmlu_fuzzer,$(t),$(LIBS_DEFINED))))
