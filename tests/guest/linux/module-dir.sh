#!/bin/bash
# Prints the kernel/ module directory of the guest kernel that
# build/guest-linux/vmlinuz is (fetch-kernel.sh's package, extracted in
# KVMLU_GUEST_KERNEL_CACHE), for the modules the test initramfs lacks.
# Exit 1 with a line on stderr if there is none.
set -eu
cd "$(dirname "$0")/../../.."
cache=${KVMLU_GUEST_KERNEL_CACHE:-/var/cache/kvmlu/guest-kernel}
moddir=
for k in $(ls "$cache"/x/boot/vmlinuz-* 2>/dev/null | sort -V); do
	ver=${k##*/vmlinuz-}
	[ -d "$cache/x/lib/modules/$ver/kernel" ] || continue
	moddir=$cache/x/lib/modules/$ver/kernel
	cmp -s "$k" build/guest-linux/vmlinuz && break
done
[ -n "$moddir" ] || { echo "no guest kernel modules in $cache (tests/guest/linux/fetch-kernel.sh)" >&2; exit 1; }
echo "$moddir"
