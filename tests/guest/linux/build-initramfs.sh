#!/bin/bash
# Builds the Linux guest's initramfs: Debian's busybox-static and the
# /init next to this script, as a gzip'd newc cpio (Debian's cloud kernel
# has RD_GZIP) at $1 (default build/guest-linux/initramfs.cpio.gz).
# Rebuilt only when /init, busybox or this script changed. Needs root for
# the /dev/console node the kernel opens before /init runs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${1:-$top/build/guest-linux/initramfs.cpio.gz}
bb=/bin/busybox

if ! file -L "$bb" 2>/dev/null | grep -q 'statically linked'; then
	echo "build-initramfs: $bb is not busybox-static (apt-get install busybox-static)"
	exit 77
fi
if [ -s "$out" ] && [ "$out" -nt "$here/init" ] && [ "$out" -nt "$bb" ] && [ "$out" -nt "$0" ]; then
	echo "$out"
	exit 0
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,run,tmp}
cp "$bb" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
install -m 0755 "$here/init" "$stage/init"
mknod -m 600 "$stage/dev/console" c 5 1
mknod -m 666 "$stage/dev/null" c 1 3
mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -print0 | sort -z | cpio --null -o -H newc --owner=0:0 --quiet) |
	gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
