# Every tests/unit/test_*.c is one cmocka binary linked with all libraries.
$(foreach t,$(wildcard tests/unit/test_*.c),$(eval $(call kvmlu_unit_test,$(t),$(LIBS_DEFINED))))
