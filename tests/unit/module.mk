# tests/unit/<folder>/module.mk registers the tests of one source folder,
# each linked with the library it tests and those below it only.
include $(wildcard tests/unit/*/module.mk)
# Tests not moved into a folder yet: linked with every library.
$(foreach t,$(wildcard tests/unit/test_*.c),$(eval $(call kvmlu_unit_test,$(t),$(LIBS_DEFINED))))
