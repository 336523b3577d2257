# Test-only tools the harness cases run inside the QEMU host (never shipped:
# no package lists them). lvram-spike: harness/lvram_qemu_spike.
# subreaper: libvirtd's parent in the cases that run it, which reaps the
# QEMU processes libvirt ends at once, as systemd does on a host.
$(eval $(call kvmlu_prog,lvram-spike,tests/harness/tools/lvram_spike.c,guestmem common))
$(eval $(call kvmlu_prog,subreaper,tests/harness/tools/subreaper.c,))
