# agent/: the host side of a host update.
#   libagent          daemon/, update/, vmm/, config/, journal/, cli/ (all but the mains):
#                     no libvirt code, links json-c, xxhash and libcommon
#   libagent_libvirt  libvirt/ (all but its main): the only objects built
#                     with libvirt's and libxml2's flags
# Programs: kvmlu-agent (the daemon) and kvmlu-libvirt-hook use libvirt;
# the CLI kvmlu does not, and does not link it. Nor does kvmlu-qemu, the
# domains' <emulator> wrapper: it is built from its own five sources
# (also in libagent_libvirt, for the tests) and libcommon.
AGENT_MAINS := agent/daemon/agent_main.c agent/cli/kvmlu_main.c \
	agent/libvirt/kvmlu_libvirt_hook.c agent/libvirt/qemu_wrapper.c
AGENT_SRCS := $(wildcard $(addprefix agent/,$(addsuffix /*.c,daemon update vmm config journal cli)))
$(eval $(call kvmlu_lib,agent,$(filter-out $(AGENT_MAINS),$(AGENT_SRCS))))
LIB_agent_LDLIBS := -lxxhash

LIBVIRT_PKGS := libvirt libxml-2.0
$(call kvmlu_folder_cflags,agent/libvirt,$(shell pkg-config --cflags $(LIBVIRT_PKGS)))
$(eval $(call kvmlu_lib,agent_libvirt,$(filter-out $(AGENT_MAINS),$(wildcard agent/libvirt/*.c))))
LIB_agent_libvirt_LDLIBS := $(shell pkg-config --libs $(LIBVIRT_PKGS)) -lxxhash

$(eval $(call kvmlu_prog,kvmlu-agent,agent/daemon/agent_main.c,agent_libvirt agent guestmem common))
$(eval $(call kvmlu_prog,kvmlu,agent/cli/kvmlu_main.c,agent common))
$(eval $(call kvmlu_prog,kvmlu-libvirt-hook,agent/libvirt/kvmlu_libvirt_hook.c,agent_libvirt agent common))
$(eval $(call kvmlu_prog,kvmlu-qemu,agent/libvirt/qemu_wrapper.c agent/libvirt/qemu_argv.c \
	agent/libvirt/qemu_wrapper_config.c agent/libvirt/lvram_client.c \
	agent/libvirt/lvram_request.c,common))
