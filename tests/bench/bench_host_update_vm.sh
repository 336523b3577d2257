#!/bin/bash
# Bench: blackout of a VM across a host kexec (pause -> running again in
# the new kernel) next to the bare kexec time of the same run (kexec -e
# -> the new kernel's userspace), for witness guests of 256 MiB, 1 GiB
# and 4 GiB (KVMLU_BENCH_SIZES="256M 1G" to choose), inside the QEMU
# host of tests/harness (its memory raised to 1.25 x (2 x guest + 2 GiB):
# the measured VM, its twin, and room outside KHO's scratch). Each size
# runs twice (KVMLU_BENCH_FOLIOS, default "2M 4K"): guest RAM in 2 MiB
# folios, as the shipped configs/kvmlu-thp.conf sets up
# (transparent_hugepage_shmem=advise here), and in 4 KiB pages
# (shmem_enabled=never, the kernel's default), one row each; huge_MiB is
# ShmemHugePages before prepare-update (both VMs), the check that a row
# ran with the folios it names.
#
# Each row makes KVMLU_BENCH_UPDATES (3) host updates of the same two VMs
# one after another in one QEMU host and prints the median blackout: one
# kexec of a TCG host varies by a second from one to the next, and one
# sample of each side made the ratio a draw (2026-12-05: 0.76 to 1.43).
# bare_s is the median of three more kexecs of the same QEMU host after
# both VMs stopped (bare_range their spread): nothing preserved
# (kexec_s, the update's own kexec, carries both VMs'
# RAM, and KHO's work at boot grows with the number of preserved folios).
# None of them is the QEMU host's first kexec after its cold boot, which
# is 0.2-0.3 s slower whatever it carries: that one is made first, with
# nothing running (cold_s).
# ratio = median blackout / bare_s (goal: 1.10 at most). own_ms is kvmlu's own
# part of the blackout: prepare-update's paused part and the restore up
# to the first guest instruction; the rest of rest_s is the harness's
# shell between the steps (fork and exec are slow under TCG).
#
# All times are host-side stamps of serial lines (one clock for both
# kernels), except the per-step figures the VMM reports itself. The
# blackout's two ends are the VMM's own: paused_at_ns (prepare-update's
# reply) and resumed_at_ns (update-status after the restore), each a
# CLOCK_REALTIME of its kernel, put on the host's clock by a console line
# that carries that kernel's CLOCK_REALTIME (bash's $EPOCHREALTIME)
# shortly before the pause and after the resume. The new kernel's
# CLOCK_REALTIME starts from the RTC's whole seconds, so the two cannot
# be subtracted directly.
# full_ck_ms: the full memory checksum of the paused VM just before
# (what the pause used to hold); pause_ck_ms: the part of the checksum
# prepare-update took in the pause (chunks written since its last round);
# capture (state capture with pause_ck_ms), preserve (PRESERVE_FD of the
# state memfd, in the pause), preserve_ram (of the RAM files, while
# running: the kernel pins every page), retrieve (RETRIEVE_FD after the
# kexec: the kernel rebuilds the files from preserved pages), and the
# checksum verification after the kexec. preserve_ram and retrieve are
# the kernel-side cost, given per GiB. A twin VM of the same size is
# prepared just before the measured one and restored after it with
# --verify sync, for time to first guest instruction and time to fully
# verified, lazy against synchronous, side by side.
#
# QEMU runs TCG with nested KVM here: absolute numbers are far from
# hardware; compare columns within a row, and rows with each other.
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/harness/qemu_host.sh"
cd "$top"
work=$top/build/bench-host-update
logs=$top/build/test-logs
sizes=${KVMLU_BENCH_SIZES:-256M 1G 4G}
folios=${KVMLU_BENCH_FOLIOS:-2M 4K}
updates=${KVMLU_BENCH_UPDATES:-3}
case $updates in ''|*[!0-9]*|0) echo "KVMLU_BENCH_UPDATES: $updates is not a count of updates (1 or more)"; exit 2 ;; esac
mkdir -p "$work" "$logs"

reprint=${KVMLU_BENCH_REPRINT:-} # 1: the tables again from the last run's logs, no QEMU (same KVMLU_BENCH_* as that run)
if [ -z "$reprint" ]; then
	if [ ! -f build/kernel/bzImage ]; then
		echo "bench_host_update_vm: SKIP: no host kernel in build/kernel (make kernel)"
		exit 0
	fi
	for f in build/bin/kvmlu-vmm build/bin/kvmlu-ctl build/guest/witness.bin; do
		[ -e "$f" ] || { echo "bench_host_update_vm: SKIP: $f not built"; exit 0; }
	done
	tests/harness/mkinitramfs.sh "$work/initramfs.cpio" build/kernel/bzImage \
		2>"$logs/bench-host-update-initramfs.log" || {
		cat "$logs/bench-host-update-initramfs.log"; exit 1; }
fi
# The bench's script for the QEMU host: a second cpio archive appended to
# the harness's (the kernel unpacks concatenated archives).
root=$work/extra
rm -rf "$root"
mkdir -p "$root/cases" "$root/harness"
cp tests/harness/cases/vm_common.inc "$root/harness/vm_common.sh"
cat >"$root/cases/bench_vm.sh" <<'EOF'
. /harness/vm_common.sh
MEM=$(sed -n 's/.*kvmlu\.bench_mem=\([^ ]*\).*/\1/p' /proc/cmdline)
# prepare-update of a 4 GiB guest outlasts vm_ctl's 120 s here: its
# PRESERVE_FD of the RAM (while the guest runs) first migrates every page
# that sits in KHO's scratch CMA, about 30 s per GiB under TCG (seen
# 2026-12-04: the 4 GiB run failed with "no reply within 120.0 s").
# It waits as an agent with timeouts.prepare_ms 900000 would, and asks
# for the hashing-while-running budget that agent sends (half of it).
prepare_long() { # prepare_long N: prepare-update, waiting up to 15 minutes
	$VM_CTL -t 900 "$VM_RUN_DIR/$1.sock" '{"cmd":"prepare-update","args":{"running_hash_ms":450000}}'
}
# The same for the restore and the verdict after the kexec (vm_common's wait 300 s).
vm_wait_restored() { # vm_wait_restored N: vCPUs running again (0), or the VMM gone (1)
	_i=0
	while [ $_i -lt 18000 ]; do
		if grep -q "resumed from session" "/tmp/$1.vmm" 2>/dev/null; then
			harness_log "$1 resumed: $(grep "resumed from session" "/tmp/$1.vmm")"
			return 0
		fi
		kill -0 "$(cat "/tmp/$1.pid")" 2>/dev/null || return 1
		usleep 100000
		_i=$((_i + 1))
	done
	return 1
}
rt_line() { # rt_line WHAT: a console line with this kernel's CLOCK_REALTIME, read just before it is written
	/usr/bin/bash -c 'echo "KVMLU-HARNESS: bench realtime '"$1"' $EPOCHREALTIME"'
}
vm_wait_verified() { # vm_wait_verified N: update-status once verification is no longer running
	_i=0
	while :; do
		_st=$(vm_ctl "$1" update-status)
		echo "$_st" | grep -q '"verification":"running"' || break
		[ $_i -lt 3600 ] || fail "$1: memory still being verified after 1800 s: $_st"
		usleep 500000
		_i=$((_i + 1))
	done
	echo "$_st"
}
# A first kexec before anything else: the QEMU host's first kexec after
# its cold boot is 0.2-0.3 s slower than later ones whatever it carries
# (QEMU first touching the memory the next kernel lands in), and the
# update's kexec is to be compared with bare ones on equal terms. Its
# time is the cold_s column.
stage1() {
	vm_need_binaries
	harness_log "bench: a first kexec, with nothing running"
	vm_kexec_load_next
	kexec_loaded_stage
}
UPDATES=$(sed -n 's/.*kvmlu\.bench_updates=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$UPDATES" ] || UPDATES=3
# update_kexec U: host update U: the next kernel loaded before the pause
# (as the agent does in preflight), so the blackout holds only
# prepare-update, the kexec itself and the restore; the twin prepared
# first, so that its prepare is no part of bench's blackout.
update_kexec() {
	vm_kexec_load_next
	r=$(prepare_long benchs)
	echo "$r" | grep -q '"ok":true' || fail "benchs: prepare-update refused: $r"
	rt_line "pause$1"
	harness_log "bench pausing: prepare-update $1"
	r=$(prepare_long bench)
	# From here to the kexec is blackout: shell builtins only, no fork
	# (harness_log forks cut), as an agent would go straight on.
	echo "KVMLU-HARNESS: bench prepared: $r"
	case $r in *'"ok":true'*) ;; *) fail "prepare-update refused: $r" ;; esac
	echo "KVMLU-HARNESS: kexec -e: stage $HARNESS_STAGE -> $((HARNESS_STAGE + 1))"
	kexec -e
	fail "kexec -e returned"
}
stage2() {
	vm_need_binaries
	vm_start bench "$MEM" 1
	vm_start benchs "$MEM" 1
	# The witness fills its RAM at boot; its second tick comes after that.
	vm_wait_tick bench 1 3000 || fail "no second tick"
	vm_wait_tick benchs 1 3000 || fail "benchs: no second tick"
	harness_log "bench shmem: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled), ShmemHugePages $(sed -n 's/^ShmemHugePages: *\([0-9]*\) kB/\1/p' /proc/meminfo) kB"
	# Before: the full checksum a pause used to hold, of this VM, this run.
	vm_ctl bench pause >/dev/null
	harness_log "bench full checksum: $(vm_ctl bench checksum)"
	vm_ctl bench resume >/dev/null
	update_kexec 1
}
# After host update U (stage U + 2): both VMs back, then the next update,
# or after the last one three bare kexecs of the same QEMU host.
after_update() {
	vm_need_binaries
	u=$((HARNESS_STAGE - 2))
	vm_restore bench
	vm_wait_restored bench || fail "restore $u: $(tail -n 1 /tmp/bench.vmm)"
	rt_line "resume$u"
	st=$(vm_wait_verified bench)
	harness_log "bench status: $st"
	echo "$st" | grep -q '"memory_verified":true' || fail "memory not verified after update $u: $st"
	# Then its twin, the synchronous way, once nothing else verifies.
	vm_restore benchs --verify sync
	vm_wait_restored benchs || fail "benchs restore: $(tail -n 1 /tmp/benchs.vmm)"
	st=$(vm_wait_verified benchs)
	harness_log "benchs status: $st"
	echo "$st" | grep -q '"memory_verified":true' || fail "benchs: memory not verified: $st"
	[ "$u" -lt "$UPDATES" ] && update_kexec $((u + 1))
	# No VM, nothing preserved: the update's kexec carried both VMs' RAM,
	# and KHO's work at boot grows with the number of preserved folios;
	# these are the kexec alone.
	killall kvmlu-vmm
	_i=0
	while pidof kvmlu-vmm >/dev/null && [ $_i -lt 300 ]; do usleep 100000; _i=$((_i + 1)); done
	pidof kvmlu-vmm >/dev/null && fail "the VMMs did not stop"
	harness_log "bench: both VMs stopped, now three bare kexecs"
	vm_kexec_load_next
	kexec_loaded_stage
}
# Three bare kexecs, for their median: one kexec of a TCG host varies by
# a second from one to the next.
bare_kexec() { vm_kexec_load_next; kexec_loaded_stage; }
_s=3
while [ $_s -le $((UPDATES + 2)) ]; do eval "stage$_s() { after_update; }"; _s=$((_s + 1)); done
eval "stage$((UPDATES + 3))() { bare_kexec; }"
eval "stage$((UPDATES + 4))() { bare_kexec; }"
eval "stage$((UPDATES + 5))() { pass \"bench \$MEM, \$UPDATES updates\"; }"
EOF
[ -n "$reprint" ] ||
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >>"$work/initramfs.cpio"

mib() { # mib 256M|1G|4G -> MiB
	case $1 in *G) echo $(( ${1%G} * 1024 )) ;; *M) echo "${1%M}" ;; *) echo 0 ;; esac
}
stamp_of() { # stamp_of LOG PATTERN: host seconds of the first matching line
	grep -a -m 1 -F "$2" "$1" | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'
}
host_time_of() { # host_time_of LOG STAGE NS: a CLOCK_REALTIME of that stage's kernel on the host's clock
	local line
	line=$(grep -a -m 1 -F "bench realtime $2 " "$1")
	awk -v h="$(stamp_of "$1" "bench realtime $2 ")" -v rt="${line##* }" -v ns="$3" \
		'BEGIN { printf "%.6f", h + (ns / 1e9 - rt) }'
}
kexec_phases() { awk -f "$top/tests/bench/kexec_phases.awk" "$1"; } # see there
num_of() { # num_of TEXT KEY
	sed -n "s/.*\"$2\":\\([-0-9.]*\\).*/\\1/p" <<<"$1" | head -n 1
}
ms_of() { # ms_of TEXT KEY: the integer ns under KEY (the replies' durations) in ms
	num_of "$1" "$2" | awk '/^[0-9]+$/ { printf "%.3f\n", $1 / 1e6 }'
}

printf '%-6s %5s %8s %3s %10s %11s %7s %6s %7s %10s %10s %7s %10s %11s %10s %10s %11s %11s %11s %11s %5s %12s %12s %12s %12s %12s %7s %9s %7s\n' guest folio huge_MiB n blackout_s bo_range \
	bare_s ratio ratio_k kexec_s rest_s own_ms full_ck_ms pause_ck_ms capture_ms preserve_ms pres_ram/GiB retrieve_ms \
	retr_ms/GiB verify_ms mode first_insn_ms verified_ms sync_1st_ms sync_verif_ms bare_range jump_s bare_jump cold_s
steps= updlines=
for size in $sizes; do
for folio in $folios; do
	case $folio in
	2M) thp=transparent_hugepage_shmem=advise ;;
	4K) thp= ;;
	*) echo "KVMLU_BENCH_FOLIOS: $folio is neither 2M nor 4K"; exit 2 ;;
	esac
	m=$(mib "$size")
	# Two VMs of this size (the twin), 2 GiB for the rest, and a quarter
	# more: KHO's scratch (about 18% of the QEMU host's RAM, CMA after
	# boot) cannot hold what PRESERVE_FD pins, which migrates out of it.
	# With 2 x 4 GiB + 2 GiB = 10 GiB the 4 GiB run was OOM-killed in
	# prepare-update (2026-12-04: free_cma 1.3 GB, everything else pinned).
	qmem=$(( (2 * m + 2048) * 5 / 4 ))M
	log=$logs/bench-host-update-$size-$folio.log
	if [ -z "$reprint" ]; then
		start=${EPOCHREALTIME/./}
		timeout -k 5 $((2400 + 1200 * updates)) "$QEMU_HOST_BIN" -accel "$QEMU_HOST_ACCEL" -cpu "$QEMU_HOST_CPU" -m "$qmem" -smp "$QEMU_HOST_SMP" \
			-nographic -nodefaults -serial stdio -no-reboot \
			-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
			-kernel build/kernel/bzImage -initrd "$work/initramfs.cpio" \
			-append "console=ttyS0 kho=on liveupdate=on panic=-1 $QEMU_HOST_TSC_APPEND kvmlu.case=bench_vm kvmlu.stage=1 kvmlu.bench_mem=$size kvmlu.bench_updates=$updates $thp" \
			</dev/null 2>&1 | while IFS= read -r line; do
				now=${EPOCHREALTIME/./}; now=$((now - start))
				printf '[%4d.%06d] %s\n' $((now / 1000000)) $((now % 1000000)) "${line%$'\r'}"
			done >"$log"
		rc=${PIPESTATUS[0]}
	else
		rc=1
	fi
	if [ "$rc" != 1 ]; then
		echo "$size $folio: run failed (QEMU exit $rc), log $log"
		grep -a 'RESULT' "$log" | tail -n 1
		continue
	fi
	phases=$(kexec_phases "$log")
	cold=$(awk '$1 == 2 { print $2 }' <<<"$phases")
	# bare_col N: column N of kexec_phases for the three bare kexecs, sorted
	bare_col() { awk -v u="$updates" -v c="$1" '$1 > u + 2 && $1 <= u + 5 { print $c }' <<<"$phases" | sort -n; }
	bares=$(bare_col 2)
	bare=$(sed -n 2p <<<"$bares")
	bare_range=$(head -n 1 <<<"$bares")-$(tail -n 1 <<<"$bares")
	bare_jump=$(bare_col 3 | sed -n 2p)
	bare_unpack=$(bare_col 4 | sed -n 2p)
	# Each host update: "U BLACKOUT KEXEC JUMP UNPACK", the blackout from the
	# VMM's own pause and resume on the host's clock (see the top).
	per=
	for u in $(seq 1 "$updates"); do
		prep=$(grep -a 'bench prepared' "$log" | sed -n "${u}p")
		st=$(grep -a 'bench status' "$log" | sed -n "${u}p")
		p=$(host_time_of "$log" "pause$u" "$(num_of "$prep" paused_at_ns)")
		r=$(host_time_of "$log" "resume$u" "$(num_of "$st" resumed_at_ns)")
		per+=$(awk -v u="$u" -v p="$p" -v r="$r" -v s=$((u + 2)) '$1 == s { printf "%d %.3f %.3f %.3f %.3f", u, r - p, $2, $3, $4 }' <<<"$phases")$'\n'
	done
	if [ "$(grep -c . <<<"$per")" != "$updates" ]; then
		echo "$size $folio: $updates updates asked, not all of them in the log $log"
		continue
	fi
	# The update whose blackout is the median gives the row's step figures.
	by_blackout=$(sort -k2,2n <<<"$per" | grep .)
	med=$(sed -n "$(( (updates + 1) / 2 ))p" <<<"$by_blackout")
	mu=${med%% *}
	bo_range=$(awk '{ v[NR] = $2 } END { printf "%.2f-%.2f", v[1], v[NR] }' <<<"$by_blackout")
	prep=$(grep -a 'bench prepared' "$log" | sed -n "${mu}p")
	st=$(grep -a 'bench status' "$log" | sed -n "${mu}p")
	sst=$(grep -a 'benchs status' "$log" | sed -n "${mu}p")
	cap=$(ms_of "$prep" capture_ns)
	pres=$(ms_of "$prep" preserve_ns)
	presram=$(ms_of "$prep" preserve_ram_ns)
	pck=$(ms_of "$prep" checksum_paused_ns)
	ppaused=$(ms_of "$prep" prepare_paused_ns)
	fck=$(ms_of "$(grep -a -m 1 'bench full checksum' "$log")" checksum_ns)
	retr=$(ms_of "$st" retrieve_ns)
	ver=$(ms_of "$st" checksum_ns)
	mode=$(sed -n 's/.*"verify_mode":"\([a-z]*\)".*/\1/p' <<<"$st" | head -n 1)
	first=$(ms_of "$st" restore_ns)
	verif=$(ms_of "$st" to_verified_ns)
	hugek=$(grep -a -m 1 'bench shmem:' "$log" | sed -n 's/.*ShmemHugePages \([0-9]*\) kB.*/\1/p')
	# kvmlu's own part, step by step: the paused part of prepare-update
	# and the restore up to the first guest instruction.
	steps+="$size $folio $ppaused $(ms_of "$prep" capture_vm_ns) $pck"
	steps+=" $pres $first $retr $(ms_of "$st" vm_create_ns) $(ms_of "$st" verify_start_ns)"
	steps+=" $(ms_of "$st" state_restore_ns)"$'\n'
	updlines+=$(awk -v s="$size" -v f="$folio" -v b="${bare:-0}" -v bu="${bare_unpack:--1}" 'NF { printf "%-6s %5s %3d %10.2f %8.2f %8.3f %9.3f %11.3f %7.3f %8.3f\n", s, f, $1, $2, $3, $4, $5, bu, (b > 0 ? $2 / b : 0), ($3 > 0 ? $2 / $3 : 0) }' <<<"$per")$'\n'
	sfirst=$(ms_of "$sst" restore_ns)
	sverif=$(ms_of "$sst" to_verified_ns)
	read -r _ bo kx jump _ <<<"$med"
	awk -v s="$size" -v fo="$folio" -v hk="${hugek:-0}" -v m="$m" -v bo="$bo" -v kx="$kx" -v c="$cap" \
		-v pr="$pres" -v prr="$presram" -v rt="$retr" -v v="$ver" -v n="$updates" -v bor="$bo_range" \
		-v fck="$fck" -v pck="$pck" -v mode="${mode:-?}" -v f1="$first" -v fv="$verif" \
		-v s1="$sfirst" -v sv="$sverif" -v bare="${bare:-0}" -v br="${bare_range:-?}" -v pp="$ppaused" \
		-v jmp="${jump:-0}" -v bj="${bare_jump:-0}" -v cold="${cold:-0}" 'BEGIN {
		g = m / 1024
		printf "%-6s %5s %8.0f %3d %10.2f %11s %7.2f %6.3f %7.3f %10.2f %10.2f %7.0f %10.0f %11.1f %10.0f %10.1f %11.1f %11.1f %11.1f %11.0f %5s %12.0f %12.0f %12.0f %12.0f %12s %7.3f %9.3f %7.2f\n",
			s, fo, hk / 1024, n, bo, bor, bare, (bare > 0 ? bo / bare : 0), (kx > 0 ? bo / kx : 0), kx, bo - kx, pp + f1, fck, pck, c, pr, prr / g, rt, rt / g, v,
			mode, f1, fv, s1, sv, br, jmp, bj, cold }'
done
done
echo
echo "each host update (the row above shows the median one):"
printf '%s' "$updlines" | awk 'BEGIN { printf "%-6s %5s %3s %10s %8s %8s %9s %11s %7s %8s\n", "guest", "folio", "u", "blackout_s", "kexec_s", "jump_s", "unpack_s", "bare_unpack", "ratio", "ratio_k" }
	NF { print }'
echo
echo "kvmlu's own part (own_ms) by step, ms: prepare-update's paused part (prep_paused: capture_vm,"
echo "the checksum's last round, the state memfd's preserve) and the restore"
echo "to the first guest instruction (restore: retrieve, vm_create, verify_start, state_restore):"
printf '%s' "$steps" | awk 'BEGIN { f = "%-6s %5s %11s %10s %9s %9s %9s %8s %9s %12s %10s\n"
	printf f, "guest", "folio", "prep_paused", "capture_vm", "pause_ck", "preserve",
		"restore", "retrieve", "vm_create", "verify_start", "state_rest" }
	{ printf f, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }'
echo
echo "n: host updates of the same two VMs one after another in one QEMU host (KVMLU_BENCH_UPDATES);"
echo "blackout_s: their median, pause -> vCPUs running after the kexec (the VMM's own paused_at_ns and"
echo "  resumed_at_ns; bo_range: min-max); the row's step figures are that median update's;"
echo "bare_s: median of 3 kexecs of the same QEMU host after the updates, no VM and nothing preserved"
echo "  (bare_range: their min-max); ratio = blackout_s / bare_s; kexec_s: the median update's kexec -e"
echo "  -> new userspace, which carries both VMs' RAM; ratio_k = blackout_s / kexec_s;"
echo "own_ms: kvmlu's own part of rest_s (prepare-update's paused part + first_insn_ms), the rest is shell glue;"
echo "rest_s = blackout - kexec: prepare-update's paused part (capture incl. the checksum's last round,"
echo "  preserve of the state) and the restore (retrieve, checksum verification, state); the next kernel"
echo "  is loaded before the pause. full_ck_ms / pause_ck_ms: the checksum in the pause before / after"
echo "  hashing while running (docs/live-update-memory.md, lever 2), same VM, same run."
echo "mode: how the VM was verified after the kexec (lazy: the guest resumed first, docs/live-update-memory.md,"
echo "  lever 3); first_insn_ms / verified_ms: from the restore's start to the vCPUs running / to all RAM"
echo "  verified (its verify_ms is how long verifying took); sync_1st_ms / sync_verif_ms: the same for a twin VM"
echo "  of the same size in the same run, restored with --verify sync after the first was verified."
echo "folio: guest RAM in 2 MiB folios (shmem_enabled=advise, configs/kvmlu-thp.conf) or 4 KiB pages;"
echo "  huge_MiB: ShmemHugePages of both VMs before prepare-update."
echo "unpack_s / bare_unpack: the new kernel unpacking its initramfs (kernel clock; /init waits for it), after"
echo "  that update's kexec / the bare ones' (median);"
echo "jump_s / bare_jump: the update's kexec / the bare ones' (median) from kexec -e to the new kernel's"
echo "  clock zero (shutdown, jump, purgatory, decompression, earliest setup); cold_s: the QEMU host's first"
echo "  kexec after its cold boot, with nothing running, made before the VMs start (not part of bare_s)."
echo "logs: $logs/bench-host-update-<size>-<folio>.log"
exit
}
