# Harness case: kexec after kexec in one QEMU host, each next kernel
# loaded as the VM cases and the bench load it (vm_kexec_load_next: this
# kernel's refined TSC rate as the next one's early rate). Shows that
# every stage is a new boot (boot id) and that the command line does not
# grow: one tsc_early_khz= however many stages (one more piled up per
# stage until 2026-12-05). kvmlu.kexecs=N on the command line
# (KVMLU_HARNESS_APPEND) asks for N kexecs instead of 3:
# tests/bench/bench_kexec.sh does, with and without nokaslr, and reads
# each kexec's phases from the log.
HARNESS_TIMEOUT=600

. /harness/vm_common.sh

KEXECS=$(sed -n 's/.*kvmlu\.kexecs=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$KEXECS" ] || KEXECS=3

in_row() {
	_id=$(cat /proc/sys/kernel/random/boot_id)
	if [ "$HARNESS_STAGE" -gt 1 ]; then
		grep -qx "$_id" "$HARNESS_CARRY/boot_ids" &&
			fail "stage $HARNESS_STAGE: boot id $_id seen before: no new kernel booted"
		_n=$(tr ' ' '\n' </proc/cmdline | grep -c '^tsc_early_khz=')
		[ "$_n" = 1 ] || fail "stage $HARNESS_STAGE: $_n tsc_early_khz= words on the command line: $(cat /proc/cmdline)"
	fi
	echo "$_id" >>"$HARNESS_CARRY/boot_ids"
	# Where KASLR put this kernel, for the bench's table.
	harness_log "kernel code at $(sed -n 's/^ *\([0-9a-f]*\)-.* : Kernel code$/\1/p' /proc/iomem | head -n 1)"
	if [ "$HARNESS_STAGE" -le "$KEXECS" ]; then
		vm_kexec_load_next
		kexec_loaded_stage
	fi
	pass "$KEXECS kexecs in a row: a new boot id each, one tsc_early_khz= on the command line"
}
_s=1
while [ $_s -le $((KEXECS + 1)) ]; do eval "stage$_s() { in_row; }"; _s=$((_s + 1)); done
