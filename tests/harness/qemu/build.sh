#!/bin/bash
# Builds the QEMU that plays the KVM host in the harness, the fleet, the
# demo and the benches (qemu_host.sh runs it and uses what it prints).
#
# Why not the installed qemu-system-x86_64: QEMU 7.2's TCG can lose the
# host's own timer interrupt while a nested guest waits for an interrupt
# window, and the QEMU host then never takes another interrupt
# (patches/0001-*.patch says how; tests/harness/README.md, "No retries",
# how it was found). So this is Debian's own source of the installed
# qemu-system-x86, the same version (the binary loads that package's
# firmware), with patches/*.patch applied in name order, built for
# x86_64-softmmu only.
#
# Prints the binary's path on stdout, nothing else (with --cached: only
# if it is already built, else fails at once). The result is cached in
# $KVMLU_CACHE/qemu/<key>, the key a hash of the source version, the
# patches and this script: a key already built returns at once, a new one
# builds (about 10 min on 2 idle cores). Concurrent runs serialize on a
# lock, and a result directory appears only when complete. The source
# comes through a private apt configuration: deb-src lines for the
# archives the machine's own apt configuration names, nothing else of the
# system's apt touched. The build's log: $KVMLU_CACHE/qemu/build.log.
{
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${KVMLU_CACHE:-/var/cache/kvmlu}/qemu
jobs=${KVMLU_QEMU_JOBS:-2}

log() { echo "qemu/build: $*" >&2; }
die() { log "$*"; exit 1; }

srcver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) ||
	die "qemu-system-x86 is not installed (scripts/install-deps.sh installs it)"
[ -n "$srcver" ] || die "dpkg gives no source version for qemu-system-x86"

shopt -s nullglob
patches=("$here"/patches/*.patch)
shopt -u nullglob
key=$( {
	echo "source qemu $srcver"
	for p in "${patches[@]}"; do echo "patch $(basename "$p")"; cat "$p"; done
	echo "script"; cat "$0"
} | sha256sum | cut -c1-16)
result=$cache/$key
bin=$result/bin/qemu-system-x86_64

if [ -x "$bin" ] && [ -f "$result/info" ]; then
	echo "$bin"
	exit 0
fi
[ "${1:-}" = --cached ] && die "not built yet for key $key"

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -x "$bin" ] && [ -f "$result/info" ]; then # built while we waited
	echo "$bin"
	exit 0
fi

work=$cache/tmp.$key
rm -rf "$cache"/tmp.* # left by a build that was killed; the lock says none runs
mkdir -p "$work/apt/lists/partial" "$work/apt/archives" "$work/apt/cache" "$work/src"
buildlog=$cache/build.log
log "building QEMU $srcver with ${#patches[@]} patch(es), key $key (about 10 min; log $buildlog)"

# deb-src for every archive (and suite) the machine's apt takes main from.
apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 2>/dev/null |
	awk '$3 == "main" { print "deb-src " $1 " " $2 " main" }' | sort -u >"$work/apt/sources.list"
[ -s "$work/apt/sources.list" ] ||
	die "the machine's apt configuration names no archive with a 'main' component"
aptopts=(-o Dir::Etc::sourcelist="$work/apt/sources.list" -o Dir::Etc::sourceparts=-
	-o Dir::State::Lists="$work/apt/lists" -o Dir::Cache="$work/apt/cache"
	-o Dir::Cache::archives="$work/apt/archives" -o Debug::NoLocking=1
	-o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root)
(
	# A suite without sources only warns; what matters is the package below.
	apt-get "${aptopts[@]}" update -qq || true
	cd "$work/src"
	apt-get "${aptopts[@]}" source --download-only "qemu=$srcver" ||
		die "apt-get source qemu=$srcver failed: no archive in the machine's apt configuration has that source"
	dpkg-source -x ./*.dsc tree
	cd tree
	for p in "${patches[@]}"; do
		log "patch $(basename "$p")"
		patch -p1 --forward <"$p"
	done
	mkdir ../build && cd ../build
	# Only what the QEMU hosts use: TCG (and KVM, for experiments), virtio,
	# user networking for the fleet, capstone for the monitor's x/i.
	../tree/configure --prefix=/usr \
		--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu \
		--target-list=x86_64-softmmu --disable-docs --disable-werror \
		--enable-slirp --enable-capstone --disable-gtk --disable-sdl --disable-vnc \
		--disable-opengl --disable-spice --disable-virglrenderer --disable-xen \
		--disable-curses
	ninja -j"$jobs" qemu-system-x86_64
	# QEMU looks for its firmware relative to its binary (bin/../share/qemu,
	# as configured above), so the result is a small prefix whose share/
	# and lib/ are the installed package's firmware directories.
	mkdir -p "$work/out/bin" "$work/out/share" "$work/out/lib/ipxe"
	cp qemu-system-x86_64 "$work/out/bin/"
	ln -s /usr/share/qemu "$work/out/share/qemu"
	ln -s /usr/share/seabios "$work/out/share/seabios"
	ln -s /usr/lib/ipxe/qemu "$work/out/lib/ipxe/qemu"
	"$work/out/bin/qemu-system-x86_64" --version
	# Every firmware file a QEMU host loads must be found where it looks.
	mapfile -t dirs < <("$work/out/bin/qemu-system-x86_64" -L help)
	for f in bios-256k.bin linuxboot_dma.bin kvmvapic.bin efi-virtio.rom; do
		found=
		for d in "${dirs[@]}"; do [ -e "$d/$f" ] && found=$d/$f && break; done
		[ -n "$found" ] || { echo "no $f in: ${dirs[*]}"; exit 1; }
		echo "firmware $f: $found"
	done
) >"$buildlog" 2>&1 || { tail -n 20 "$buildlog" >&2; die "build failed (log $buildlog)"; }

{
	echo "source qemu $srcver"
	for p in "${patches[@]}"; do echo "patch $(basename "$p")"; done
	echo "built $(date -u +%FT%TZ)"
} >"$work/out/info"
rm -rf "$result"
mv "$work/out" "$result"
rm -rf "$work"
log "ready: $bin"
echo "$bin"
exit 0
}
