#!/bin/bash
# qemu_archive.sh OUT.cpio: a second newc archive for the harness
# initramfs (the kernel unpacks concatenated archives) that puts this
# machine's QEMU inside the QEMU host, for the cases that run a guest in
# QEMU -accel kvm on the nested KVM (check.sh appends it for a case whose
# file says HARNESS_ARCHIVE=tests/harness/qemu_archive.sh):
#   /usr/bin/qemu-system-x86_64 and its libraries (Debian's 7.2 here);
#   the firmware of a pc machine booted with -kernel: SeaBIOS, the Linux
#   loader option ROM and the vAPIC ROM;
#   /kvmlu/linux/initramfs-pci.cpio.gz: the Linux guest's initramfs
#   (tests/guest/linux/) with the guest kernel's virtio-pci modules
#   appended and added to its load.order, so that its /init finds QEMU's
#   virtio-blk-pci disk as /dev/vda.
# Nothing of this goes into `make check`'s shared initramfs (~50 MB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$1
die() { echo "qemu_archive: $*" >&2; exit 1; }
qemu=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 missing (package qemu-system-x86)"
base=$top/build/guest-linux/initramfs.cpio.gz
[ -s "$base" ] || die "$base missing (tests/guest/linux/prepare.sh)"
moddir=$("$top/tests/guest/linux/module-dir.sh" 2>&1) || die "$moddir"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# The guest's part: the three virtio-pci modules and a load.order that
# lists them after the test initramfs's own (their dependencies).
g=$stage/guest
mkdir -p "$g/lib/modules"
zcat "$base" | (cd "$stage" && cpio -i --quiet --to-stdout lib/modules/load.order) >"$g/lib/modules/load.order" ||
	die "no lib/modules/load.order in $base"
for m in virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci; do
	cp "$moddir/drivers/virtio/$m.ko" "$g/lib/modules/" || die "$moddir/drivers/virtio/$m.ko missing"
	echo "$m.ko" >>"$g/lib/modules/load.order"
done
root=$stage/root
mkdir -p "$root/kvmlu/linux" "$root/usr/share/qemu" "$root/usr/share/seabios"
(cd "$g" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -9n >"$stage/pci.cpio.gz"
cat "$base" "$stage/pci.cpio.gz" >"$root/kvmlu/linux/initramfs-pci.cpio.gz"

. "$here/initramfs_lib.sh"
add_prog "$qemu" /usr/bin/qemu-system-x86_64
for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin /usr/share/qemu/kvmvapic.bin; do
	cp -L "$f" "$root$f" || die "$f missing"
done
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
