# Test-only tools the harness cases run inside the QEMU host (never shipped:
# no package lists them). lvram-spike: harness/lvram_qemu_spike.
$(eval $(call kvmlu_prog,lvram-spike,tests/harness/tools/lvram_spike.c,guestmem common))
