#!/bin/bash
# Native smoke test of `kvmlu-vmm run --kernel`: Debian's stock cloud
# kernel, loaded by the VMM's bzImage loader, runs its 64-bit entry and
# its decompressor prints to COM1 the line it prints only when it read
# `nokaslr` from the command line the VMM put in the zero page. That is as
# far as a bounded test gets here: on this machine's /dev/kvm CPL 0 code
# is ~2000x slower, and the decompression alone takes many minutes (the
# boot to userspace runs in the harness, tests/harness/cases/
# linux_guest_boot.sh). Also: non-kernels and truncated kernels are
# refused with a message naming the problem, before any vCPU runs.
#
# Fetches the kernel (tests/guest/linux/fetch-kernel.sh) and builds the
# test initramfs, which the harness case then uses. SKIP without network
# and no cached kernel.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
name=$(basename "$0" .sh)
vmm=${KVMLU_VMM:-$top/build/san/bin/kvmlu-vmm}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}
dir= pid=

log() { echo "[$name] $*"; }
fail() {
	log "failed: $*"
	[ -n "$dir" ] && [ -f "$dir/serial" ] && { log "serial:"; tail -n 5 "$dir/serial"; }
	[ -n "$dir" ] && [ -f "$dir/err" ] && { log "vmm stderr:"; tail -n 20 "$dir/err"; }
	echo "FAIL: $name: $*"
	exit 1
}
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
	fi
	[ -n "$dir" ] && rm -rf "$dir"
}

[ -x "$vmm" ] || fail "$vmm not built (make tests-build)"
[ -c /dev/kvm ] || { echo "no /dev/kvm on this machine"; exit 77; }
# Given (the QEMU host has no apt): the kernel and initramfs as fetched.
if [ -n "${KVMLU_LINUX_KERNEL:-}" ] && [ -n "${KVMLU_LINUX_INITRD:-}" ]; then
	kernel=$KVMLU_LINUX_KERNEL initrd=$KVMLU_LINUX_INITRD
	# What the tree had when it was packed: nothing if the Linux guest was
	# never fetched (make check and make soak fetch it first).
	for f in "$kernel" "$initrd"; do
		[ -s "$f" ] || { echo "the Linux guest is not here: no $f (tests/guest/linux/fetch-kernel.sh, build-initramfs.sh)"; exit 77; }
	done
else
	kernel=$("$top/tests/guest/linux/fetch-kernel.sh")
	rc=$?
	[ $rc = 77 ] && { echo "$kernel"; exit 77; }
	[ $rc = 0 ] || fail "fetch-kernel.sh exit $rc: $kernel"
	initrd=$("$top/tests/guest/linux/build-initramfs.sh") || fail "build-initramfs.sh: $initrd"
fi
log "kernel $kernel ($(stat -c %s "$kernel") bytes), initramfs $initrd"
dir=$(mktemp -d "${TMPDIR:-/tmp}/kvmlu-$name.XXXXXX")
trap cleanup EXIT

# refuse NAME FILE REGEX: kvmlu-vmm must fail at boot with REGEX in stderr.
refuse() {
	local rc
	"$vmm" run --name "$name" --memory 256M --cpus 1 --kernel "$2" \
		--serial "$dir/serial.$1" 2>"$dir/err.$1"
	rc=$?
	[ $rc -ne 0 ] || fail "$1: kvmlu-vmm accepted $2"
	grep -q -- "$3" "$dir/err.$1" || fail "$1: stderr lacks '$3': $(cat "$dir/err.$1")"
	[ -s "$dir/serial.$1" ] && fail "$1: the guest ran (serial output)"
	log "$1 refused (exit $rc): $(grep -o -- "--kernel.*" "$dir/err.$1")"
}
refuse not-a-kernel /bin/busybox "not a Linux kernel image"
head -c $(($(stat -c %s "$kernel") / 2)) "$kernel" >"$dir/half"
refuse truncated "$dir/half" "truncated"
"$vmm" run --name "$name" --memory 32M --cpus 1 --kernel "$kernel" \
	--serial "$dir/serial.small" 2>"$dir/err.small" && fail "a 32M guest was accepted"
grep -q "init_size" "$dir/err.small" || fail "32M guest: $(cat "$dir/err.small")"
log "32M guest refused: $(grep -o 'Linux boot.*' "$dir/err.small")"

marker="KASLR disabled: 'nokaslr' on cmdline"
start=$(date +%s%N)
"$vmm" run --name "$name" --memory 256M --cpus 1 --kernel "$kernel" --initrd "$initrd" \
	--append "console=ttyS0 earlyprintk=serial,ttyS0,115200 nokaslr reboot=k panic=-1" \
	--serial "$dir/serial" 2>"$dir/err" &
pid=$!
for i in $(seq 1 1200); do
	grep -qa "$marker" "$dir/serial" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || fail "kvmlu-vmm exited before the kernel printed"
	sleep 0.1
done
grep -qa "$marker" "$dir/serial" || fail "no '$marker' on the console within 120 s"
ms=$((($(date +%s%N) - start) / 1000000))
log "kernel decompressor printed '$marker' after $ms ms"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "kvmlu-vmm exit $rc after SIGTERM (want 0)"
grep -q "stopped (signal)" "$dir/err" || fail "no clean stop message: $(tail -n 3 "$dir/err")"
echo "PASS: $name"
