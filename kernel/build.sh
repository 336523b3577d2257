#!/bin/bash
# Builds the kvmlu host kernel (bzImage + uAPI headers) into the cache and
# points build/kernel at the result. Behind `make kernel`.
#
# The result is keyed by a hash of: the source package version, the config
# fragment (configs/kernel.fragment), every kernel/patches/*.patch (applied
# in name order), and this script. A key already in the cache is reused in
# seconds; a new key builds from scratch (20-55 min on 2 cores, depending
# on what else runs).
#
# Steps of a build: tinyconfig, merge the fragment, olddefconfig, check
# that every option the fragment asks for survived (else fail naming them),
# bzImage, headers_install. The result directory is filled under a
# temporary name and renamed when complete, so an interrupted build never
# leaves a result that looks valid. Concurrent builds serialize on a lock;
# a key already built is published without waiting for it, so one build
# of a new key does not hold up every run that uses an old one.
#
# Result layout ($KVMLU_CACHE/kernel/<key>/):
#   bzImage  config  headers/include/...  build.log  options-check.txt  info
# Links: build/kernel -> that directory, build/kernel-headers -> its
# headers/ (what include/kvmlu/*_uapi.h name as -I build/kernel-headers/include).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
cache=${KVMLU_CACHE:-/var/cache/kvmlu}
fragment=$top/configs/kernel.fragment
jobs=${KVMLU_KERNEL_JOBS:-2}
link=$top/build/kernel
hlink=$top/build/kernel-headers

log() { echo "kernel: $*" >&2; }
die() { log "$*"; exit 1; }

read -r srcdir version < <("$here/fetch-source.sh") ||
	die "could not get the kernel source (see above)"
[ -n "${version:-}" ] || die "fetch-source.sh gave no version"

shopt -s nullglob
patches=("$here"/patches/*.patch)
shopt -u nullglob

key=$( {
	echo "version $version"
	echo "fragment"; cat "$fragment"
	for p in "${patches[@]}"; do echo "patch $(basename "$p")"; cat "$p"; done
	echo "script"; cat "$0"
} | sha256sum | cut -c1-16)
result=$cache/kernel/$key
mkdir -p "$cache/kernel" "$top/build"

publish() {
	ln -sfn "$result" "$link"
	ln -sfn "$result/headers" "$hlink"
	log "ready: $link -> $result ($version, ${#patches[@]} patches)"
}

if [ -f "$result/info" ]; then
	publish
	exit 0
fi
exec 9>"$cache/kernel/.lock"
flock 9
if [ -f "$result/info" ]; then
	publish
	exit 0
fi

log "building $version, key $key (${#patches[@]} patches), -j$jobs"
work=$cache/kernel/.work-$key
rm -rf "$work" "$result.tmp"
mkdir -p "$work" "$result.tmp"
buildlog=$result.tmp/build.log
start=$(date +%s)

# Patches go onto a hard-linked copy: patch(1) writes new files instead of
# changing the linked ones, so the pristine cached tree stays pristine.
tree=$srcdir
if [ ${#patches[@]} -gt 0 ]; then
	tree=$work/src
	cp -al "$srcdir" "$tree"
	for p in "${patches[@]}"; do
		log "applying $(basename "$p")"
		patch -d "$tree" -p1 --no-backup-if-mismatch -s <"$p" >>"$buildlog" 2>&1 ||
			die "patch $(basename "$p") does not apply to $version (log $buildlog)"
	done
fi
obj=$work/obj
kmake() { make -C "$tree" O="$obj" ARCH=x86_64 -j"$jobs" "$@" >>"$buildlog" 2>&1; }

kmake tinyconfig || die "make tinyconfig failed (log $buildlog)"
# merge_config.sh -m only concatenates with override; olddefconfig resolves.
(cd "$obj" && "$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" .config "$fragment") \
	>>"$buildlog" 2>&1 || die "merging $fragment failed (log $buildlog)"
kmake olddefconfig || die "make olddefconfig failed (log $buildlog)"

"$here/check-config.sh" "$fragment" "$obj/.config" | tee "$result.tmp/options-check.txt" >&2 ||
	die "options asked for in $fragment are not set (see above)"

log "make bzImage (log $buildlog)"
kmake bzImage || { tail -n 30 "$buildlog" >&2; die "make bzImage failed (log $buildlog)"; }
kmake headers_install INSTALL_HDR_PATH="$result.tmp/headers" ||
	die "make headers_install failed (log $buildlog)"

cp "$obj/arch/x86/boot/bzImage" "$result.tmp/bzImage"
cp "$obj/.config" "$result.tmp/config"
secs=$(( $(date +%s) - start ))
cat >"$result.tmp/info" <<INFO
package_version=$version
source_dir=$srcdir
key=$key
patches=${#patches[@]}
build_seconds=$secs
built=$(date -u +%Y-%m-%dT%H:%M:%SZ)
INFO
rm -rf "$result"
mv "$result.tmp" "$result"
rm -rf "$work"
log "built in ${secs}s"
publish
