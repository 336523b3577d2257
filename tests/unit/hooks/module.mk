# Tests of the test hooks of the test programs (tests/hooks/test_hooks.c,
# which every unit test links): no project library.
$(foreach t,$(wildcard tests/unit/hooks/test_*.c),$(eval $(call kvmlu_unit_test,$(t),)))
