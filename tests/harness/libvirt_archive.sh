#!/bin/bash
# libvirt_archive.sh OUT.cpio: qemu_archive.sh's archive (QEMU 7.2, its
# firmware, the Linux guest's PCI initramfs) followed by a second one
# with this machine's libvirt (Debian 12: libvirt 9.0) for the cases that
# run libvirtd inside the QEMU host (HARNESS_ARCHIVE=
# tests/harness/libvirt_archive.sh; the kernel unpacks concatenated
# archives, a later file replacing an earlier one):
#   /usr/sbin/libvirtd, /usr/bin/virsh and their libraries (ldd);
#   every driver module under /usr/lib/x86_64-linux-gnu/libvirt/ and
#   their libraries, /usr/lib/libvirt/libvirt_iohelper;
#   QEMU's TCG module (accel-tcg-x86_64.so);
#   /usr/share/libvirt/cpu_map and schemas (QEMU's capability probe
#   reads the CPU map);
#   setpriv (libvirtd as nobody), /etc/passwd and /etc/group with root
#   and nobody (libvirt looks the user up).
# kvmlu-agent, kvmlu and kvmlu-qemu are already in /kvmlu/bin (build/bin,
# mkinitramfs.sh), libvirt.so.0 with them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
die() { echo "libvirt_archive: $*" >&2; exit 1; }
"$here/qemu_archive.sh" "$out.qemu" || die "qemu_archive.sh failed"
libvirtd=/usr/sbin/libvirtd
[ -x $libvirtd ] || die "$libvirtd missing (package libvirt-daemon-system)"
virsh=$(command -v virsh) || die "virsh missing (package libvirt-clients)"
setpriv=$(command -v setpriv) || die "setpriv missing (package util-linux)"
mods=/usr/lib/x86_64-linux-gnu/libvirt
[ -f $mods/connection-driver/libvirt_driver_qemu.so ] ||
	die "$mods/connection-driver/libvirt_driver_qemu.so missing (package libvirt-daemon-driver-qemu)"

stage=$(mktemp -d)
trap 'rm -rf "$stage" "$out.qemu"' EXIT
root=$stage/root
mkdir -p "$root/etc"
. "$here/initramfs_lib.sh"
add_prog $libvirtd /usr/sbin/libvirtd
add_prog "$virsh" /usr/bin/virsh
add_prog "$setpriv" /usr/bin/setpriv
find $mods -name '*.so' | while read -r m; do add_prog "$m" "$m"; done
# Debian builds QEMU's TCG as a module; libvirt's capability probe runs
# QEMU with TCG too and fails without it ("could not load module for
# type 'tcg-accel-ops'").
for f in /usr/lib/libvirt/libvirt_iohelper /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so; do
	[ -e "$f" ] || die "$f missing"
	add_prog "$f" "$f"
done
mkdir -p "$root/usr/share/libvirt"
cp -a /usr/share/libvirt/cpu_map /usr/share/libvirt/schemas "$root/usr/share/libvirt/"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$stage/lv.cpio"
cat "$out.qemu" "$stage/lv.cpio" >"$out.tmp"
mv "$out.tmp" "$out"
