#!/bin/bash
# Builds the harness host's initramfs (an uncompressed newc cpio):
# busybox-static with its applet links, kexec-tools' kexec, the project's
# programs (see KVMLU_INITRAMFS_BIN below) and build/guest with the shared
# libraries ldd lists for them, the kernel itself as /boot/bzImage (stage
# 1 kexecs it), the upstream selftest binaries (PEERS dir, optional),
# /init, the guest helpers and every case script. Rebuilt on each harness
# run (~1 s).
#
# Usage: mkinitramfs.sh OUT.cpio BZIMAGE [PEERS_DIR]
# /kvmlu/bin holds every program of build/bin, taken from the folder
# KVMLU_INITRAMFS_BIN (default build/bin, the release: the demo and the
# benchmarks) where that has it. The harness (check.sh) sets build/test/bin:
# the same optimized objects linked with the test hooks its cases use
# (common/test_hooks.h; `make tests-build`). A program with no test build
# (kvmlu-loadgen) then comes from build/bin.
# Extra files for a case: tests/harness/cases/NAME.files, lines of
# "host-path guest-path" (host path relative to the repo top, or absolute
# for a program of this machine's, which brings its shared libraries; a
# folder is copied whole; a missing host file is left out, so the case can
# SKIP with the reason).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$1 kernel=$2 peers=${3:-}
bins=${KVMLU_INITRAMFS_BIN:-build/bin}
case $bins in /*) ;; *) bins=$top/$bins ;; esac
mkdir -p "$(dirname "$out")"
# A private staging tree and an atomic rename: two harness runs at once
# (several engineers share the work tree) never see a half-written archive.
root=$(mktemp -d "$(dirname "$out")/rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"

die() { echo "mkinitramfs: $*" >&2; exit 1; }
[ -f "$kernel" ] || die "kernel $kernel not found"
[ "$(id -u)" = 0 ] || die "needs root (mknod /dev/console, files owned by root)"
[ -x "$bins/kvmlu-vmm" ] || die "$bins/kvmlu-vmm not built (make; build/test/bin: make tests-build)"

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,proc,sys,dev,tmp,run,boot,cases,harness,carry,kvmlu/bin,kvmlu/guest,peer,etc,root}
# The kernel opens /dev/console before /init can mount devtmpfs.
mknod -m 600 "$root/dev/console" c 5 1

# copy_libs, add_prog (into $root)
. "$here/initramfs_lib.sh"

busybox=$(command -v busybox) || die "busybox not found (package busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && die "$busybox is dynamically linked; install busybox-static"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done

kexec=$(command -v kexec || echo /usr/sbin/kexec)
[ -x "$kexec" ] || die "kexec not found (package kexec-tools)"
add_prog "$kexec" /sbin/kexec

for f in "$top"/build/bin/*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	[ -x "$bins/${f##*/}" ] && f=$bins/${f##*/}
	add_prog "$f" "/kvmlu/bin/${f##*/}"
done
for f in "$top"/build/guest/*; do
	[ -f "$f" ] && cp "$f" "$root/kvmlu/guest/"
done

cp "$kernel" "$root/boot/bzImage"
cp "$here/guest/init" "$root/init"
cp "$here/guest/lib.sh" "$root/harness/lib.sh"
cp "$here"/cases/*.sh "$root/cases/"
if [ -n "$peers" ] && [ -d "$peers" ]; then
	cp -a "$peers/." "$root/peer/"
fi

for list in "$here"/cases/*.files; do
	[ -f "$list" ] || continue
	while read -r src dst; do
		case $src in ''|'#'*) continue ;; /*) ;; *) src=$top/$src ;; esac
		[ -e "$src" ] || continue
		if [ -d "$src" ]; then
			mkdir -p "$root$dst"
			cp -a "$src/." "$root$dst/"
		else
			add_prog "$src" "$dst"
		fi
	done <"$list"
done

echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
# What this machine's KVM and kernel have (kvmlu-test-caps, tests/caps/):
# the native cases run here the native tests that needed something it
# lacks (cases/native_common.inc). Without the tool they fail and say so.
caps=$top/build/bin/kvmlu-test-caps
if [ -x "$caps" ]; then
	"$caps" >"$root/harness/machine_caps" || die "$caps failed"
fi

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$root.cpio"
mv "$root.cpio" "$out"
