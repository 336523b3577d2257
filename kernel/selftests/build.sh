#!/bin/bash
# Builds the project's kernel-side selftests (kernel/selftests/*.c) as static
# binaries against a kernel's installed uAPI headers, into build/kernel-selftests/.
# They test the project's kernel patches (kernel/patches/), so headers without
# those patches (no KVM_LINK_GUEST_MEMFD) build nothing and say why; the
# harness cases then SKIP naming the missing binary.
#
# Usage: kernel/selftests/build.sh [HEADERS_INCLUDE_DIR] [OUT_DIR]
#   defaults: build/kernel-headers/include  build/kernel-selftests
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
hdr=${1:-$top/build/kernel-headers/include}
out=${2:-$top/build/kernel-selftests}
cc=${CC:-gcc}

[ -f "$hdr/linux/kvm.h" ] || { echo "selftests: no $hdr/linux/kvm.h (make kernel)" >&2; exit 1; }
mkdir -p "$out"
if ! grep -q KVM_LINK_GUEST_MEMFD "$hdr/linux/kvm.h"; then
	echo "selftests: $hdr has no KVM_LINK_GUEST_MEMFD (kernel without kernel/patches/ guest_memfd series): nothing built" >&2
	rm -f "$out/gmem_luo_kexec"
	exit 0
fi
"$cc" -std=gnu11 -O2 -Wall -Wextra -Werror -static -isystem "$hdr" \
	-o "$out/gmem_luo_kexec.tmp" "$here/gmem_luo_kexec.c"
mv "$out/gmem_luo_kexec.tmp" "$out/gmem_luo_kexec"
echo "selftests: built $out/gmem_luo_kexec" >&2
