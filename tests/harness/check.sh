#!/bin/bash
# The harness part of `make check` (called by tests/run-tests.sh, which
# counts the PASS:/FAIL:/SKIP: lines printed here and echoes the rest).
#
# 1. The kernel: kernel/build.sh returns in seconds when the cache has the
#    current key, else builds it (~7 min on 2 cores; CI's first run on a
#    new machine does this). KVMLU_HARNESS_NO_BUILD=1 skips the cases
#    instead of building.
# 2. uapi/kvmlu_headers_match_kernel and scripts_parse_in_busybox_sh (no QEMU).
# 3. The upstream selftests from the same source, built static (cached).
# 4. The initramfs, then every tests/harness/cases/*.sh whose result name
#    matches KVMLU_TEST_FILTER, and the Ansible role's host: one QEMU boot
#    each, two at once (below).
# The last lines say which cases ran and which were filtered out. It exits
# 1 when it printed a FAIL line, so that a run by hand says so too.
# Bash reads a script while it runs it: the function and the one line
# that calls it make it read this one whole first, so that editing it
# under a long run cannot change that run.
harness_check() {
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top" || exit 1
filter=${KVMLU_TEST_FILTER:-.}
logs=$top/build/test-logs
work=$top/build/harness
mkdir -p "$logs" "$work"

case_name() { # the result name of a case file (HARNESS_NAME= or harness/CASE)
	local n
	n=$(sed -n 's/^HARNESS_NAME=//p' "$1" | tail -n 1)
	echo "${n:-harness/$(basename "$1" .sh)}"
}
skip_all() { # skip_all REASON
	local c
	for c in "$here"/cases/*.sh; do
		n=$(case_name "$c")
		[[ $n =~ $filter ]] && echo "SKIP: $n ($1)"
	done
	for h in ${KVMLU_FLEET_HOSTS:-1}; do
		n=$(fleet_name "$h")
		[[ $n =~ $filter ]] && echo "SKIP: $n ($1)"
	done
}
fleet_name() { # fleet_name HOSTS: the result name of fleet/run.sh HOSTS
	case $1 in 1) echo harness/ansible_rollout_one_host ;; *) echo harness/ansible_rollout_two_hosts ;; esac
}

uapi_name=uapi/kvmlu_headers_match_kernel
if [ -f build/kernel/info ] && [ "${KVMLU_HARNESS_NO_BUILD:-0}" = 1 ]; then
	echo "harness: using the kernel in build/kernel without checking its key"
elif [ "${KVMLU_HARNESS_NO_BUILD:-0}" = 1 ]; then
	[[ $uapi_name =~ $filter ]] && echo "SKIP: $uapi_name (no kernel in the cache, KVMLU_HARNESS_NO_BUILD=1)"
	skip_all "no kernel in the cache, KVMLU_HARNESS_NO_BUILD=1"
	exit 0
else
	echo "harness: kernel/build.sh (seconds if cached, ~7 min to build; log $logs/harness-kernel.log)"
	if ! kernel/build.sh >"$logs/harness-kernel.log" 2>&1; then
		tail -n 20 "$logs/harness-kernel.log" | sed 's/^/    | /'
		echo "FAIL: harness/kernel_build (kernel/build.sh failed, log $logs/harness-kernel.log)"
		skip_all "the kernel did not build"
		exit 0
	fi
fi
kdir=$(readlink -f build/kernel)
echo "harness: kernel $(sed -n 's/^package_version=//p' "$kdir/info"), $kdir"

# The QEMU hosts' own QEMU (qemu_host.sh), built here once so that no case
# waits for it; the cases get the binary found here (KVMLU_HARNESS_QEMU).
if [ -n "${KVMLU_HARNESS_QEMU:-}" ]; then
	echo "harness: QEMU $KVMLU_HARNESS_QEMU (KVMLU_HARNESS_QEMU)"
elif [ "${KVMLU_HARNESS_NO_BUILD:-0}" = 1 ]; then
	if ! qemu_bin=$("$here/qemu/build.sh" --cached 2>&1); then
		skip_all "no QEMU in the cache, KVMLU_HARNESS_NO_BUILD=1 ($qemu_bin)"
		exit 0
	fi
	echo "harness: QEMU $qemu_bin"
else
	echo "harness: tests/harness/qemu/build.sh (seconds if cached, ~10 min to build; log $logs/harness-qemu.log)"
	if ! qemu_bin=$("$here/qemu/build.sh" 2>"$logs/harness-qemu.log"); then
		tail -n 20 "$logs/harness-qemu.log" | sed 's/^/    | /'
		echo "FAIL: harness/qemu_build (tests/harness/qemu/build.sh failed, log $logs/harness-qemu.log)"
		skip_all "the harness's QEMU did not build"
		exit 0
	fi
	echo "harness: QEMU $qemu_bin"
fi
[ -n "${KVMLU_HARNESS_QEMU:-}" ] || export KVMLU_HARNESS_QEMU=$qemu_bin

# A QEMU that cannot start exits 1, the code a passing case's QEMU exits
# with; run-case.sh must call that a failure (2026-12-06: a QEMU without
# its firmware "passed" every case until run-case.sh asked for the case's
# RESULT PASS line too).
selftest=harness/qemu_error_is_not_a_pass
if [[ $selftest =~ $filter ]]; then
	printf '#!/bin/sh\necho "qemu: could not load PC BIOS bios-256k.bin" >&2\nexit 1\n' >"$work/fake-qemu"
	chmod +x "$work/fake-qemu"
	out=$(KVMLU_HARNESS_QEMU=$work/fake-qemu "$here/run-case.sh" kvm_witness /dev/null /dev/null "$work/selftest" 2>&1)
	if [[ $out == "FAIL: "*"QEMU exited 1 without the case's RESULT PASS line"* ]]; then
		echo "PASS: $selftest"
	else
		echo "FAIL: $selftest (run-case.sh, its QEMU exiting 1 at once, printed: $(head -n 1 <<<"$out"))"
	fi
fi

if [[ $uapi_name =~ $filter ]]; then
	"$here/uapi/check.sh" "$kdir/headers/include" "$work/uapi"
fi

# Every script the QEMU host's busybox sh runs must parse there: a case
# that does not is found in a second here, not as a panic of the host's
# init minutes into a run (a bash-only `<<<` did that on 2026-12-05).
parse_name=harness/scripts_parse_in_busybox_sh
if [[ $parse_name =~ $filter ]]; then
	bad=""
	for f in "$here"/guest/init "$here"/guest/lib.sh "$here"/cases/*.sh "$here"/cases/*.inc; do
		msg=$(busybox sh -n "$f" 2>&1) || bad="$bad ${f#"$top"/}: $msg;"
	done
	if [ -z "$bad" ]; then
		echo "PASS: $parse_name"
	else
		echo "FAIL: $parse_name (${bad# })"
	fi
fi

peers=""
peers_err=""
if ! peers=$("$here/build-peers.sh" "$kdir" 2>"$logs/harness-peers.log"); then
	peers_err="upstream selftests did not build, log $logs/harness-peers.log"
	tail -n 10 "$logs/harness-peers.log" | sed 's/^/    | /'
	peers=""
fi

# The project's own kernel-side selftests (kernel/selftests/), built against
# this kernel's headers; the gmem_* cases carry them in their .files.
if ! kernel/selftests/build.sh "$kdir/headers/include" build/kernel-selftests \
	>"$logs/harness-kselftests.log" 2>&1; then
	tail -n 10 "$logs/harness-kselftests.log" | sed 's/^/    | /'
	echo "FAIL: harness/kernel_selftests_build (log $logs/harness-kselftests.log)"
fi

initrd=$work/initramfs.cpio
# KVMLU_NATIVE_FILTER=regex: only those native tests in the harness/native_* cases.
rm -f "$work/native-filter"
[ -n "${KVMLU_NATIVE_FILTER:-}" ] && echo "$KVMLU_NATIVE_FILTER" >"$work/native-filter"
# The programs of build/test/bin: the release objects with the test hooks
# (common/test_hooks.h) that cases such as vm_restore_held_at_each_step use.
if ! KVMLU_INITRAMFS_BIN=build/test/bin "$here/mkinitramfs.sh" "$initrd" "$kdir/bzImage" "$peers" \
	2>"$logs/harness-initramfs.log"; then
	cat "$logs/harness-initramfs.log"
	echo "FAIL: harness/initramfs (mkinitramfs.sh failed, log $logs/harness-initramfs.log)"
	skip_all "no initramfs"
	exit 0
fi
echo "harness: initramfs $(($(stat -c %s "$initrd") / 1024)) KiB"

# Cases run without a retry, KVMLU_HARNESS_JOBS at once (default: one per
# core, at most one per 8 GiB of free memory). Each QEMU host has one vCPU
# (qemu_host.sh says why: the nested faults came from QEMU 7.2's
# multi-threaded TCG running two vCPUs of one host at once), so two of
# them use this machine's two cores. A case's lines are printed together
# when it ends, in the order the cases end.
jobs=${KVMLU_HARNESS_JOBS:-}
if [ -z "$jobs" ]; then
	jobs=$(nproc)
	by_mem=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) / (8 * 1024 * 1024)))
	[ "$by_mem" -lt "$jobs" ] && jobs=$by_mem
	[ "$jobs" -lt 1 ] && jobs=1
fi
# Each run its own: a second harness run in the same tree (a `make check`
# beside a `make soak`) once emptied the first one's directory, and a
# case that passed came out as "exited 0 without a verdict".
outs=$(mktemp -d "$work/case-out.XXXXXX")
trap 'rm -rf "$outs"' EXIT
declare -A running=() # pid -> result name
finish_one() { # wait for a running job to end; print its verdict lines
	local pid n out
	while :; do
		for pid in "${!running[@]}"; do
			[ -e "$outs/${running[$pid]//\//_}.rc" ] && break 2
		done
		sleep 1
	done
	wait "$pid"
	n=${running[$pid]} out=$outs/${running[$pid]//\//_}
	unset "running[$pid]"
	cat "$out"
	# A runner that died before its verdict is a failure, never silence.
	grep -qE "^(PASS|FAIL|SKIP): $n( |\$)" "$out" ||
		echo "FAIL: $n ($(cat "$out.runner") exited $(cat "$out.rc") without a verdict)"
}
start_job() { # start_job NAME RUNNER ARGS...: in the background, in a free slot
	local n=$1 out=$outs/${1//\//_}
	shift
	while [ ${#running[@]} -ge "$jobs" ]; do finish_one; done
	echo "${1##*/}" >"$out.runner"
	(
		"$@" >"$out"
		echo $? >"$out.rc"
	) &
	running[$!]=$n
	ran+=("$n")
}
# Longest first, so that the two slots end together: the Ansible role's
# host (below) and then the cases by their HARNESS_TIMEOUT, a fair proxy
# for how long they run.
by_length() {
	local c t
	for c in "$here"/cases/*.sh; do
		t=$(sed -n 's/^HARNESS_TIMEOUT=//p' "$c" | tail -n 1)
		echo "${t:-120} $c"
	done | sort -k1,1nr -k2,2 | cut -d' ' -f2-
}
ran=() filtered=()
# The Ansible role (ansible/) against QEMU hosts it reaches over SSH
# (fleet/run.sh, its own runner: one QEMU per host, at once): one host in
# every run; two, the rolling update proper, when KVMLU_FLEET_HOSTS names
# 2 (`make check-fleet` sets KVMLU_FLEET_HOSTS=2).
for hosts in ${KVMLU_FLEET_HOSTS:-1}; do
	n=$(fleet_name "$hosts")
	if ! [[ $n =~ $filter ]]; then
		filtered+=("$n")
		continue
	fi
	start_job "$n" "$here/fleet/run.sh" "$hosts" "$kdir/bzImage" "$initrd" "$logs"
done
for c in $(by_length); do
	n=$(case_name "$c")
	if ! [[ $n =~ $filter ]]; then
		filtered+=("$n")
		continue
	fi
	if [ -n "$peers_err" ] && [[ $n == peer/* ]]; then
		echo "FAIL: $n ($peers_err)"
		ran+=("$n")
		continue
	fi
	# HARNESS_ARCHIVE=SCRIPT (e.g. tests/harness/qemu_archive.sh): opt-in,
	# run only when KVMLU_TEST_FILTER names the case; SCRIPT OUT writes an
	# archive appended to the initramfs for this case alone.
	cinit=$initrd b=$(basename "$c" .sh)
	arch=$(sed -n 's/^HARNESS_ARCHIVE=//p' "$c" | tail -n 1)
	if [ -n "$arch" ]; then
		if [[ $filter != *"$b"* ]]; then
			filtered+=("$n")
			continue
		fi
		cinit=$work/initramfs-$b.cpio
		if ! "$top/$arch" "$cinit.extra" >"$logs/harness-$b.archive.log" 2>&1; then
			echo "FAIL: $n ($arch failed: $(tail -n 1 "$logs/harness-$b.archive.log"))"
			ran+=("$n")
			continue
		fi
		cat "$initrd" "$cinit.extra" >"$cinit"
	fi
	start_job "$n" "$here/run-case.sh" "$b" "$kdir/bzImage" "$cinit" "$logs"
done
while [ ${#running[@]} -gt 0 ]; do finish_one; done
echo "harness: ran ${#ran[@]} QEMU cases: ${ran[*]:-none}"
[ ${#filtered[@]} -gt 0 ] && echo "harness: filtered out: ${filtered[*]}"
exit 0
}
{ set -o pipefail; harness_check | awk '{ print; fflush() } /^FAIL: / { failed = 1 } END { exit failed }'; exit; }
