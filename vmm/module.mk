# kvmlu-vmm: libvmm.a (everything in vmm/ and its subfolders, so new files
# in vmm/state/, vmm/boot/, vmm/devices/, vmm/virtio/, vmm/control/, vmm/upgrade/,
# vmm/live_update/ are picked up without editing this file), the kvmlu-vmm program (main only) and the
# kvmlu-ctl control client (vmm/tools/).
VMM_SRCS := $(filter-out vmm/main/kvmlu_vmm.c vmm/tools/%,\
	$(wildcard vmm/*.c vmm/*/*.c vmm/*/*/*.c))
$(eval $(call kvmlu_lib,vmm,$(VMM_SRCS)))
LIB_vmm_LDLIBS := -lfdt
$(eval $(call kvmlu_prog,kvmlu-vmm,vmm/main/kvmlu_vmm.c,vmm guestmem common))
$(eval $(call kvmlu_prog,kvmlu-ctl,vmm/tools/kvmlu_ctl.c,))
