#!/bin/bash
# `make bench`: step 7 of docs/libvirt-ram-in-place.md. A libvirt domain
# (libvirtd 9.0 in the QEMU host, QEMU 7.2 through kvmlu-qemu, the Linux
# guest writing acked records) through `kvmlu host-update`, a real kexec
# of the QEMU host, with its RAM kept in place (libvirt_ram in-place) and,
# in the same bench run, with today's managed save (RAM to disk: the QEMU
# host's tmpfs), at each RAM size of KVMLU_BENCH_LIBVIRT_SIZES (default
# "512M 2G"; modes KVMLU_BENCH_LIBVIRT_MODES, default "in-place save").
# Each is one run of the opt-in case harness/agent_libvirt_ram_in_place in
# its bench mode (kvmlu.lv_bench=1, kvmlu.lv_ram_mib, kvmlu.lv_ram_mode on
# the command line; QEMU host memory max(4 GiB, 3 x RAM + 2 GiB), by
# KVMLU_HARNESS_MEM). One row per run, times in seconds on the host's clock
# (the serial log's stamps; the agent's phase lines, each kernel's
# CLOCK_REALTIME, put on it by the case's anchor line in that kernel):
#   blackout  the agent's `suspend` (right before virDomainSuspend) to its
#             `running` (virDomainResume, or virDomainCreate from the managed
#             save, returned) after the kexec, less the seconds the case
#             held the agent stopped at the kexec to copy what a disk keeps
#             (stop_s: from the agent's stop line to the case's SIGCONT)
#   bare      the bare kexec of the same run: "kexec -e: stage 1 -> 2" to
#             "userspace stage 2" (the QEMU host's first kexec, nothing
#             preserved), as bench_virtio_io and kexec_in_row take it
#   ratio     blackout / bare
#   image_B   the managed-save image (in-place: device state only)
# Where the blackout went (their sum is the blackout):
#   save      virDomainSuspend + virDomainManagedSave, less kill
#   kill      inside the managed save: libvirt's qemuProcessKill of the
#             saved QEMU (its debug log's stamp) -> the save returned: its
#             wait for that QEMU to die and its cleanup. libvirt counts a
#             zombie as alive; the case runs libvirtd under the harness's
#             subreaper, which reaps it at once as systemd does (without
#             it libvirt waited its full 40 s on a zombie of PID 1)
#   sum1      the RAM's checksum at the pause (in-place)
#   pre       the rest up to the kexec (image to a sealed memfd, PRESERVE_FD
#             of it, the journal, the agent's other steps)
#   reboot    SIGCONT -> "kexec_core: Starting new kernel"
#   kexec     "Starting new kernel" -> the next kernel's userspace
#   boot      that userspace -> libvirtd's exec: the case reads back what a
#             disk keeps (managed save: the whole image, from the virtio
#             disk), kvmlu-agent --restore, the agent daemon's start
#   libvirtd  libvirtd's exec -> `virsh list` answering
#   wait      -> the agent's first step for the domain (it polls libvirtd;
#             negative when it reached libvirtd before the case's own
#             `virsh list` returned, which libvirtd's column then holds)
#   retr      RETRIEVE_SESSION/RETRIEVE_FD of the RAM and the image (in-place)
#   sum2      the RAM's checksum after the kexec (in-place)
#   misc      the image written back, the domain looked up or defined
#   qemu      QEMU's start, the device-state load (managed save: and the
#             RAM's), resume; a line under the row splits it by libvirt's
#             debug log (lines the case prints): launch (virDomainCreate to
#             QEMU's exec), monitor (to QEMU's monitor answering: QEMU's
#             own start, kvmlu-qemu's and, in place, the agent's work on
#             kvmlu's QMP socket), cpu (libvirt's guest CPU checks over QMP,
#             some 400 commands), load (migrate-incoming to libvirt's
#             `cont`), resume (to the agent's `running`)
# jrnl_s: the journal's downtime_ns less stop_s, as a check (two kernels'
# CLOCK_REALTIME, the second from the RTC's whole seconds; in-place it
# starts before the RAM's PRESERVE_FD, which runs while the guest runs).
# The headline: in-place / managed-save blackout per size. No thresholds
# (the case judges the domain's identity and records).
# KVMLU_BENCH_LIBVIRT_LOGS="SIZE:MODE:LOG ..." prints the rows of earlier
# runs' case logs and runs nothing. KVMLU_HARNESS_NO_BUILD=1: build/kernel
# as it is.
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
logs=build/test-logs
case_name=agent_libvirt_ram_in_place
case_log=$logs/harness-$case_name.log

mib() { # mib 512M|2G -> MiB
	case $1 in *G) echo $((${1%G} * 1024)) ;; *M) echo "${1%M}" ;; *) echo 0 ;; esac
}

# row SIZE MODE LOG: one line of figures (or a line saying why not)
row() {
	awk -v ram="$1" -v mode="$2" '
	function host(s) { sub(/^\[ */, "", s); sub(/\].*/, "", s); return s + 0 }
	function wall(s) { sub(/.*wall_ns=/, "", s); return s / 1e9 }
	function tod(s) { # seconds of the day of a libvirt log stamp "YYYY-MM-DD HH:MM:SS.mmm+0000:"
		if (!match(s, /[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+\+0000:/)) return 0
		split(substr(s, RSTART, RLENGTH - 6), t, ":")
		return t[1] * 3600 + t[2] * 60 + t[3]
	}
	/KVMLU-HARNESS: lvbench libvirt2.*qemuProcessKill:/ { kt = tod($0) }
	/KVMLU-HARNESS: lvbench libvirt3 .*running with pid=/ { ql = tod($0) }
	/KVMLU-HARNESS: lvbench libvirt3 .*qemuMonitorGetChardevInfo returned/ { qm = tod($0) }
	/KVMLU-HARNESS: lvbench libvirt3 .*Detecting IOThread PIDs/ { qi = tod($0) }
	/KVMLU-HARNESS: lvbench libvirt3 .*QEMU_MONITOR_SEND_MSG.*"execute":"cont"/ { qc = tod($0) }
	/KVMLU-HARNESS: \[[0-9.]*\] kexec -e: stage 1 -> 2/ { k1 = host($0) }
	/KVMLU-HARNESS: \[[0-9.]*\] userspace stage 2 / { u2 = host($0) }
	/KVMLU-HARNESS: lvbench stop / { stop = $NF + 0 }
	/KVMLU-HARNESS: lvbench image_bytes=/ { img = $0; sub(/.*image_bytes=/, "", img); img += 0 }
	/KVMLU-HARNESS: lvbench anchor stage2/ { h2 = host($0) }
	/KVMLU-HARNESS: lvbench rt stage2 / { r2 = ($(NF - 1) + $NF) / 2 }
	/KVMLU-HARNESS: lvbench anchor stage3/ { h3 = host($0) }
	/KVMLU-HARNESS: lvbench rt stage3 / { r3 = ($(NF - 1) + $NF) / 2 }
	/KVMLU-HARNESS: lvbench cont/ { cont = host($0) }
	/kexec_core: Starting new kernel/ { if (cont) kx = host($0) }
	/KVMLU-HARNESS: \[[0-9.]*\] userspace stage 3 / { u3 = host($0) }
	/KVMLU-HARNESS: lvbench libvirtd exec/ { lx = host($0) }
	/KVMLU-HARNESS: lvbench libvirtd up/ { lu = host($0) }
	/KVMLU-HARNESS: lvbench journal downtime_ns=/ { j = $0; sub(/.*downtime_ns=/, "", j); sub(/ .*/, "", j); jd = j / 1e9 }
	/KVMLU-HARNESS: lvbench agent2 .*: phase / { p = $0; sub(/.*: phase /, "", p); sub(/ .*/, "", p); a2[p] = wall($0) }
	/KVMLU-HARNESS: lvbench agent3 .*: phase / { p = $0; sub(/.*: phase /, "", p); sub(/ .*/, "", p); a3[p] = wall($0) }
	function o2(p) { return a2[p] - r2 + h2 }
	function o3(p) { return a3[p] - r3 + h3 }
	function f(x) { return sprintf("%.2f", x) }
	END {
		if (!k1 || !u2 || !stop || !h2 || !h3 || !cont || !kx || !u3 || !lx || !lu ||
		    !("suspend" in a2) || !("saved" in a2) || !("start" in a3) || !("running" in a3)) {
			printf "%6s %-8s (no figures: the case did not get that far)\n", ram, mode
			exit
		}
		inplace = ("hashed" in a2)
		susp = o2("suspend"); saved = o2("saved"); tstop = stop - r2 + h2
		run = o3("running")
		bo = (tstop - susp) + (run - cont)
		bare = u2 - k1
		sum1 = inplace ? o2("hashed") - saved : 0
		pre = tstop - (inplace ? o2("hashed") : saved)
		first = inplace ? o3("retrieve") : o3("start")
		retr = inplace ? o3("retrieved") - o3("retrieve") : 0
		sum2 = inplace ? o3("hashed") - o3("retrieved") : 0
		misc = inplace ? o3("start") - o3("hashed") : 0
		stop_s = cont - tstop
		# Both on the old kernel CLOCK_REALTIME (libvirt stamps in UTC).
		kill = a2["saved"] - int(a2["saved"] / 86400) * 86400 - kt
		if (!kt || kill < 0) kill = 0
		printf "%6s %-8s %10d %8s %6s %6s %6s %6s %6s %6s %6s %6s %6s %8s %6s %6s %6s %6s %6s %6s %6s\n",
			ram, mode, img, f(bo), f(bare), f(bo / bare), f(saved - susp - kill), kill ? f(kill) : "-",
			inplace ? f(sum1) : "-", f(pre), f(kx - cont), f(u3 - kx), f(lx - u3), f(lu - lx),
			f(first - lu), inplace ? f(retr) : "-", inplace ? f(sum2) : "-",
			inplace ? f(misc) : "-", f(run - o3("start")), f(stop_s), jd ? f(jd - stop_s) : "-"
		# The qemu column split, on the new kernel CLOCK_REALTIME (libvirt stamps in UTC).
		qs = a3["start"] - int(a3["start"] / 86400) * 86400
		qr = a3["running"] - int(a3["running"] / 86400) * 86400
		if (ql && qm && qi && qc)
			printf "%6s %-8s qemu: launch %s, monitor %s, cpu %s, load %s, resume %s\n", "", "",
				f(ql - qs), f(qm - ql), f(qi - qm), f(qc - qi), f(qr - qc)
	}' "$3"
}
header() {
	printf "%6s %-8s %10s %8s %6s %6s %6s %6s %6s %6s %6s %6s %6s %8s %6s %6s %6s %6s %6s %6s %6s\n" ram mode \
		image_B blackout bare ratio save kill sum1 pre reboot kexec boot libvirtd wait retr sum2 misc \
		qemu stop_s jrnl_s
}
# headline ROWS...: in-place / save blackout per size
headline() {
	printf "%s\n" "$@" | awk '$2 == "in-place" && $4 ~ /^[0-9.]+$/ { ip[$1] = $4; ipk[$1] = $4 - $8; o[++n] = $1 }
		$2 == "save" && $4 ~ /^[0-9.]+$/ { sv[$1] = $4; svk[$1] = $4 - $8 }
		END { for (i = 1; i <= n; i++) if (sv[o[i]]) {
			r = o[i]
			printf "headline: %s in-place / managed-save blackout = %.2f / %.2f s = %.2f", r, ip[r], sv[r], ip[r] / sv[r]
			printf " (less kill: %.2f / %.2f s = %.2f)\n", ipk[r], svk[r], ipk[r] / svk[r]
		} }'
}

rows=()
rc=0
if [ -n "${KVMLU_BENCH_LIBVIRT_LOGS:-}" ]; then
	for spec in $KVMLU_BENCH_LIBVIRT_LOGS; do
		IFS=: read -r size mode log <<<"$spec"
		rows+=("$(row "$size" "$mode" "$log")")
	done
else
	echo "libvirt domain through kvmlu host-update: RAM in place vs managed save (harness/$case_name, bench mode)"
	for size in ${KVMLU_BENCH_LIBVIRT_SIZES:-512M 2G}; do
		m=$(mib "$size")
		[ "$m" -gt 0 ] || { echo "KVMLU_BENCH_LIBVIRT_SIZES: $size is not NM or NG"; exit 2; }
		mem=$((3 * m + 2048))
		[ $mem -ge 4096 ] || mem=4096
		for mode in ${KVMLU_BENCH_LIBVIRT_MODES:-in-place save}; do
			out=$(KVMLU_HARNESS_MEM=${mem}M \
				KVMLU_HARNESS_APPEND="${KVMLU_HARNESS_APPEND:-} kvmlu.lv_bench=1 kvmlu.lv_ram_mib=$m kvmlu.lv_ram_mode=$mode" \
				KVMLU_TEST_FILTER="^harness/$case_name\$" tests/harness/check.sh 2>&1)
			grep -E "^(PASS|FAIL|SKIP): harness/$case_name" <<<"$out" | sed "s/^/  $size $mode: /"
			grep -q "^PASS: harness/$case_name\$" <<<"$out" || rc=1
			cp "$case_log" "$logs/bench-libvirt-ram-$size-$mode.log" 2>/dev/null
			rows+=("$(row "$size" "$mode" "$logs/bench-libvirt-ram-$size-$mode.log")")
		done
	done
fi
header
printf "%s\n" "${rows[@]}"
headline "${rows[@]}"
echo "seconds on the host's clock; blackout = suspend -> running, the case's stop at the kexec left out (stop_s);"
echo "bare = the same run's kexec -e -> next userspace; ratio = blackout / bare; sum1/sum2: the RAM's checksum"
echo "at the pause and after the kexec (O(RAM): ~120 MB/s per end under TCG, R2); kill: libvirt's wait for the saved"
echo "QEMU to die inside the managed save; jrnl_s: the journal's downtime - stop_s."
exit $rc
}
