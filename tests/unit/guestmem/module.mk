# Tests of guestmem/: linked with libguestmem and what is below it.
$(foreach t,$(wildcard tests/unit/guestmem/test_*.c),$(eval $(call kvmlu_unit_test,$(t),guestmem common)))
