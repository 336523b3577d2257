# Tests of agent/: each links the libraries it tests and those below them.
# Only the libvirt tests link libagent_libvirt, and only test_libvirt_domains
# (which drives libvirt's API itself) is built with libvirt's flags.
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_cli_args.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_cli_json.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_commands.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_config.c,agent_libvirt agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_journal.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_kexec_marker.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_restore.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_peer_auth.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_report.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_update_machine.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_vm_disks.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_agent_vmm_wire.c,agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_libvirt_domains.c,agent_libvirt agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_libvirt_hook.c,agent_libvirt agent common))
$(eval $(call kvmlu_unit_test,tests/unit/agent/test_libvirt_tracked.c,agent_libvirt agent common))
$(OBJDIR_san)/tests/unit/agent/test_libvirt_domains.o: EXTRA_CFLAGS += $(shell pkg-config --cflags $(LIBVIRT_PKGS))
