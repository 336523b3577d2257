#!/bin/bash
# lint/test_hooks_out_of_release: the test hooks (common/test_hooks.h) are
# in the test programs only.
#  - No source of the product (vmm/ agent/ common/ guestmem/ include/)
#    names a hook's environment variable (tests/hooks/test_hooks_env.h).
#  - No release program (build/bin, what users install) has one of those
#    names in it, and the hooked ones (kvmlu-vmm, kvmlu-agent), asked
#    under gdb with every hook's variable set, do nothing: no fault
#    injected, no fault-only verification, no stop.
#  - The test programs (build/test/bin, the QEMU harness's, and
#    build/san/bin) have every name, and build/test/bin's kvmlu-vmm and
#    kvmlu-agent, asked the same way, honour each hook: the relink with
#    tests/hooks/test_hooks.c worked.
set -u
cd "$(dirname "$0")/../.."

fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

names=$(sed -n 's/^#define[[:space:]]\+TEST_HOOK_[A-Z_]*_ENV[[:space:]]\+"\([^"]*\)".*/\1/p' \
	tests/hooks/test_hooks_env.h)
[ "$(wc -w <<<"$names")" -ge 3 ] ||
	{ echo "FAIL: no hook names read from tests/hooks/test_hooks_env.h: '$names'"; exit 1; }
command -v gdb >/dev/null || { echo "FAIL: gdb missing (scripts/install-deps.sh)"; exit 1; }
for f in build/bin/kvmlu-vmm build/bin/kvmlu-agent build/test/bin/kvmlu-vmm \
	build/test/bin/kvmlu-agent build/san/bin/kvmlu-vmm build/san/bin/kvmlu-agent; do
	[ -x "$f" ] || { echo "FAIL: $f not built (make tests-build)"; exit 1; }
done

# The sources: a hook's variable is read in tests/hooks/ only.
src=$(grep -rn "KVMLU_TEST_" vmm agent common guestmem include)
[ -z "$src" ] || bad "the product's sources name test hooks:"$'\n'"$src"

# The release programs: no hook's name, nor any KVMLU_TEST_ name at all.
for f in build/bin/*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	hit=$(strings -a "$f" | grep "KVMLU_TEST" | sort -u | tr '\n' ' ')
	[ -z "$hit" ] || bad "$f (release) has $hit"
done

# The test programs: every name, or the check above proves nothing.
for f in build/test/bin/kvmlu-vmm build/test/bin/kvmlu-agent \
	build/san/bin/kvmlu-vmm build/san/bin/kvmlu-agent; do
	for n in $names; do
		strings -a "$f" | grep -qx "$n" || bad "$f (test build) lacks the hook $n"
	done
done

# ask PROGRAM: runs it to main() under gdb with every hook's variable set
# and calls each hook: the lazy fault-only answer, the restore step
# "build" failing twice in a row (consumed: only the first fails), and a
# stop at probe:point.
ask() {
	env KVMLU_TEST_STOP_AT=probe:point KVMLU_TEST_RESTORE_FAIL=build \
		KVMLU_TEST_LAZY_FAULT_ONLY=1 \
		timeout 60 gdb -nx -batch -q -ex 'set confirm off' -ex 'break main' -ex run \
		-ex 'printf "hook lazy=%d\n", (int)test_hook_lazy_fault_only()' \
		-ex 'printf "hook fail=%d\n", (int)test_hook_restore_fail("build", 1, (char *)0, 0)' \
		-ex 'printf "hook fail=%d\n", (int)test_hook_restore_fail("build", 1, (char *)0, 0)' \
		-ex 'call test_hook_stop_at("probe", "point")' \
		-ex kill "$1" </dev/null 2>&1
}

for f in build/bin/kvmlu-vmm build/bin/kvmlu-agent; do
	out=$(ask "$f")
	got=$(grep '^hook ' <<<"$out" | tr '\n' ' ')
	if [ "$got" != "hook lazy=0 hook fail=0 hook fail=0 " ]; then
		bad "$f (release) answered the hooks: '$got'"; echo "$out" | tail -n 15
	elif grep -q "SIGSTOP\|stopped$" <<<"$out"; then
		bad "$f (release) stopped at a test's stop point"; echo "$out" | tail -n 15
	else
		echo "ok: $f (release): every hook a no-op"
	fi
done
for f in build/test/bin/kvmlu-vmm build/test/bin/kvmlu-agent; do
	out=$(ask "$f")
	got=$(grep '^hook ' <<<"$out" | tr '\n' ' ')
	if [ "$got" != "hook lazy=1 hook fail=1 hook fail=0 " ]; then
		bad "$f (test build) did not honour the hooks: '$got'"; echo "$out" | tail -n 15
	elif ! grep -q "^kvmlu: KVMLU_TEST_STOP_AT=probe:point: pid [0-9]* stopped$" <<<"$out" ||
		! grep -q "received signal SIGSTOP" <<<"$out"; then
		bad "$f (test build) did not stop at probe:point"; echo "$out" | tail -n 15
	else
		echo "ok: $f (test build): every hook honoured"
	fi
done

[ $fails -eq 0 ] || exit 1
echo "PASS: test hooks only in the test programs ($(tr '\n' ' ' <<<"$names"))"
