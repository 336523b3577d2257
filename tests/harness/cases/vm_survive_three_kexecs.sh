# Harness case: three witness VMs, one on guest_memfd, survive three host
# kexecs in a row through LUO (a host's life has many updates). Stage 1:
# vm-a (1 vCPU, 128 MiB memfd), vm-b (2 vCPUs, 256 MiB memfd) and vm-g
# (1 vCPU, 64 MiB guest_memfd) run; vm-g is live-upgraded once (the new
# VMM links the old VM's guest_memfd with KVM_LINK_GUEST_MEMFD: nothing
# copied); all three are prepared (paused, state and RAM files in
# sessions kvmlu/vm/<name>; vm-g's guest_memfd through the project's LUO
# handler, kernel/patches) and the host kexecs. Stages 2 and 3 restore
# each VM with `kvmlu-vmm restore --session`, check it continued (same
# boot id, ticks and guest uptime go on, the memory checksum after the
# kexec equals the one at pause, the guest's own verification passes),
# prepare it again and kexec; from stage 2 on what vm-g preserves is the
# retrieved memory linked into its new VM. Stage 4 checks the third
# handover and live-upgrades vm-g once more on the retrieved memory.
HARNESS_MEM=2G
HARNESS_TIMEOUT=900

. /harness/vm_common.sh

stage1() {
	vm_need_binaries
	vm_start vm-a 128M 1
	vm_start vm-b 256M 2
	vm_start vm-g 64M 1 guest_memfd
	vm_wait_running vm-a
	vm_wait_running vm-b
	vm_wait_running vm-g
	vm_upgrade_linked vm-g
	vm_prepare vm-a
	vm_prepare vm-b
	vm_prepare vm-g
	vm_kexec_next_stage
}

restore_check_prepare() {
	vm_need_binaries
	vm_restore vm-a
	vm_restore vm-b
	vm_restore vm-g
	vm_check_continued vm-a
	vm_check_continued vm-b
	vm_check_continued vm-g
	vm_prepare vm-a
	vm_prepare vm-b
	vm_prepare vm-g
	harness_log "kexec $HARNESS_STAGE of 3 survived; preparing the next"
	vm_kexec_next_stage
}

stage2() { restore_check_prepare; }
stage3() { restore_check_prepare; }

stage4() {
	vm_need_binaries
	vm_restore vm-a
	vm_restore vm-b
	vm_restore vm-g
	vm_check_continued vm-a
	vm_check_continued vm-b
	vm_check_continued vm-g
	vm_upgrade_linked vm-g
	pass "vm-a, vm-b (memfd) and vm-g (guest_memfd) survived three kexecs in a row: boot ids kept, checksums equal each time; vm-g upgraded with its memory linked before and after"
}
