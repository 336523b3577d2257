#!/bin/sh
# Installs the Debian packages kvmlu needs to build, test and run its demo.
# Idempotent: packages already present are left alone, apt is only touched
# when something is missing. Needs root (the README's commands run as root).
set -eu

PKGS="build-essential pkg-config clang libclang-rt-14-dev
libfdt-dev device-tree-compiler libjson-c-dev libxxhash-dev libcmocka-dev
qemu-system-x86 kexec-tools busybox-static cpio
dpkg-dev meson ninja-build libglib2.0-dev libpixman-1-dev libslirp-dev libcapstone-dev
flex bison bc libelf-dev libssl-dev dwarves python3 xz-utils zstd rsync jq gdb
acpica-tools
libvirt-dev libvirt-daemon-system libxml2-dev
ansible-core openssh-client openssh-server"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
