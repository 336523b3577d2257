#!/bin/bash
# bench-guest-initramfs.sh OUT: the virtio bench guest's initramfs, the
# same for the harness half (bench_virtio_io.sh) and the native half
# (virtio_io_native.sh): the test initramfs (build-initramfs.sh), then an
# archive with the bench's rdinit (guest-bench-init), kvmlu-loadgen and
# the guest kernel's modules the test one lacks (QEMU's virtio-pci;
# virtio-net), in dependency order. Exit 77 (a line on stdout) when the
# guest kernel's modules are not there, 1 on an error.
set -eu
cd "$(dirname "$0")/../.."
out=$1
me=bench-guest-initramfs
tests/guest/linux/build-initramfs.sh >/dev/null || { echo "$me: build-initramfs.sh failed"; exit 1; }
[ -x build/bin/kvmlu-loadgen ] || { echo "$me: build/bin/kvmlu-loadgen missing (make)"; exit 1; }
moddir=$(tests/guest/linux/module-dir.sh 2>&1) || { echo "$moddir"; exit 77; }
g=$(mktemp -d "${TMPDIR:-/tmp}/bench-guest.XXXXXX")
trap 'rm -rf "$g"' EXIT
mkdir -p "$g/bench/modules"
install -m 0755 tests/bench/guest-bench-init "$g/bench/init"
install -m 0755 build/bin/kvmlu-loadgen "$g/bench/kvmlu-loadgen"
for m in drivers/virtio/virtio_pci_legacy_dev.ko drivers/virtio/virtio_pci_modern_dev.ko \
	drivers/virtio/virtio_pci.ko net/core/failover.ko drivers/net/net_failover.ko drivers/net/virtio_net.ko; do
	cp "$moddir/$m" "$g/bench/modules/" || { echo "$me: $moddir/$m missing"; exit 1; }
	echo "${m##*/}" >>"$g/bench/modules/load.order"
done
{ cat build/guest-linux/initramfs.cpio.gz
  (cd "$g" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -9n; } >"$out"
