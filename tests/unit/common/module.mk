# Tests of common/: each linked with libcommon only.
$(foreach t,$(wildcard tests/unit/common/test_*.c),$(eval $(call kvmlu_unit_test,$(t),common)))
