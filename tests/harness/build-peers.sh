#!/bin/bash
# Builds the upstream selftests that ship in the kernel source the project
# builds (tools/testing/selftests/liveupdate and .../kho) as static
# binaries for the harness initramfs, unchanged: the liveupdate ones with
# their own Makefile, the kho init.c with the command vmtest.sh uses.
# Prints the output directory; results are cached per kernel build key.
#
# Usage: build-peers.sh KERNEL_RESULT_DIR   (what build/kernel points at)
# Output: DIR/liveupdate/{liveupdate,luo_kexec_simple,luo_multi_session,...}
#         DIR/kho/init
set -euo pipefail
kres=$(cd "$1" && pwd -P)
cache=${KVMLU_CACHE:-/var/cache/kvmlu}
die() { echo "build-peers: $*" >&2; exit 1; }

src=$(sed -n 's/^source_dir=//p' "$kres/info")
key=$(sed -n 's/^key=//p' "$kres/info")
[ -d "$src/tools/testing/selftests" ] || die "no selftests under '$src' (from $kres/info)"
hdr=$kres/headers/include
[ -f "$hdr/linux/liveupdate.h" ] || die "$hdr/linux/liveupdate.h missing (make kernel)"

skey=$( { echo "$key"; cat "$0"; } | sha256sum | cut -c1-16)
out=$cache/peers/$skey
if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi
rm -rf "$out.tmp"
mkdir -p "$out.tmp/liveupdate" "$out.tmp/kho" "$out.tmp/obj"
blog=$out.tmp/build.log
# The selftest Makefile leaves objects next to the sources: build in a
# hard-linked copy so the cached source stays pristine.
cp -al "$src" "$out.tmp/src"
src=$out.tmp/src
sel=$src/tools/testing/selftests

# lib.mk takes KHDR_INCLUDES and OUTPUT from the command line; -static so
# the binaries need nothing from the initramfs' libraries.
make -C "$sel/liveupdate" OUTPUT="$out.tmp/obj" KHDR_INCLUDES="-isystem $hdr" \
	LDFLAGS=-static >"$blog" 2>&1 ||
	{ tail -n 20 "$blog" >&2; die "make in $sel/liveupdate failed (log $blog)"; }
for t in liveupdate luo_kexec_simple luo_multi_session luo_stress_sessions luo_stress_files; do
	[ -x "$out.tmp/obj/$t" ] || die "$t was not built (log $blog)"
	cp "$out.tmp/obj/$t" "$out.tmp/liveupdate/$t"
done
cp "$sel/liveupdate/do_kexec.sh" "$out.tmp/liveupdate/"

gcc -s -static -Os -nostdinc -nostdlib -fno-asynchronous-unwind-tables -fno-ident \
	-I "$hdr" -I "$src/tools/include/nolibc" \
	-o "$out.tmp/kho/init" "$sel/kho/init.c" >>"$blog" 2>&1 ||
	{ tail -n 20 "$blog" >&2; die "building $sel/kho/init.c failed (log $blog)"; }

rm -rf "$out.tmp/obj" "$out.tmp/src" "$out"
touch "$out.tmp/.done"
mv "$out.tmp" "$out"
echo "$out"
