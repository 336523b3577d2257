#!/bin/bash
# Fetches Debian's stock cloud kernel for the Linux guest tests, without
# installing it (installing would touch /boot and the bootloader of this
# machine): resolves linux-image-cloud-amd64 to its versioned
# linux-image-*-cloud-amd64 package, `apt-get download`s that into a cache
# outside the tree, extracts it with dpkg-deb -x, and copies the vmlinuz to
# $OUT (default build/guest-linux/vmlinuz; a copy, not a link, so it can go
# into the harness initramfs as is). Idempotent: a cached kernel is
# reused. Prints the path on success; exit 77 with a reason if apt cannot
# fetch it (offline machine), so callers can SKIP.
set -eu
top=$(cd "$(dirname "$0")/../../.." && pwd)
cache=${KVMLU_GUEST_KERNEL_CACHE:-/var/cache/kvmlu/guest-kernel}
out=${1:-$top/build/guest-linux/vmlinuz}
meta=linux-image-cloud-amd64

mkdir -p "$cache" "$(dirname "$out")"
pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-cloud-amd64\)$/\1/p' | head -n 1)
if [ -z "$pkg" ]; then
	# No apt lists yet: a cached kernel from an earlier run still serves.
	found=$(ls "$cache"/x/boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -z "$found" ]; then
		echo "fetch-kernel: apt knows no $meta (run apt-get update) and nothing is cached in $cache"
		exit 77
	fi
else
	ver=${pkg#linux-image-}
	found=$cache/x/boot/vmlinuz-$ver
	if [ ! -s "$found" ]; then
		# _apt cannot write to a root-owned cache; download as root, unsandboxed.
		(cd "$cache" && apt-get download -o APT::Sandbox::User=root "$pkg" >/dev/null 2>&1) || {
			echo "fetch-kernel: apt-get download $pkg failed (offline?)"
			exit 77
		}
		deb=$(ls "$cache"/"$pkg"_*.deb | sort -V | tail -n 1)
		rm -rf "$cache/x.new"
		mkdir -p "$cache/x.new"
		dpkg-deb -x "$deb" "$cache/x.new"
		rm -rf "$cache/x"
		mv "$cache/x.new" "$cache/x"
	fi
fi
[ -s "$found" ] || { echo "fetch-kernel: $found missing after extraction"; exit 1; }
cmp -s "$found" "$out" 2>/dev/null || { rm -f "$out"; cp "$found" "$out"; }
echo "$out"
