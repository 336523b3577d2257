# kvmlu-test-caps: what this machine's KVM and kernel have, for the native
# tests and the harness (tests/caps/kvmlu_test_caps.c). No project library.
$(eval $(call kvmlu_prog,kvmlu-test-caps,tests/caps/kvmlu_test_caps.c,))
