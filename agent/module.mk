# agent/: libagent (everything but the two mains), the daemon kvmlu-agent
# and the CLI kvmlu. Both link libguestmem for the LUO session layer.
AGENT_MAINS := agent/agent_main.c agent/kvmlu_main.c agent/kvmlu_libvirt_hook.c
# libvirt_*.c (issue 7) use libvirt's C API and libxml2 (headers in /usr/include/libxml2).
LIBVIRT_PKGS := libvirt libxml-2.0
$(foreach b,rel san fuzz,$(eval CFLAGS_$(b) += $(shell pkg-config --cflags $(LIBVIRT_PKGS))))
$(eval $(call kvmlu_lib,agent,$(filter-out $(AGENT_MAINS),$(wildcard agent/*.c))))
LIB_agent_LDLIBS := $(shell pkg-config --libs $(LIBVIRT_PKGS)) -lxxhash
$(eval $(call kvmlu_prog,kvmlu-agent,agent/agent_main.c,agent guestmem common))
$(eval $(call kvmlu_prog,kvmlu,agent/kvmlu_main.c,agent guestmem common))
$(eval $(call kvmlu_prog,kvmlu-libvirt-hook,agent/kvmlu_libvirt_hook.c,agent guestmem common))
