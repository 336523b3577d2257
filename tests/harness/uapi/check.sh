#!/bin/bash
# Harness-independent case: do include/kvmlu/{kvm,liveupdate}_uapi.h agree
# with the uAPI headers of the kernel the project builds? uapi_dump.c
# (compiled against build/kernel-headers) writes the kernel's values,
# uapi_match.c (compiled against the system headers + kvmlu's) must compile
# with _Static_asserts on every one of them. Prints one PASS/FAIL/SKIP line.
# Usage: check.sh KERNEL_HEADERS_INCLUDE_DIR OUTDIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
hdr=$1 out=$2
name=uapi/kvmlu_headers_match_kernel
mkdir -p "$out"
log=$out/uapi-check.log

if [ ! -f "$hdr/linux/kvm.h" ] || [ ! -f "$hdr/linux/liveupdate.h" ]; then
	echo "SKIP: $name (kernel uAPI headers not in $hdr; make kernel)"
	exit 0
fi
warn=(-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror)
if ! gcc "${warn[@]}" -isystem "$hdr" -I "$here" -o "$out/uapi_dump" \
	"$here/uapi_dump.c" >"$log" 2>&1; then
	echo "FAIL: $name (uapi_dump.c does not build against $hdr, log $log)"
	exit 1
fi
"$out/uapi_dump" >"$out/uapi_kernel_facts.h" 2>>"$log" ||
	{ echo "FAIL: $name (uapi_dump failed, log $log)"; exit 1; }
for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	if ! $cc "${warn[@]}" -I "$top" -I "$here" -include "$out/uapi_kernel_facts.h" \
		-o "$out/uapi_match.$cc" "$here/uapi_match.c" >>"$log" 2>&1; then
		echo "FAIL: $name ($cc: $(grep -o 'differs from the kernel[^:]*: [A-Za-z0-9_]*' "$log" |
			sed 's/.*: //' | sort -u | tr '\n' ' ')log $log)"
		exit 1
	fi
done
echo "uapi: $(grep -c '^#define' "$out/uapi_kernel_facts.h") facts agree (gcc and clang)"
echo "PASS: $name"
