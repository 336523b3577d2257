#!/bin/bash
# Boots one harness case in QEMU and prints its verdict lines:
# "PASS: name", "FAIL: name (why)", "SKIP: name (reason)", plus one line per
# "report" the case made inside. Called by check.sh; usable by hand:
#   tests/harness/run-case.sh CASE BZIMAGE INITRAMFS [LOGDIR]
#
# The serial console goes to LOGDIR/harness-CASE.log, each line prefixed
# with the host time since QEMU was started ("[  12.345678] ..."), which is
# what tests/bench/bench_kexec.sh measures. The exit code comes from
# isa-debug-exit (see guest/lib.sh); a hard host-side timeout kills QEMU.
# The log is kept for every case; a failing case also prints its tail.
#
# QEMU runs as qemu_host.sh says (the CPU model and why; KVMLU_HARNESS_QEMU,
# KVMLU_HARNESS_ACCEL and KVMLU_HARNESS_CPU replace them for experiments).
#
# Host-side settings, read from "HARNESS_X=value" lines of the case file
# (never by running it; it holds guest code):
#   HARNESS_NAME     result name           (default harness/CASE)
#   HARNESS_MEM      QEMU -m               (default 2G; KVMLU_HARNESS_MEM in the
#                    environment replaces it: a bench's larger guests)
#   HARNESS_SMP      QEMU -smp             (default 1, qemu_host.sh)
#   HARNESS_TIMEOUT  seconds for all stages (default 120)
#   HARNESS_APPEND   extra kernel command line words
#                    (KVMLU_HARNESS_APPEND in the environment adds more, for
#                    experiments: transparent_hugepage_shmem=advise)
#   HARNESS_DISK     a size (64M): a fresh, sparse raw image file
#                    LOGDIR/harness-CASE.disk.raw, the host's virtio disk
#                    (-drive if=virtio,format=raw; /dev/vda in there). It
#                    lives on this machine, so it keeps its data across the
#                    case's kexecs, which the host's tmpfs does not; it is
#                    kept after the run for a look
#   HARNESS_PASS_LINE / HARNESS_FAIL_LINE  judge by the serial log instead
#                    of the exit code: pass iff PASS_LINE appears and
#                    FAIL_LINE does not (for tests that cannot power off)
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/qemu_host.sh"
case=$1 kernel=$2 initrd=$3 logs=${4:-$top/build/test-logs}
file=$here/cases/$case.sh
mkdir -p "$logs"
log=$logs/harness-$case.log

setting() { # setting NAME DEFAULT
	local v
	v=$(sed -n "s/^$1=//p" "$file" | tail -n 1)
	v=${v#\"}; v=${v%\"}; v=${v#\'}; v=${v%\'}
	echo "${v:-$2}"
}
name=$(setting HARNESS_NAME "harness/$case")
mem=${KVMLU_HARNESS_MEM:-$(setting HARNESS_MEM 2G)}
smp=${KVMLU_HARNESS_SMP:-$(setting HARNESS_SMP "$QEMU_HOST_SMP")}
limit=$(setting HARNESS_TIMEOUT 120)
append="$(setting HARNESS_APPEND "") ${KVMLU_HARNESS_APPEND:-}"
disk=$(setting HARNESS_DISK "")
pass_line=$(setting HARNESS_PASS_LINE "")
fail_line=$(setting HARNESS_FAIL_LINE "")

stamp() { # prefix each serial line with the host time since $1 (us)
	local line now
	while IFS= read -r line; do
		now=${EPOCHREALTIME/./}
		now=$((now - $1))
		printf '[%4d.%06d] %s\n' $((now / 1000000)) $((now % 1000000)) "${line%$'\r'}"
	done
}

drive=()
if [ -n "$disk" ]; then
	img=$logs/harness-$case.disk.raw
	rm -f "$img"
	truncate -s "$disk" "$img" || { echo "FAIL: $name (HARNESS_DISK=$disk: no image $img)"; exit 1; }
	drive=(-drive "file=$img,if=virtio,format=raw")
fi

# no_timer_check: under TCG on a loaded host the IO-APIC timer check can
# miss its ticks and panic the boot ("IO-APIC + timer doesn't work!").
cmdline="console=ttyS0 kho=on liveupdate=on panic=-1 no_timer_check $QEMU_HOST_TSC_APPEND kvmlu.case=$case kvmlu.stage=1 $append"
# A reset the host's kernel asks for (a triple fault, the reboot after a
# panic) pauses QEMU; qmp_watch.py then logs every vCPU's registers as they
# were and quits QEMU (under -no-reboot QEMU left only "Triple fault").
qmp=$(mktemp -u "/tmp/kvmlu-qmp-$case.XXXXXX")
regs=$logs/harness-$case.reset-regs.txt
rm -f "$regs"
# A case that hangs gets its registers written 10 s before the timeout.
python3 "$here/qmp_watch.py" "$qmp" "$regs" $((limit > 20 ? limit - 10 : limit)) &
watch_pid=$!
start=${EPOCHREALTIME/./}
timeout -k 5 "$limit" "$QEMU_HOST_BIN" \
	-accel "$QEMU_HOST_ACCEL" -cpu "$QEMU_HOST_CPU" -m "$mem" -smp "$smp" \
	-nographic -nodefaults -serial stdio -action reboot=shutdown,shutdown=pause \
	-qmp "unix:$qmp,server=on,wait=off" \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline" "${drive[@]}" \
	-d "${KVMLU_HARNESS_QEMU_DEBUG:-cpu_reset,guest_errors}" -D "$logs/harness-$case.qemu.log" \
	</dev/null 2>&1 | stamp "$start" >"$log"
rc=${PIPESTATUS[0]}
kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
rm -f "$qmp"

result_line=$(grep -a 'KVMLU-HARNESS: RESULT ' "$log" | tail -n 1)
reason=${result_line#*KVMLU-HARNESS: RESULT }
reason=${reason#* }
stages=$(grep -a -o 'KVMLU-HARNESS: \[[0-9. ]*\] userspace stage [0-9]*' "$log" |
	sed 's/.* //' | tr '\n' ' ' | sed 's/ $//')

grep -a 'KVMLU-HARNESS: REPORT ' "$log" | sed 's/.*KVMLU-HARNESS: REPORT //' |
while read -r status rest; do
	sub=${rest%% *} why=${rest#"$sub"}; why=${why# }
	case $status in
	PASS) echo "PASS: $sub" ;;
	FAIL) echo "FAIL: $sub${why:+ $why}" ;;
	SKIP) echo "SKIP: $sub ${why:-(no reason given)}" ;;
	esac
done

verdict=FAIL why=""
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	why="timed out after ${limit}s, stages reached: ${stages:-none}"
elif [ -n "$pass_line" ]; then
	if [ -n "$fail_line" ] && grep -a -q -F "$fail_line" "$log"; then
		why="serial log has '$fail_line'"
	elif grep -a -q -F "$pass_line" "$log"; then
		verdict=PASS
	else
		why="serial log lacks '$pass_line'"
	fi
else
	case $rc in
	# QEMU's own errors (a missing firmware file, a bad option) exit 1
	# too: a pass is the case's 0 written to isa-debug-exit after its
	# RESULT PASS line, never the exit code alone.
	1)
		if [[ $result_line == *"KVMLU-HARNESS: RESULT PASS"* ]]; then
			verdict=PASS
		else
			why="QEMU exited 1 without the case's RESULT PASS line (QEMU's own error?), stages reached: ${stages:-none}"
		fi
		;;
	3) why=${reason:-the case failed without a reason} ;;
	5) verdict=SKIP why=${reason:-no reason given} ;;
	*)
		why="QEMU exited $rc without a verdict, stages reached: ${stages:-none}"
		grep -a -q 'Kernel panic' "$log" && why="$why; kernel panic"
		;;
	esac
fi

case $verdict in
PASS) echo "PASS: $name" ;;
SKIP) echo "SKIP: $name ($why)" ;;
FAIL)
	if grep -q "asked for a reset" "$regs" 2>/dev/null; then
		# Where each vCPU of the QEMU host was when its kernel reset it.
		why="$why; the host's kernel asked for a reset ($(tail -n 1 "$logs/harness-$case.qemu.log")), its vCPUs then: $regs"
	elif grep -q '^=== stuck' "$regs" 2>/dev/null; then
		why="$why; $(sed -n 's/^=== //p' "$regs" | grep '^stuck' | head -n 1) ($regs)"
	elif [ -s "$regs" ]; then
		why="$why; the host's vCPUs just before the timeout: $regs"
	fi
	echo "FAIL: $name ($why, log $log)"
	tail -n 30 "$log" | sed 's/^/    | /'
	[ -s "$regs" ] && grep -E '^(=== |RIP|EIP|CR0|EFER|CPU#)' "$regs" | head -n 20 | sed 's/^/    # /'
	;;
esac
[ $verdict != FAIL ]
exit
}
