# Unit tests of vmm/ (the VM core, vmm/state/, vmm/boot/, vmm/devices/,
# vmm/control/): each linked with libvmm and the libraries below it only.
$(foreach t,$(wildcard tests/unit/vmm/test_*.c),$(eval $(call kvmlu_unit_test,$(t),vmm guestmem common)))
