#!/bin/bash
# Fetches and unpacks the host kernel source named in kernel/source.conf
# into the cache, through a private apt configuration (own sources list,
# own lists directory), so the system's apt sources and packages are never
# touched. Prints the unpacked tree's path and version on stdout as
# "<dir> <version>".
#
# Lifecycle: the first run downloads and unpacks (~170 MB). Later runs use
# the newest version already in the cache without any network access, so a
# build stays reproducible; KVMLU_KERNEL_REFRESH=1 asks apt again and picks
# up a newer 7.3.x if the archive has one. A missing package, or one older
# than KERNEL_MIN_VERSION, is an error that says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=kernel/source.conf
. "$here/source.conf"
cache=${KVMLU_CACHE:-/var/cache/kvmlu}
srcroot=$cache/source
apt=$cache/apt
mkdir -p "$srcroot" "$apt/lists/partial" "$apt/archives"

log() { echo "fetch-source: $*" >&2; }
die() { log "$*"; exit 1; }

newest_cached() { # prints "<dir> <version>" of the newest unpacked tree
	local best="" bestv="" d v
	for d in "$srcroot/$KERNEL_PACKAGE"_*/; do
		[ -f "$d/.unpacked" ] || continue
		v=$(cat "$d/.unpacked")
		if [ -z "$bestv" ] || dpkg --compare-versions "$v" gt "$bestv"; then
			# The physical path: build.sh hard-links a copy of it for
			# patching, and cp -al of a symlink would copy the link.
			best=$(cd "$d" && pwd -P) bestv=$v
		fi
	done
	[ -n "$best" ] && echo "$best $bestv"
}

if [ "${KVMLU_KERNEL_REFRESH:-0}" != 1 ] && found=$(newest_cached); then
	echo "$found"
	exit 0
fi

# The archive is the machine's own: the first Debian mirror its apt
# configuration names (the one serving the base suite), asked for another
# suite of it. Nothing in the repo names a host.
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 2>/dev/null |
	awk '$3 == "main" && $2 !~ /-(security|updates|backports)$/ { print $1; exit }')
[ -n "$mirror" ] ||
	die "the machine's apt configuration names no Debian archive with a 'main' component"
KERNEL_APT_SOURCE="deb $mirror $KERNEL_APT_SUITE $KERNEL_APT_COMPONENT"
echo "$KERNEL_APT_SOURCE" >"$apt/sources.list"
aptopts=(-o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=-
	-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
	-o Dir::Cache::archives="$apt/archives" -o Debug::NoLocking=1
	-o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root)
mkdir -p "$apt/cache"
log "apt-get update ($KERNEL_APT_SOURCE, private lists in $apt/lists)"
apt-get "${aptopts[@]}" update -qq >&2 ||
	die "apt-get update failed for '$KERNEL_APT_SOURCE' (network?)"

version=$(apt-cache "${aptopts[@]}" show "$KERNEL_PACKAGE" 2>/dev/null |
	sed -n 's/^Version: //p' | sort -V | tail -n 1 || true)
[ -n "$version" ] ||
	die "package $KERNEL_PACKAGE not found in '$KERNEL_APT_SOURCE'"
dpkg --compare-versions "$version" ge "$KERNEL_MIN_VERSION" ||
	die "$KERNEL_PACKAGE $version is older than the required $KERNEL_MIN_VERSION"

dest=$srcroot/${KERNEL_PACKAGE}_$version
if [ -f "$dest/.unpacked" ]; then
	echo "$dest $version"
	exit 0
fi

dl=$(mktemp -d "$srcroot/.dl.XXXXXX")
trap 'rm -rf "$dl"' EXIT
log "downloading $KERNEL_PACKAGE=$version"
(cd "$dl" && apt-get "${aptopts[@]}" download -qq "$KERNEL_PACKAGE=$version" >&2) ||
	die "apt-get download $KERNEL_PACKAGE=$version failed"
deb=$(ls "$dl"/*.deb)
dpkg-deb -x "$deb" "$dl/x"
tarball=$(ls "$dl"/x/usr/src/"$KERNEL_PACKAGE".tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || die "$deb holds no /usr/src/$KERNEL_PACKAGE.tar.*"
log "unpacking $(basename "$tarball")"
mkdir -p "$dl/tree"
tar -xf "$tarball" -C "$dl/tree"
top=$(ls "$dl/tree")
[ -f "$dl/tree/$top/Makefile" ] || die "$tarball does not hold a kernel tree"
rm -rf "$dest"
mv "$dl/tree/$top" "$dest"
echo "$version" >"$dest/.unpacked"
echo "$dest $version"
