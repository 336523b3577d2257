#!/bin/bash
# The files a harness host managed by Ansible needs on top of the harness
# initramfs, as one more newc cpio archive: the kernel unpacks archives
# laid end to end in order, so `cat initramfs.cpio fleet.cpio host1.cpio`
# is the host's initramfs. Debian's own programs are copied as they are
# installed here: OpenSSH's sshd and sftp-server, Python 3 with its
# standard library (what Ansible's modules run on), with the libraries
# they load. Plus the guest side of the test (host.sh as the case
# fleet_host, check.sh) and the agent cases' helpers and shipped configs.
#
# Usage: segment.sh OUT.cpio
# Per-host files (SSH keys) go into a second, small archive: see run.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/.." && pwd)
top=$(cd "$harness/../.." && pwd)
out=$1
die() { echo "fleet segment: $*" >&2; exit 1; }

sshd=/usr/sbin/sshd sftp=/usr/lib/openssh/sftp-server
python=$(readlink -f /usr/bin/python3 2>/dev/null) || true
[ -x "$sshd" ] && [ -x "$sftp" ] || die "no $sshd or $sftp (package openssh-server)"
[ -n "$python" ] && [ -x "$python" ] || die "no /usr/bin/python3 (package python3)"
stdlib=/usr/lib/$(basename "$python")
[ -f "$stdlib/os.py" ] || die "no standard library in $stdlib"

root=$(mktemp -d "$(dirname "$out")/fleet-root.XXXXXX")
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"
. "$harness/initramfs_lib.sh"

add_prog "$sshd" /usr/sbin/sshd
add_prog "$sftp" /usr/lib/openssh/sftp-server
add_prog "$python" "/usr/bin/$(basename "$python")"
ln -s "$(basename "$python")" "$root/usr/bin/python3"
# The standard library without what a module never imports (tests, IDE,
# Tk, the static libpython of -dev packages): tens of MiB less to unpack.
mkdir -p "$root/usr/lib"
cp -a "$stdlib" "$root/usr/lib/"
for d in test idlelib tkinter turtledemo ensurepip lib2to3 pydoc_data "config-"*; do
	rm -rf "${root:?}$stdlib/"$d
done
for so in "$root$stdlib"/lib-dynload/*.so; do
	copy_libs "$so"
done

mkdir -p "$root/cases" "$root/harness/shipped" "$root/etc/ssh"
cp "$here/host.sh" "$root/cases/fleet_host.sh"
cp "$here/check.sh" "$root/harness/fleet_check.sh"
cp "$harness/cases/vm_common.inc" "$root/harness/vm_common.sh"
cp "$harness/cases/agent_common.inc" "$root/harness/agent_common.sh"
cp "$top/configs/agent.json" "$top/configs/kvmlu-agent.service" \
	"$top/configs/kvmlu-restore.service" "$top/configs/kvmlu-thp.conf" "$root/harness/shipped/"
cp "$here/sshd_config" "$root/etc/ssh/sshd_config"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$root.cpio"
mv "$root.cpio" "$out"
