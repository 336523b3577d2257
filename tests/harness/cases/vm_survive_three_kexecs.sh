# Harness case: the same three witness VMs survive three host kexecs in a
# row (a host's life has many updates). Each stage restores the VMs from
# their LUO sessions, checks they continued (boot id, ticks, uptime,
# checksum at pause == checksum after, guest verify), prepares them again
# and kexecs; stage 4 checks the third handover. vm-g is on guest_memfd:
# from stage 2 on what it preserves is the retrieved memory linked into
# its new VM (KVM_LINK_GUEST_MEMFD). Smaller VMs than vm_survive_kexec
# (128 MiB/1 vCPU, 256 MiB/2 vCPUs, 64 MiB/1 vCPU) to keep the run short.
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
	pass "vm-a, vm-b (memfd) and vm-g (guest_memfd) survived three kexecs in a row: boot ids kept, checksums equal each time"
}
