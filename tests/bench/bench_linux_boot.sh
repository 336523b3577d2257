#!/bin/bash
# Bench: boot time of Debian's stock cloud kernel with the test initramfs
# (tests/guest/linux/) to its userspace marker KVMLU-LINUX-GUEST-UP, in
# kvmlu-vmm and in `qemu-system-x86_64 -accel kvm` (pc machine, SeaBIOS,
# ACPI), both inside the same QEMU harness host on its nested /dev/kvm,
# one after the other in the same run; the ratio is the figure to compare
# (nested KVM under TCG is uniformly slow). Runs the harness case
# linux_guest_boot with an initramfs that has QEMU added (a second cpio
# archive appended to the harness one: the kernel unpacks both), which
# makes that case time QEMU too. KVMLU_BENCH_RUNS runs (default 1).
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
runs=${KVMLU_BENCH_RUNS:-1}
work=$top/build/harness/bench-linux
mkdir -p "$work"

tests/guest/linux/fetch-kernel.sh >/dev/null || { echo "bench_linux_boot: no guest kernel (fetch-kernel.sh)"; exit 1; }
tests/guest/linux/build-initramfs.sh >/dev/null || { echo "bench_linux_boot: build-initramfs.sh failed"; exit 1; }
kernel/build.sh >"$work/kernel.log" 2>&1 ||
	{ tail -n 20 "$work/kernel.log"; echo "bench_linux_boot: kernel/build.sh failed"; exit 1; }
kdir=$(readlink -f build/kernel)
tests/harness/mkinitramfs.sh "$work/base.cpio" "$kdir/bzImage" ||
	{ echo "bench_linux_boot: mkinitramfs.sh failed"; exit 1; }

# QEMU, its libraries and the firmware a pc machine with -kernel needs.
qemu=$(command -v qemu-system-x86_64) || { echo "bench_linux_boot: qemu-system-x86_64 missing"; exit 1; }
extra=$(mktemp -d "$work/qemu.XXXXXX")
trap 'rm -rf "$extra"' EXIT
mkdir -p "$extra/usr/bin" "$extra/usr/share/qemu" "$extra/usr/share/seabios"
cp -L "$qemu" "$extra/usr/bin/"
ldd "$qemu" | awk '/=> \//{print $3} /^\t\//{print $1}' | while read -r lib; do
	mkdir -p "$extra$(dirname "$lib")"
	cp -L "$lib" "$extra$lib"
done
# QEMU looks in /usr/share/qemu, then /usr/share/seabios (Debian's SeaBIOS).
for f in linuxboot_dma.bin kvmvapic.bin; do
	cp -L "/usr/share/qemu/$f" "$extra/usr/share/qemu/" || exit 1
done
cp -L /usr/share/seabios/bios-256k.bin "$extra/usr/share/seabios/" || exit 1
(cd "$extra" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$work/qemu.cpio"
cat "$work/base.cpio" "$work/qemu.cpio" >"$work/initramfs.cpio"

secs_of() { # secs_of LOG KEY: the value of KVMLU-BENCH KEY=value
	grep -a -o "KVMLU-BENCH $2=[0-9.]*" "$1" | tail -n 1 | sed 's/.*=//'
}

printf '%-4s %14s %14s %8s\n' run kvmlu_vmm_s qemu_kvm_s ratio
for i in $(seq 1 "$runs"); do
	out=$(tests/harness/run-case.sh linux_guest_boot "$kdir/bzImage" "$work/initramfs.cpio" "$work/run$i")
	log=$work/run$i/harness-linux_guest_boot.log
	case $out in
	*"PASS: "*) ;;
	*) echo "$out"; echo "bench_linux_boot: run $i did not pass, log $log"; exit 1 ;;
	esac
	k=$(secs_of "$log" linux_boot_to_marker_s)
	q=$(secs_of "$log" qemu_boot_to_marker_s)
	[ -n "$k" ] && [ -n "$q" ] || { echo "bench_linux_boot: run $i: no timings in $log"; exit 1; }
	printf '%-4s %14s %14s %8s\n' "$i" "$k" "$q" "$(awk -v a="$k" -v b="$q" 'BEGIN {printf "%.2f", a / b}')"
done
echo "seconds from VMM start to the guest's userspace marker, nested KVM in the TCG harness host; ratio = kvmlu-vmm / QEMU"
