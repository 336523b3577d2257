# Unit tests of vmm/ (the VM core, vmm/state/, vmm/boot/, vmm/devices/,
# vmm/control/), one line each, linked with libvmm and the libraries
# below it only.
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_control_protocol.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_control_server.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_linux_boot.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_linux_boot_debian_kernel.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_linux_boot_i8042.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_options.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_state_corpus.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_state_fdt.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_state_memfd.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_state_roundtrip.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_vmm_devices.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_vmm_io_bus.c,vmm guestmem common))
$(eval $(call kvmlu_unit_test,tests/unit/vmm/test_vmm_kvm.c,vmm guestmem common))
