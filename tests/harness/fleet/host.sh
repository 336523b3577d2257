# Guest side of the fleet test (tests/harness/fleet/run.sh): a harness host
# as a fleet operator's host, which Ansible then updates over SSH. Put into
# the initramfs as /cases/fleet_host.sh by segment.sh (not in cases/, so
# check.sh does not run it as a case of its own); sourced by /init (busybox
# sh). The host never gives a verdict: run.sh judges from outside and stops
# QEMU.
#
# Stage 1 (cold boot): kvmlu installed as the README says (shipped
# configuration, allow_kexec on), two witness VMs, the agent, then SSH.
# Every later stage is booted by the agent's kexec, the command line the
# playbook chose: `kvmlu-agent --restore` as kvmlu-restore.service runs
# it, the agent, then SSH again. Before SSH comes up each boot also
# rebuilds /tmp/next-initrd.cpio from its rootfs, the initrd the playbook
# names for the next kernel, so every boot has what the first had.
# Expectations (the VMs' boot ids) go to $HARNESS_CARRY for check.sh.

. /harness/agent_common.sh

FLEET_VMS="vm-a vm-b"

fleet_net_up() { # the NIC on QEMU's user network (10.0.2.0/24)
	ip link set lo up
	ip link set eth0 up || fail "no eth0: CONFIG_VIRTIO_NET or QEMU's -device missing"
	ip addr add 10.0.2.15/24 dev eth0 || fail "could not address eth0"
}

fleet_serve() { # SSH for Ansible, then wait for run.sh to stop QEMU
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build the next initramfs"
	grep -q '^sshd:' /etc/passwd || echo 'sshd:x:101:65534::/run/sshd:/bin/false' >>/etc/passwd
	mkdir -p /run/sshd /root/.ssh
	chmod 700 /root/.ssh
	/usr/sbin/sshd -E /tmp/sshd.log || fail "sshd did not start: $(tail -n 3 /tmp/sshd.log)"
	harness_log "fleet host ready: stage $HARNESS_STAGE, boot id $(cat /proc/sys/kernel/random/boot_id)"
	while :; do sleep 3600; done
}

stage1() {
	ag_need
	ag_install_shipped
	ag_unit_dirs
	vm_start vm-a 64M 1
	vm_start vm-b 128M 1
	for vm in $FLEET_VMS; do
		vm_wait_running $vm
	done
	ag_start
	for vm in $FLEET_VMS; do
		vm_last $vm boot >"$HARNESS_CARRY/$vm.boot"
	done
	fleet_net_up
	fleet_serve
}

fleet_after_kexec() {
	ag_need
	ag_use_shipped
	ag_unit_dirs
	# Serial logs carry over on disk: check.sh counts only newer ticks.
	for vm in $FLEET_VMS; do
		_t=$(vm_last $vm tick)
		echo "${_t:-0}" >/tmp/$vm.stale
	done
	$KVMLU_AGENT --config "$AG_CONF" --restore >/tmp/restore.out 2>&1
	harness_log "kvmlu-agent --restore exited $?"
	cat /tmp/restore.out
	ag_start
	fleet_net_up
	fleet_serve
}

stage2() { fleet_after_kexec; }
stage3() { fleet_after_kexec; }
stage4() { fleet_after_kexec; }
