# What run.sh asks a fleet host over SSH (`sh /harness/fleet_check.sh
# WHAT`), in the host's initramfs as /harness/fleet_check.sh. Prints what
# it saw; the last line is "FAIL: why" (exit 1) or "ok" (exit 0).
#   facts     boot id, stage, updates in the agent's history
#   running   both VMs run with no update held, ticks going on; no kernel loaded
#   survived  the newest update is done with both VMs verified and equal
#             checksums, and each VM is the same guest (boot id carried from
#             stage 1), ticking after the restore, its memory verified by
#             the guest itself
# lib.sh's helpers (serial_lines), but not its fail, pass and skip: they
# would power the host off.
. /harness/lib.sh
fail() { echo "FAIL: $*"; exit 1; }
skip() { fail "$*"; }
harness_log() { echo "$*"; }
HARNESS_CARRY=/carry
. /harness/agent_common.sh
ag_use_shipped
FLEET_VMS="vm-a vm-b"

history_count() {
	ls /var/lib/kvmlu/history 2>/dev/null | grep -c '\.json$'
}

case ${1:-} in
facts)
	echo "boot_id $(cat /proc/sys/kernel/random/boot_id)"
	echo "stage $(sed -n 's/.*kvmlu\.stage=\([0-9]*\).*/\1/p' /proc/cmdline)"
	echo "updates $(history_count)"
	;;
running)
	for vm in $FLEET_VMS; do
		ag_running $vm
		echo "$vm running, no update held, ticks going on"
	done
	[ "$(cat /sys/kernel/kexec_loaded)" = 0 ] || fail "a kernel is left loaded"
	;;
survived)
	kvmlu report --last 1 >/tmp/check-report.out 2>&1 || fail "kvmlu report: $(cat /tmp/check-report.out)"
	cat /tmp/check-report.out
	grep -q ': done$' /tmp/check-report.out || fail "the newest update is not done"
	for vm in $FLEET_VMS; do
		grep -qE "^  $vm +verified .* equal$" /tmp/check-report.out ||
			fail "$vm not verified with equal checksums in the report"
		vm_wait_tick $vm "$(cat /tmp/$vm.stale)" 120 || fail "$vm: no tick after the restore"
		[ "$(vm_last $vm boot)" = "$(cat $HARNESS_CARRY/$vm.boot)" ] ||
			fail "$vm: boot id $(vm_last $vm boot), $(cat $HARNESS_CARRY/$vm.boot) before: the guest restarted"
		ag_running $vm
		# Under TCG on a loaded machine the guest can miss the VMM's window.
		for _try in 1 2 3; do
			_v=$(vm_ctl $vm guest-verify)
			echo "$_v" | grep -q '"class":"Timeout"' || break
		done
		echo "$_v" | grep -q '"verified":true' || fail "$vm: guest self-verification: $_v"
		echo "$vm: same boot id $(vm_last $vm boot), ticks on after the restore, guest verify ok"
	done
	;;
*)
	fail "usage: fleet_check.sh facts|running|survived"
	;;
esac
echo ok
