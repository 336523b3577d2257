#!/bin/bash
# `make demo`: a VM survives a host kernel kexec, shown step by step.
#
# Builds what is needed (userspace is built by make; the host kernel comes
# from the cache, or is built once, ~7 min), boots the project's kernel in
# a QEMU "host" (TCG, nested KVM inside), starts a witness VM there, shows
# its ticks, prepares it for the update (paused, RAM and state in a LUO
# session), kexecs the host into a new kernel, restores the same VM from
# the session and shows it continuing: same boot id, ticks going on, the
# memory checksum before and after, and the blackout (pause to resume)
# next to the bare kexec time, both from host-side timestamps of the
# serial console. Nothing here touches this machine's kernel.
#
# The whole serial log is kept in build/test-logs/demo.log.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
work=$top/build/demo
logs=$top/build/test-logs
mkdir -p "$work" "$logs"
log=$logs/demo.log

say() { printf '%s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

for f in build/bin/kvmlu-vmm build/bin/kvmlu-ctl build/guest/witness.bin; do
	[ -e "$f" ] || die "$f missing (run make first)"
done

say "== 1. build"
if [ -f build/kernel/bzImage ] && kernel/build.sh >"$logs/demo-kernel.log" 2>&1; then
	say "   host kernel: $(sed -n 's/^package_version=//p' build/kernel/info 2>/dev/null) (cached in $(readlink -f build/kernel))"
else
	say "   host kernel: building (first time only, about 7 minutes; log $logs/demo-kernel.log)"
	kernel/build.sh >"$logs/demo-kernel.log" 2>&1 || {
		tail -n 20 "$logs/demo-kernel.log"
		die "the kernel did not build"
	}
fi
tests/harness/mkinitramfs.sh "$work/initramfs.cpio" build/kernel/bzImage \
	2>"$logs/demo-initramfs.log" || { cat "$logs/demo-initramfs.log"; die "initramfs failed"; }

# The demo's own script for the QEMU host, in a second cpio archive
# appended to the harness's (the kernel unpacks concatenated archives).
root=$work/extra
rm -rf "$root"
mkdir -p "$root/cases" "$root/harness"
cp tests/harness/cases/vm_common.inc "$root/harness/vm_common.sh"
cat >"$root/cases/demo.sh" <<'EOF'
. /harness/vm_common.sh
demo() { echo "DEMO: $*"; }
demo_ticks() { # the last N tick lines of the VM, as the guest printed them
	grep 'cpu=0 tick=' /tmp/demo.serial | tail -n "$1" | sed 's/^/DEMO:   guest| /'
}
stage1() {
	vm_need_binaries
	demo "host kernel $(uname -r) is up: /dev/kvm and /dev/liveupdate are there"
	vm_start demo 256M 1
	demo "starting a witness VM: 1 vCPU, 256 MiB of RAM in a memfd (it fills its RAM with a pattern first)"
	vm_wait_running demo
	for i in 1 2; do vm_wait_tick demo "$(vm_last demo tick)" 60; done
	demo "the guest runs and prints a tick line per second:"
	demo_ticks 3
	echo "DEMO-MARK pause"
	r=$(vm_ctl demo prepare-update)
	echo "$r" | grep -q '"ok":true' || fail "prepare-update refused: $r"
	vm_prepare_carry demo "$r"
	demo "prepare-update: VM paused after tick $(cat "$HARNESS_CARRY/demo.tick"); RAM and state ($(echo "$r" | json_num state_bytes) bytes) are in LUO session $(echo "$r" | json_str session)"
	demo "memory checksum at pause (xxh3-128): $(echo "$r" | json_str checksum)"
	demo "now: kexec into a new kernel (the kvmlu-vmm process holding the session dies with the old kernel)"
	vm_kexec_next_stage
}
stage2() {
	vm_need_binaries
	echo "DEMO-MARK userspace"
	demo "new kernel up; restoring: kvmlu-vmm restore --session kvmlu/vm/demo"
	vm_restore demo
	vm_wait_restored demo || { cat /tmp/demo.vmm; fail "restore failed: $(tail -n 1 /tmp/demo.vmm)"; }
	echo "DEMO-MARK resumed"
	t=$(cat "$HARNESS_CARRY/demo.tick")
	vm_wait_tick demo "$t" 60 || fail "no tick after $t"
	vm_wait_tick demo "$(vm_last demo tick)" 60 || true
	demo "the same VM continues (its last tick before the kexec: $t):"
	demo_ticks 3
	st=$(vm_ctl demo update-status)
	before=$(echo "$st" | json_str checksum_recorded)
	after=$(echo "$st" | json_str checksum_now)
	demo "boot id before $(cat "$HARNESS_CARRY/demo.boot"), after $(vm_last demo boot)"
	demo "memory checksum before the kexec: $before"
	demo "memory checksum after the kexec:  $after"
	v=$($VM_CTL -t 320 /run/demo.sock '{"cmd":"guest-verify","args":{"timeout_ms":300000}}')
	demo "the guest's own check of its whole memory: $(echo "$v" | grep -q '"verified":true' && echo ok || echo FAILED)"
	[ "$before" = "$after" ] && [ "$(vm_last demo boot)" = "$(cat "$HARNESS_CARRY/demo.boot")" ] ||
		fail "the VM did not survive intact"
	pass "the VM survived the kexec"
}
EOF
# vm_prepare_carry: like vm_prepare, from a reply already received.
cat >>"$root/harness/vm_common.sh" <<'EOF'
vm_prepare_carry() { # vm_prepare_carry N REPLY
	echo "$2" | json_str checksum >"$HARNESS_CARRY/$1.checksum"
	vm_last "$1" boot >"$HARNESS_CARRY/$1.boot"
	vm_last "$1" tick >"$HARNESS_CARRY/$1.tick"
	vm_last "$1" uptime_ms >"$HARNESS_CARRY/$1.uptime"
}
EOF
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >>"$work/initramfs.cpio"

say "== 2. boot the QEMU host (TCG; the witness VM runs on its nested KVM, which is slow: a few minutes)"
start=${EPOCHREALTIME/./}
declare -A mark=()
show() { # stamp each serial line; print the demo's lines as they come
	local line now t
	while IFS= read -r line; do
		line=${line%$'\r'}
		now=${EPOCHREALTIME/./}
		t=$(( (now - start) / 1000 ))
		printf '[%4d.%03d] %s\n' $((t / 1000)) $((t % 1000)) "$line" >>"$log"
		case $line in
		*"DEMO-MARK "*) echo "${line##*DEMO-MARK } $t" >>"$work/marks" ;;
		*"kexec -e: stage"*) echo "kexec $t" >>"$work/marks"; say "   [$((t / 1000)).$((t % 1000 / 100))s] kexec -e" ;;
		*"DEMO: "*) say "   [$((t / 1000)).$((t % 1000 / 100))s] ${line#*DEMO: }" ;;
		*"KVMLU-HARNESS: RESULT "*) say "   ${line#*KVMLU-HARNESS: }" ;;
		*"Kernel panic"*) say "   $line" ;;
		esac
	done
}
: >"$log"
: >"$work/marks"
cmdline="console=ttyS0 kho=on liveupdate=on panic=-1 kvmlu.case=demo kvmlu.stage=1"
set +e
timeout -k 5 900 qemu-system-x86_64 -accel tcg -cpu max -m 2G -smp 2 \
	-nographic -nodefaults -serial stdio -no-reboot \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-kernel build/kernel/bzImage -initrd "$work/initramfs.cpio" -append "$cmdline" \
	</dev/null 2>&1 | show
rc=${PIPESTATUS[0]}
set -e

mk() { sed -n "s/^$1 //p" "$work/marks" | head -n 1; }
say "== 3. result"
if [ "$rc" != 1 ]; then
	say "   the demo failed (QEMU exit $rc); serial log: $log"
	tail -n 25 "$log" | sed 's/^/   | /'
	exit 1
fi
p=$(mk pause) k=$(mk kexec) u=$(mk userspace) r=$(mk resumed)
if [ -n "$p" ] && [ -n "$k" ] && [ -n "$u" ] && [ -n "$r" ]; then
	say "   blackout of the VM (pause -> running again): $(( (r - p) / 1000 )).$(( (r - p) % 1000 / 10 )) s"
	say "     of which kexec -e -> new kernel's userspace: $(( (u - k) / 1000 )).$(( (u - k) % 1000 / 10 )) s,"
	say "     prepare (pause, checksum, preserve) + kexec load: $(( (k - p) / 1000 )).$(( (k - p) % 1000 / 10 )) s,"
	say "     restore (retrieve, verify checksum, restore state): $(( (r - u) / 1000 )).$(( (r - u) % 1000 / 10 )) s"
	say "   (host-side times of serial lines; QEMU TCG with nested KVM is far slower than hardware)"
fi
say "   full serial log: $log"
