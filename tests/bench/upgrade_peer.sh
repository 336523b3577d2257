#!/bin/sh
# The live-upgrade bench's side-by-side part (bench_upgrade.sh): per guest
# size, kvmlu's live upgrade (`upgrade`: a new kvmlu-vmm process on the
# same memfd RAM) next to QEMU's own local live update of the same guest
# on the same KVM: guest RAM in a shared file both QEMU processes map
# (memory-backend-file on /dev/shm, share=on), migration capability
# x-ignore-shared on both sides, a new QEMU process started with
# `-incoming unix:...`, `migrate` over that UNIX socket. kvmlu's figure
# is the blackout its old process reports (pause -> resumed in the new
# process); QEMU's is the downtime `query-migrate` reports on the source
# (vCPUs stopped -> migration completed there; the destination's last
# loading and its vm_start are not in it, so it favours QEMU a little).
#
# The guest on both sides: the Linux guest of the tests (Debian's cloud
# kernel and tests/guest/linux/init, PEER_CPUS vCPUs). The witness cannot be the
# guest here: it is a flat payload that kvmlu-vmm starts in long mode
# with its boot info (include/kvmlu/payload_abi.h), no firmware, all
# vCPUs at once; QEMU boots multiboot, PVH or Linux images only.
#
# POSIX sh (busybox in the QEMU host, bash natively). Prints one line
#   PEER-RESULT size=S kvmlu_n= kvmlu_med= kvmlu_max= qemu_n= qemu_med= qemu_max= qemu_total_med= ratio=
# per size, or PEER-FAIL size=S side=kvmlu|qemu reason=..., and
# PEER-INFO lines along the way on stderr. Settings (environment):
#   PEER_SIZES ("256M 1G"), PEER_ROUNDS (5), PEER_CPUS (2: the guest's
#   vCPUs, the same on both sides), PEER_WORK (scratch folder),
#   PEER_VMM, PEER_CTL, PEER_QMP (qmp-call), PEER_QEMU, PEER_ACCEL (kvm),
#   PEER_CPU (host), PEER_TSC_KHZ (the host's refined TSC rate), PEER_SIDES ("kvmlu qemu"),
#   PEER_KERNEL, PEER_INITRD, PEER_SHM (/dev/shm), PEER_BOOT_S (600: how
#   long a guest may take to reach its first status line).
sizes=${PEER_SIZES:-256M 1G}
rounds=${PEER_ROUNDS:-5}
CPUS=${PEER_CPUS:-2}
case $CPUS in ''|*[!0-9]*|0) echo "PEER-FAIL size=- side=- reason=PEER_CPUS=$CPUS is not a vCPU count"; exit 2 ;; esac
W=${PEER_WORK:-/tmp/peer}
VMM=${PEER_VMM:-kvmlu-vmm}
CTL=${PEER_CTL:-kvmlu-ctl}
QMP=${PEER_QMP:-qmp-call}
QEMU=${PEER_QEMU:-qemu-system-x86_64}
ACCEL=${PEER_ACCEL:-kvm}
CPU=${PEER_CPU:-host}
# PEER_TSC_KHZ: QEMU's vCPUs get that TSC rate (tsc-frequency). Not set
# by bench_upgrade.sh: QEMU 7.2 sets a rate only with TSC scaling
# (KVM_CAP_TSC_CONTROL), else refuses to start when it differs from KVM's
# default ("TSC frequency mismatch ... TSC scaling unavailable"); the
# QEMU host is kexec'd with its refined rate as the early one instead.
[ -n "${PEER_TSC_KHZ:-}" ] && CPU="$CPU,tsc-frequency=${PEER_TSC_KHZ}000"
SIDES=${PEER_SIDES:-kvmlu qemu}
KERNEL=${PEER_KERNEL:-/kvmlu/linux/vmlinuz}
INITRD=${PEER_INITRD:-/kvmlu/linux/initramfs.cpio.gz}
SHM=${PEER_SHM:-/dev/shm}
BOOT_S=${PEER_BOOT_S:-600}
APPEND="console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=1"
mkdir -p "$W"

info() { echo "PEER-INFO [$(cut -d" " -f1 /proc/uptime)] $*" >&2; }
# nap: a tenth of a second (busybox has usleep; a GNU system sleep 0.1)
if command -v usleep >/dev/null 2>&1; then nap() { usleep 100000; }; else nap() { sleep 0.1; }; fi

# stats FILE: "n median max" of the numbers in FILE, one a line.
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "0 - -"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%d %.2f %.2f\n", NR, m, v[NR] }'
}

status_count() { # status_count SERIAL: the guest's status lines so far
	_c=$(grep -ac 'KVMLU-GUEST-STATUS' "$1" 2>/dev/null)
	echo "${_c:-0}"
}

# wait_status SERIAL AFTER SECONDS PID: a status line beyond the AFTER-th
wait_status() {
	_i=0
	while [ $_i -lt $(($3 * 10)) ]; do
		[ "$(status_count "$1")" -gt "$2" ] && return 0
		[ -n "$4" ] && ! kill -0 "$4" 2>/dev/null && return 1
		nap
		_i=$((_i + 1))
	done
	return 1
}

last_status() { grep -a 'KVMLU-GUEST-STATUS' "$1" | tail -n 1 | tr -d '\r'; }
field() { echo "$1" | sed -n "s/.* $2=\([^ ]*\).*/\1/p"; }

stop_pid() { # stop_pid PID: SIGTERM, then SIGKILL after 10 s
	kill "$1" 2>/dev/null || return 0
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 100 ]; do nap; _i=$((_i + 1)); done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# kvmlu_side SIZE: boot, ROUNDS upgrades, blackouts into $W/kvmlu.ms
kvmlu_side() {
	_sock=$W/kvmlu.sock _ser=$W/kvmlu.serial
	: >"$W/kvmlu.ms"
	rm -f "$_sock" "$_ser"
	info "kvmlu $1: booting the guest"
	"$VMM" run --name peer --memory "$1" --cpus "$CPUS" \
		--kernel "$KERNEL" --initrd "$INITRD" --append "$APPEND" \
		--serial "$_ser" --control "$_sock" >"$W/kvmlu.vmm" 2>&1 &
	_pid=$!
	wait_status "$_ser" 0 "$BOOT_S" "$_pid" || {
		echo "PEER-FAIL size=$1 side=kvmlu reason=no guest status line in $BOOT_S s: $(tail -n 1 "$W/kvmlu.vmm") serial: $(tail -n 3 "$_ser" | tr -d '\r' | tr '\n' ' ')"
		stop_pid "$_pid"
		return 1
	}
	_first=$(last_status "$_ser")
	info "kvmlu $1: guest up: $_first"
	_k=1
	while [ $_k -le "$rounds" ]; do
		_n=$(status_count "$_ser")
		_r=$("$CTL" -t 180 "$_sock" '{"cmd":"upgrade","args":{"timeout_ms":120000}}')
		echo "$_r" | grep -q '"ok": *true' || {
			echo "PEER-FAIL size=$1 side=kvmlu reason=upgrade $_k: $_r"
			stop_pid "$_pid"
			return 1
		}
		_pid=$(echo "$_r" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
		_bo=$(echo "$_r" | sed -n 's/.*"blackout_ns": *\([0-9]*\).*/\1/p' |
			awk '{ printf "%.3f", $1 / 1e6 }')	# ns in the reply; ms here
		echo "$_bo" >>"$W/kvmlu.ms"
		info "kvmlu $1: upgrade $_k blackout $_bo ms, new pid $_pid"
		# The guest goes on (a status line after each upgrade).
		wait_status "$_ser" "$_n" 60 "" || {
			echo "PEER-FAIL size=$1 side=kvmlu reason=no guest status line within 60 s of upgrade $_k"
			stop_pid "$_pid"
			return 1
		}
		_k=$((_k + 1))
	done
	_last=$(last_status "$_ser")
	"$CTL" -t 10 "$_sock" '{"cmd":"shutdown"}' >/dev/null 2>&1
	stop_pid "$_pid"
	if [ "$(field "$_first" pid)" != "$(field "$_last" pid)" ] || [ "$(field "$_last" alive)" != yes ]; then
		echo "PEER-FAIL size=$1 side=kvmlu reason=guest restarted: $_first / $_last"
		return 1
	fi
	info "kvmlu $1: guest after $rounds upgrades: $_last"
}

# qemu_start N SIZE [incoming]: QEMU process number N, pid in $W/q.N.pid
qemu_start() {
	_inc=
	[ "$3" = incoming ] && _inc="-incoming unix:$W/mig.sock"
	rm -f "$W/q.$1.qmp" "$W/q.$1.serial"
	# shellcheck disable=SC2086 # _inc is two words or none
	"$QEMU" -accel "$ACCEL" -cpu "$CPU" -smp "$CPUS" -m "$2" \
		-object "memory-backend-file,id=m,size=$2,mem-path=$SHM/peer-ram,share=on" \
		-machine pc,memory-backend=m \
		-kernel "$KERNEL" -initrd "$INITRD" -append "$APPEND" \
		-nodefaults -no-user-config -display none \
		-serial "file:$W/q.$1.serial" \
		-qmp "unix:$W/q.$1.qmp,server=on,wait=off" $_inc \
		>"$W/q.$1.log" 2>&1 &
	echo $! >"$W/q.$1.pid"
}

qmp() { # qmp N JSON...: commands to QEMU process N
	_q=$1
	shift
	"$QMP" -t 60 "$W/q.$_q.qmp" "$@"
}

IGNORE_SHARED='{"execute":"migrate-set-capabilities","arguments":{"capabilities":[{"capability":"x-ignore-shared","state":true}]}}'

# qemu_side SIZE: boot, ROUNDS local migrations, downtimes into $W/qemu.ms
qemu_side() {
	: >"$W/qemu.ms"
	: >"$W/qemu.total"
	rm -f "$SHM/peer-ram"
	info "qemu $1: booting the guest"
	qemu_start 0 "$1"
	_pid=$(cat "$W/q.0.pid")
	wait_status "$W/q.0.serial" 0 "$BOOT_S" "$_pid" || {
		echo "PEER-FAIL size=$1 side=qemu reason=no guest status line in $BOOT_S s: $(tail -n 2 "$W/q.0.log" | tr '\n' ' ') serial: $(tail -n 3 "$W/q.0.serial" | tr -d '\r' | tr '\n' ' ')"
		stop_pid "$_pid"
		return 1
	}
	_first=$(last_status "$W/q.0.serial")
	info "qemu $1: guest up: $_first"
	qmp 0 "$IGNORE_SHARED" >/dev/null || {
		echo "PEER-FAIL size=$1 side=qemu reason=x-ignore-shared refused"
		stop_pid "$_pid"
		return 1
	}
	_k=1
	while [ $_k -le "$rounds" ]; do
		_src=$((_k - 1))
		rm -f "$W/mig.sock"
		qemu_start "$_k" "$1" incoming
		_dpid=$(cat "$W/q.$_k.pid")
		_r=$(qmp "$_k" "$IGNORE_SHARED" '{"execute":"query-status"}') || {
			echo "PEER-FAIL size=$1 side=qemu reason=destination $_k: $_r $(tail -n 2 "$W/q.$_k.log" | tr '\n' ' ')"
			stop_pid "$_dpid"
			stop_pid "$_pid"
			return 1
		}
		_i=0
		while [ ! -S "$W/mig.sock" ] && [ $_i -lt 600 ]; do nap; _i=$((_i + 1)); done
		_r=$(qmp "$_src" "{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"unix:$W/mig.sock\"}}") || {
			echo "PEER-FAIL size=$1 side=qemu reason=migrate $_k: $_r"
			stop_pid "$_dpid"
			stop_pid "$_pid"
			return 1
		}
		_i=0 _st=
		while [ $_i -lt 1200 ]; do
			_r=$(qmp "$_src" '{"execute":"query-migrate"}')
			_st=$(echo "$_r" | sed -n 's/.*"status": *"\([a-z-]*\)".*/\1/p')
			case $_st in completed|failed|cancelled) break ;; esac
			nap
			_i=$((_i + 1))
		done
		[ "$_st" = completed ] || {
			echo "PEER-FAIL size=$1 side=qemu reason=migration $_k ended '$_st': $_r"
			stop_pid "$_dpid"
			stop_pid "$_pid"
			return 1
		}
		_dt=$(echo "$_r" | sed -n 's/.*"downtime": *\([0-9]*\).*/\1/p')
		_tt=$(echo "$_r" | sed -n 's/.*"total-time": *\([0-9]*\).*/\1/p')
		_tx=$(echo "$_r" | sed -n 's/.*"transferred": *\([0-9]*\).*/\1/p')
		echo "$_dt" >>"$W/qemu.ms"
		echo "$_tt" >>"$W/qemu.total"
		# The destination runs the guest; the source quits.
		_i=0
		while [ $_i -lt 600 ]; do
			qmp "$_k" '{"execute":"query-status"}' | grep -q '"status": *"running"' && break
			nap
			_i=$((_i + 1))
		done
		qmp "$_src" '{"execute":"quit"}' >/dev/null 2>&1
		stop_pid "$_pid"
		_pid=$_dpid
		info "qemu $1: migration $_k downtime $_dt ms, total $_tt ms, $_tx bytes sent"
		wait_status "$W/q.$_k.serial" 0 60 "$_pid" || {
			echo "PEER-FAIL size=$1 side=qemu reason=no guest status line within 60 s of migration $_k"
			stop_pid "$_pid"
			return 1
		}
		_k=$((_k + 1))
	done
	_last=$(last_status "$W/q.$rounds.serial")
	qmp "$rounds" '{"execute":"quit"}' >/dev/null 2>&1
	stop_pid "$_pid"
	rm -f "$SHM/peer-ram"
	if [ "$(field "$_first" pid)" != "$(field "$_last" pid)" ] || [ "$(field "$_last" alive)" != yes ]; then
		echo "PEER-FAIL size=$1 side=qemu reason=guest restarted: $_first / $_last"
		return 1
	fi
	info "qemu $1: guest after $rounds migrations: $_last"
}

for s in $sizes; do
	: >"$W/kvmlu.ms"
	: >"$W/qemu.ms"
	: >"$W/qemu.total"
	case " $SIDES " in *" kvmlu "*) kvmlu_side "$s" ;; esac
	case " $SIDES " in *" qemu "*) qemu_side "$s" ;; esac
	read -r kn kmed kmax <<EOF
$(stats "$W/kvmlu.ms")
EOF
	read -r qn qmed qmax <<EOF
$(stats "$W/qemu.ms")
EOF
	read -r _tn tmed _tmax <<EOF
$(stats "$W/qemu.total")
EOF
	ratio=$(awk -v k="$kmed" -v q="$qmed" 'BEGIN { if (k + 0 > 0 && q + 0 > 0) printf "%.3f", k / q; else print "-" }')
	echo "PEER-RESULT size=$s kvmlu_n=$kn kvmlu_med=$kmed kvmlu_max=$kmax qemu_n=$qn qemu_med=$qmed qemu_max=$qmax qemu_total_med=$tmed ratio=$ratio"
done
