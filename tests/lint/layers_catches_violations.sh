#!/bin/bash
# lint/layers_catches_violations: tests/lint/layers.py run on a small fake
# tree (agent/ over vmm/ over common/) passes it as baselined, and fails on a
# new upward include, a new file circle, and a baseline entry that no
# longer occurs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
check() { # check WANT_RC EXPECTED_OUTPUT_REGEX what
	local out rc
	out=$(python3 "$here/layers.py" --root "$t" --layers "$t/layers.txt" \
		--baseline "$t/baseline.txt" 2>&1)
	rc=$?
	if [ "$rc" -ne "$1" ] || ! grep -qE "$2" <<<"$out"; then
		echo "not ok: $3: exit $rc (want $1), output:"
		echo "$out"
		fails=$((fails + 1))
	else
		echo "ok: $3"
	fi
}

mkdir -p "$t/agent" "$t/vmm" "$t/common"
printf 'agent\nvmm\ncommon\n' >"$t/layers.txt"
printf '#include "vmm/a.h"\n#include "common/c.h"\n' >"$t/agent/top.c"
printf '#include "common/c.h"\n' >"$t/vmm/a.h"
printf '#include "vmm/a.h"\n#include "vmm/b.h"\n' >"$t/vmm/a.c"
: >"$t/vmm/b.h"
printf '#include "vmm/b.h"\n' >"$t/vmm/b.c"
: >"$t/vmm/d.h"
: >"$t/common/c.h"
# One known upward include (and so a pair of folders), baselined.
printf '#include "common/c.h"\n#include "vmm/d.h"\n' >"$t/common/c.c"
cat >"$t/baseline.txt" <<'B'
# known
upward common/c.c vmm/d.h
pair common vmm
B
check 0 '^layers: 1 upward includes \(1 known\), 1 folder pairs, 0 file circles$' \
	"the baselined tree passes"

printf '#include "agent/top.h"\n' >>"$t/vmm/b.c"
: >"$t/agent/top.h"
check 1 'new upward include: vmm/b.c includes agent/top.h' \
	"a new upward include fails"
check 1 'new folder.*agent vmm|folders include each other: agent vmm' \
	"the new pair it makes fails"
sed -i '$d' "$t/vmm/b.c"
check 0 '1 upward includes \(1 known\)' "removing it passes again"

printf '#include "vmm/a.h"\n' >"$t/vmm/b.h"
check 1 'new modules include each other in a circle: vmm/a vmm/b$' \
	"a new file circle fails"
: >"$t/vmm/b.h"

sed -i '$d' "$t/common/c.c"
check 1 'baseline entry no longer occurs.*upward common/c.c vmm/d.h' \
	"a baseline entry that no longer occurs fails"

mkdir -p "$t/guestmem" && : >"$t/guestmem/g.c"
printf '#include "guestmem/g.h"\n' >"$t/guestmem/g.c"
: >"$t/guestmem/g.h"
check 1 'folder guestmem is not in' "a folder missing from the layer table fails"

[ "$fails" -eq 0 ]
