#!/bin/bash
# Builds the Linux guest's initramfs: Debian's busybox-static, the /init
# next to this script, netcount (netcount.c here, built static: the TCP
# counter of the network tests, also left next to the initramfs as
# netcount for the QEMU host's side), qdwrite (qdwrite.c: many disk writes
# in flight) and the guest kernel's virtio-mmio, virtio-pci, virtio-blk and
# virtio-net modules, with the ACPI button and evdev (the power button, for
# busybox acpid in /init), as a gzip'd newc cpio (Debian's cloud kernel has RD_GZIP) at $1
# (default build/guest-linux/initramfs.cpio.gz). Rebuilt only when /init,
# busybox, the modules or this script changed. Needs root for the
# /dev/console node the kernel opens before /init runs.
#
# The modules come from the kernel package fetch-kernel.sh extracted
# (KVMLU_GUEST_KERNEL_CACHE, default /var/cache/kvmlu/guest-kernel): the
# version whose vmlinuz is the one at build/guest-linux/vmlinuz, else the
# newest there. Debian's cloud kernel has virtio as modules and the package
# ships no modules.dep, so the list below is in dependency order (each
# module's own `depends=`): virtio_ring, virtio, then virtio_mmio (the
# transport, found through the ACPI DSDT), virtio_pci_legacy_dev,
# virtio_pci_modern_dev and virtio_pci (the transport of
# --virtio-transport pci, on the DSDT's PCI root bridge) and virtio_blk; failover and
# net_failover (virtio_net depends on them), then virtio_net. /init insmods
# them from /lib/modules. Without the cache the initramfs has no modules
# and /init says so (no disk).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${1:-$top/build/guest-linux/initramfs.cpio.gz}
bb=/bin/busybox
modules="drivers/virtio/virtio_ring.ko drivers/virtio/virtio.ko drivers/virtio/virtio_mmio.ko
	drivers/virtio/virtio_pci_legacy_dev.ko drivers/virtio/virtio_pci_modern_dev.ko drivers/virtio/virtio_pci.ko
	drivers/block/virtio_blk.ko
	net/core/failover.ko drivers/net/net_failover.ko drivers/net/virtio_net.ko
	drivers/acpi/button.ko drivers/input/evdev.ko"
netcount=$(dirname "$out")/netcount
qdwrite=$(dirname "$out")/qdwrite

moddir=$("$here/module-dir.sh" 2>/dev/null) || moddir=

if ! file -L "$bb" 2>/dev/null | grep -q 'statically linked'; then
	echo "build-initramfs: $bb is not busybox-static (apt-get install busybox-static)"
	exit 77
fi
fresh=1
[ -s "$out" ] && [ "$out" -nt "$here/init" ] && [ "$out" -nt "$bb" ] && [ "$out" -nt "$0" ] || fresh=0
[ -x "$netcount" ] && [ "$netcount" -nt "$here/netcount.c" ] && [ "$out" -nt "$netcount" ] || fresh=0
[ -x "$qdwrite" ] && [ "$qdwrite" -nt "$here/qdwrite.c" ] && [ "$out" -nt "$qdwrite" ] || fresh=0
if [ -n "$moddir" ]; then
	for m in $modules; do
		[ "$out" -nt "$moddir/$m" ] || fresh=0
	done
fi
if [ $fresh = 1 ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$(dirname "$out")"
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -static -o "$netcount.tmp" "$here/netcount.c" || {
	echo "build-initramfs: netcount.c did not build (static glibc: libc6-dev)"
	exit 1
}
mv "$netcount.tmp" "$netcount"
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -static -pthread -o "$qdwrite.tmp" "$here/qdwrite.c" || {
	echo "build-initramfs: qdwrite.c did not build (static glibc: libc6-dev)"
	exit 1
}
mv "$qdwrite.tmp" "$qdwrite"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,run,tmp}
cp "$bb" "$stage/bin/busybox"
cp "$netcount" "$stage/bin/netcount"
cp "$qdwrite" "$stage/bin/qdwrite"
ln -s busybox "$stage/bin/sh"
install -m 0755 "$here/init" "$stage/init"
if [ -n "$moddir" ]; then
	mkdir -p "$stage/lib/modules"
	for m in $modules; do
		[ -f "$moddir/$m" ] || { echo "build-initramfs: $moddir/$m missing"; exit 1; }
		cp "$moddir/$m" "$stage/lib/modules/"
		echo "${m##*/}" >>"$stage/lib/modules/load.order"
	done
fi
mknod -m 600 "$stage/dev/console" c 5 1
mknod -m 666 "$stage/dev/null" c 1 3
mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -print0 | sort -z | cpio --null -o -H newc --owner=0:0 --quiet) |
	gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
