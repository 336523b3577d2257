# Harness case: three witness VMs, one on guest_memfd, survive a host
# kexec through LUO. Stage 1: vm-a (1 vCPU, 256 MiB memfd), vm-b (2
# vCPUs, 512 MiB memfd) and vm-g (1 vCPU, 64 MiB guest_memfd) run; vm-g
# is live-upgraded once (the new VMM links the old VM's guest_memfd with
# KVM_LINK_GUEST_MEMFD: nothing copied), then all three are prepared
# (paused, state and RAM files in sessions kvmlu/vm/<name>; vm-g's
# guest_memfd through the project's LUO handler, kernel/patches) and the
# host kexecs. Stage 2: `kvmlu-vmm restore --session` brings each back
# (vm-g: the retrieved guest_memfd linked into the new VM): same boot id,
# ticks and guest uptime continue, the memory checksum after the kexec
# equals the one at pause, the guest's own verification passes; vm-g is
# then live-upgraded again on the retrieved memory.
HARNESS_MEM=3G
HARNESS_TIMEOUT=700

. /harness/vm_common.sh

stage1() {
	vm_need_binaries
	vm_start vm-a 256M 1
	vm_start vm-b 512M 2
	vm_start vm-g 64M 1 guest_memfd
	vm_wait_running vm-a
	vm_wait_running vm-b
	vm_wait_tick vm-b 0 60 1 || fail "vm-b: vCPU 1 printed no tick"
	vm_wait_running vm-g
	vm_upgrade_linked vm-g

	vm_prepare vm-a
	vm_prepare vm-b
	vm_prepare vm-g
	harness_log "all three VMs prepared (vm-g on guest_memfd); kexec"
	vm_kexec_next_stage
}

stage2() {
	vm_need_binaries
	vm_restore vm-a
	vm_restore vm-b
	vm_restore vm-g
	vm_check_continued vm-a
	vm_check_continued vm-b
	vm_check_continued vm-g
	vm_upgrade_linked vm-g
	pass "vm-a, vm-b (memfd) and vm-g (guest_memfd) survived the kexec: same boot ids, ticks on, checksums equal, guest verify ok; vm-g upgraded with its memory linked before and after"
}
