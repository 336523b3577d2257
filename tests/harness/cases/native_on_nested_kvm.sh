# Harness case: the native tests (tests/native/) on a machine without
# /dev/kvm, run inside the QEMU host on its nested KVM, so that every test
# runs on every machine that can run the harness. On a machine with
# /dev/kvm they ran natively already, and this case says so (SKIP). Each
# test is a result of its own: harness/native_on_nested_kvm/<test>.
HARNESS_TIMEOUT=1800
HARNESS_MEM=8G

T=/kvmlu/tree/tests/native

stage1() {
	[ -f /harness/host_has_kvm ] && skip "this machine has /dev/kvm: the native tests ran on it"
	[ -x /usr/bin/bash ] && [ -x /usr/bin/jq ] || fail "bash or jq missing in the initramfs"
	[ -d $T ] || fail "$T missing in the initramfs"
	[ -e /dev/kvm ] || fail "/dev/kvm missing in the QEMU host"
	export KVMLU_LINUX_KERNEL=/kvmlu/linux/vmlinuz KVMLU_LINUX_INITRD=/kvmlu/linux/initramfs.cpio.gz
	export PATH=/usr/bin:$PATH
	# The upgrade tests' 20 rounds take ~20 s each on the nested KVM: 5 show
	# the same properties here; make soak does the hundreds.
	export UP_ROUNDS=5
	# A Debian host has these; the tests use them (a group to allow, an unknown user).
	grep -q '^users:' /etc/group || echo 'users:x:100:' >>/etc/group
	ran=0 bad=0
	for t in $T/*.sh; do
		n=$(basename "$t" .sh)
		case $n in *lib) continue ;; esac
		# Only the tests that need /dev/kvm: the others ran on the machine.
		grep -q 'kv_init\|/dev/kvm\|ag_init' "$t" || continue
		# KVMLU_NATIVE_FILTER (tests/harness/check.sh): only the tests asked for.
		[ -f /harness/native_filter ] && ! echo "$n" | grep -qE "$(cat /harness/native_filter)" && continue
		harness_log "native/$n: start"
		timeout -s KILL 600 /usr/bin/bash "$t" >"/tmp/$n.log" 2>&1
		rc=$?
		ran=$((ran + 1))
		case $rc in
		0) report PASS "harness/$HARNESS_CASE/$n" ;;
		77) report SKIP "harness/$HARNESS_CASE/$n" "$(tail -n 1 "/tmp/$n.log")" ;;
		*)
			bad=$((bad + 1))
			report FAIL "harness/$HARNESS_CASE/$n" "exit $rc: $(grep '^FAIL' "/tmp/$n.log" | tail -n 1)"
			tail -n 25 "/tmp/$n.log"
			;;
		esac
		harness_log "native/$n: exit $rc"
	done
	[ $ran -gt 0 ] || fail "no native test found in $T"
	[ $bad = 0 ] || fail "$bad of $ran native tests failed on the nested KVM"
	pass "$ran native tests on the nested KVM"
}
