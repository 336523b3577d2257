# Harness case (opt-in: HARNESS_ARCHIVE, run only when KVMLU_TEST_FILTER
# names it): R3 of docs/libvirt-ram-in-place.md, the unknown of its
# step 5. Can Debian 12's libvirtd (libvirt 9.0) run inside the QEMU host
# (the project's kernel, the busybox initramfs, no systemd, no cgroup
# mounts) and manage a domain whose <emulator> is kvmlu-qemu, with
# `kvmlu domain-replace-qemu` working there? One kexec first, for the TSC
# rate (stage 1); the domain and its replacement run on that kernel.
#
# libvirt_archive.sh appends QEMU 7.2 (qemu_archive.sh) and libvirtd,
# virsh, their libraries and driver modules. libvirtd runs in session
# mode as nobody (setpriv), private to /tmp/lv, as in
# tests/native/libvirt_replace_qemu_keeps_ram.sh; the domain is type kvm
# (the nested KVM, /dev/kvm opened to nobody), 256 MiB memfd RAM through
# the wrapper, the Linux guest of the tests with its counter on a serial
# file. kvmlu-agent runs as root.
#
# What the runs found (docs/libvirt-ram-in-place.md, R3): libvirt's
# capability probe needs QEMU's TCG module even for a kvm domain (now in
# the archive). With libvirt's default CPU (qemu64) and no ACPI, on the
# host's first boot, the guest's clock stood still in its boot (printk at
# 1.837838 s for 900 s); host-passthrough, ACPI and the TSC kexec (the
# spike's setup) boot it in about 10 s. And KVM writes the guest's kvmclock
# wall clock (12 bytes) into its RAM as the new QEMU loads the vCPUs, so
# domain-replace-qemu, which hashed the RAM after the load, answered
# ChecksumMismatch every time; it now hashes the RAM as it gives it to the
# new QEMU. The case keeps a copy of the RAM the agent holds at the pause
# (KVMLU_TEST_STOP_AT=kvmlu-agent:replace-held) and, on a mismatch, logs
# which bytes differ in the paused new QEMU.
#
# Judged by values: libvirtd answers (its start time is reported: on a
# host update it adds to the blackout); the domain runs (`virsh domstate`)
# and its QEMU maps the wrapper's memfd kvmlu-lv:<uuid>:pc.ram; after
# `kvmlu domain-replace-qemu`: the reply's old pid is the first QEMU and
# its new pid differs and is the pid file's, the same UUID, running, the
# two sums equal, the image under 16 MiB; the new QEMU maps the very
# memfd (inode); the guest's counter process and boot id are the same,
# its counter and uptime went on, and it booted once.
HARNESS_MEM=4G
HARNESS_TIMEOUT=1800
HARNESS_ARCHIVE=tests/harness/libvirt_archive.sh

. /harness/vm_common.sh

LV=/tmp/lv
LV_UUID=7a2c5e10-4b1d-4e6f-8a3b-1c9d0e2f3a41
LV_URI="qemu+unix:///session?socket=$LV/run/libvirt/libvirt-sock"
QEMU=/usr/bin/qemu-system-x86_64

# Every virsh call bounded: a libvirtd that hangs must not hang the case.
lv_virsh() { timeout 600 /usr/bin/virsh -c "$LV_URI" "$@"; }

lv_procs() { # lv_procs: libvirtd's and any QEMU's threads, where they wait
	for p in $(pidof libvirtd) $(pidof qemu-system-x86_64); do
		for t in /proc/$p/task/*; do
			echo "ps| $p $(tr '\0' ' ' </proc/$p/cmdline | cut -c1-120) task ${t##*/} $(cat $t/comm) state $(awk '/^State:/ { print $2 }' $t/status) wchan $(cat $t/wchan 2>/dev/null) syscall $(cut -d' ' -f1-3 $t/syscall 2>/dev/null)"
		done
	done
}

lv_fail() { # lv_fail REASON: with the logs' last lines
	lv_procs
	harness_log "random: $(dmesg | grep -i 'crng' | tr '\n' ';')"
	[ -f $LV/debug.log ] && grep -aiE ' (error|warning) ' $LV/debug.log | tail -n 30 | sed 's/^/debug-err: /'
	[ -f $LV/debug.log ] && tail -n 40 $LV/debug.log | sed 's/^/debug: /'
	for f in $LV/daemon.log $(find $LV -name 'kv-*.log' 2>/dev/null) $LV/agent.log; do
		[ -f "$f" ] && tail -n 25 "$f" | sed "s#^#${f##*/}: #"
	done
	[ -f $LV/serial.log ] && grep -av 'KVMLU-GUEST-STATUS' $LV/serial.log | tail -n 10 | tr -d '\r' | sed 's/^/guest| /'
	fail "$1"
}

field() { echo "$1" | sed -n "s/.* $2=\([^ ]*\).*/\1/p"; }
last_status() { grep -a 'KVMLU-GUEST-STATUS' $LV/serial.log 2>/dev/null | tail -n 1 | tr -d '\r'; }
wait_counter_above() { # wait_counter_above N SECONDS
	_until=$(deadline_in "$2")
	while before "$_until"; do
		_c=$(field "$(last_status)" counter)
		[ -n "$_c" ] && [ "$_c" -gt "$1" ] 2>/dev/null && return 0
		sleep 1
	done
	return 1
}

# ms since boot, for the start time
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# Stage 1: the next kernel gets this one's refined TSC rate, as
# lvram_qemu_spike's and bench_upgrade's QEMU hosts do before QEMU runs a
# guest on the nested KVM.
stage1() {
	i=0
	while [ $i -lt 60 ] && ! dmesg | grep -q 'tsc: Refined TSC'; do sleep 1; i=$((i + 1)); done
	vm_kexec_next_stage
}

stage2() {
	for f in /usr/sbin/libvirtd /usr/bin/virsh /usr/bin/setpriv $QEMU /kvmlu/bin/kvmlu-qemu /kvmlu/bin/subreaper \
		/kvmlu/bin/kvmlu-agent /kvmlu/bin/kvmlu /kvmlu/linux/vmlinuz /kvmlu/linux/initramfs.cpio.gz; do
		[ -e "$f" ] || skip "$f missing (HARNESS_ARCHIVE=tests/harness/libvirt_archive.sh appends libvirt and QEMU; check.sh runs this case only when KVMLU_TEST_FILTER names it)"
	done
	[ -e /dev/kvm ] || fail "no /dev/kvm in the QEMU host"
	harness_log "kernel $(uname -r); /sys/fs/cgroup: $(ls /sys/fs/cgroup 2>&1 | head -c 200); mounts: $(cut -d' ' -f2,3 /proc/mounts | tr '\n' ';')"
	# The QEMU host's /dev/kvm is root's; the domain's QEMU runs as nobody.
	chmod 666 /dev/kvm
	mkdir -p $LV/run $LV/config/libvirt $LV/cache $LV/lv $LV/agent $LV/vms $LV/history
	chmod 755 $LV
	cp /kvmlu/linux/vmlinuz $LV/vmlinuz
	cp /kvmlu/linux/initramfs.cpio.gz $LV/initrd
	echo 'stdio_handler = "file"' >$LV/config/libvirt/qemu.conf
	printf '{"qemu": "%s", "qmp_dir": "%s/lv", "lvram_socket": "%s/lvram.sock"}\n' $QEMU $LV $LV >$LV/qemu.json
	printf '#!/bin/sh\nKVMLU_QEMU_CONFIG=%s/qemu.json exec /kvmlu/bin/kvmlu-qemu "$@"\n' $LV >$LV/kvmlu-qemu
	chmod 755 $LV/kvmlu-qemu
	cat >$LV/agent.json <<EOF2
{"socket": "$LV/agent.sock", "run_dir": "$LV/vms", "history_dir": "$LV/history",
 "state_dir": "$LV/agent", "libvirt_uri": "$LV_URI",
 "libvirt_state_file": "$LV/agent/libvirt-domains.json", "qemu_config": "$LV/qemu.json"}
EOF2
	cat >$LV/dom.xml <<EOF2
<domain type='kvm'><name>kv-rq</name><uuid>$LV_UUID</uuid>
<memory unit='MiB'>256</memory><vcpu>1</vcpu>
<features><acpi/><apic/></features><cpu mode='host-passthrough'/>
<memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>
<os><type arch='x86_64' machine='pc'>hvm</type><kernel>$LV/vmlinuz</kernel>
<initrd>$LV/initrd</initrd><cmdline>console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=1</cmdline></os>
<devices><emulator>$LV/kvmlu-qemu</emulator>
<serial type='file'><source path='$LV/serial.log' append='on'/><target port='0'/></serial>
<video><model type='none'/></video><memballoon model='none'/></devices></domain>
EOF2
	chown -R 65534:65534 $LV

	harness_log "libvirt: libvirtd starting"
	t0=$(now_ms)
	# Under subreaper (tests/harness/tools/subreaper.c): the QEMU processes
	# libvirt ends are reaped at once, as systemd does on a host, not left
	# zombies of this shell (PID 1) for libvirt to wait 40 s on.
	/kvmlu/bin/subreaper /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=$LV XDG_RUNTIME_DIR=$LV/run XDG_CONFIG_HOME=$LV/config XDG_CACHE_HOME=$LV/cache \
		LIBVIRT_LOG_FILTERS="1:qemu 1:util.command 1:util.process 1:rpc.netserver 1:daemon 3:*" \
		LIBVIRT_LOG_OUTPUTS="3:stderr 1:file:$LV/debug.log" /usr/sbin/libvirtd >$LV/daemon.log 2>&1 &
	daemon=$!
	_until=$(deadline_in 300)
	while before "$_until"; do
		[ -S $LV/run/libvirt/libvirt-sock ] && timeout 20 /usr/bin/virsh -c "$LV_URI" list --all >/tmp/lv.list 2>&1 && break
		kill -0 $daemon 2>/dev/null || lv_fail "libvirtd exited at start"
		usleep 200000
	done
	harness_log "libvirt: socket: $(ls -l $LV/run/libvirt/ 2>&1 | tr '\n' ';')"
	timeout 20 /usr/bin/virsh -c "$LV_URI" list --all >/tmp/lv.list 2>&1 ||
		lv_fail "libvirtd did not answer virsh list within 300 s: $(tail -n 2 /tmp/lv.list | tr '\n' ' ')"
	t1=$(now_ms)
	harness_log "libvirt: libvirtd answers virsh list after $((t1 - t0)) ms"
	lv_virsh version >/tmp/lv.version 2>&1 || lv_fail "virsh version (QEMU's probe) failed: $(tail -n 2 /tmp/lv.version | tr '\n' ' ')"
	harness_log "libvirt: virsh version after $(($(now_ms) - t0)) ms: $(tr '\n' ';' </tmp/lv.version)"
	# The first call that needs the QEMU driver's capabilities probes the
	# emulator (through the wrapper, which passes -machine none).
	lv_virsh domcapabilities --emulatorbin $LV/kvmlu-qemu --virttype kvm --machine pc >/tmp/lv.domcaps 2>&1 ||
		lv_fail "domcapabilities: $(tail -n 3 /tmp/lv.domcaps)"
	t2=$(now_ms)
	harness_log "libvirt: QEMU capabilities probed after $((t2 - t1)) ms more"
	report PASS "harness/$HARNESS_CASE/libvirtd" "libvirtd answered in $((t1 - t0)) ms, QEMU probed in $((t2 - t1)) ms"

	# Stopped once its RAM is held (the sum at the pause taken), so that
	# the case can keep a copy to compare byte for byte.
	KVMLU_TEST_STOP_AT=kvmlu-agent:replace-held /kvmlu/bin/kvmlu-agent --config $LV/agent.json >>$LV/agent.log 2>&1 &
	agent=$!
	_until=$(deadline_in 60)
	while ! { [ -S $LV/agent.sock ] && [ -S $LV/lvram.sock ]; } && before "$_until"; do
		kill -0 $agent 2>/dev/null || lv_fail "kvmlu-agent exited at start"
		usleep 100000
	done
	[ -S $LV/lvram.sock ] || lv_fail "kvmlu-agent: no agent or lvram socket within 60 s"

	out=$(lv_virsh define $LV/dom.xml 2>&1) || lv_fail "define: $out"
	t3=$(now_ms)
	out=$(lv_virsh start kv-rq 2>&1) || lv_fail "start: $out"
	harness_log "libvirt: virsh start took $(($(now_ms) - t3)) ms"
	[ "$(lv_virsh domstate kv-rq)" = running ] || lv_fail "domstate $(lv_virsh domstate kv-rq) after start"
	pidfile=$(find $LV -name kv-rq.pid | head -n 1)
	old_pid=$(cat "$pidfile")
	fdno=$(tr '\0' '\n' <"/proc/$old_pid/cmdline" | grep -o 'mem-path":"/proc/self/fd/[0-9]*' | grep -o '[0-9]*$')
	[ -n "$fdno" ] || lv_fail "no pc.ram fd in QEMU $old_pid's command line"
	old_link=$(readlink "/proc/$old_pid/fd/$fdno")
	old_ino=$(stat -L -c %i "/proc/$old_pid/fd/$fdno")
	case $old_link in "/memfd:kvmlu-lv:$LV_UUID:pc.ram"*) ;; *) lv_fail "QEMU's fd $fdno is $old_link" ;; esac
	grep -q "memfd:kvmlu-lv:$LV_UUID:pc.ram" "/proc/$old_pid/maps" || lv_fail "QEMU $old_pid does not map the memfd"
	report PASS "harness/$HARNESS_CASE/start" "QEMU $old_pid (uid $(awk '/^Uid:/ { print $2 }' /proc/$old_pid/status)) maps $old_link at fd $fdno"

	wait_counter_above 2 900 || lv_fail "the guest's counter did not pass 2 within 900 s"
	s1=$(last_status)
	harness_log "guest before: $s1"

	harness_log "libvirt: domain-replace-qemu"
	t4=$(now_ms)
	/kvmlu/bin/kvmlu --socket $LV/agent.sock domain-replace-qemu kv-rq --json >/tmp/replace.out 2>&1 &
	cli=$!
	_until=$(deadline_in 600)
	while before "$_until" && ! grep -q 'KVMLU_TEST_STOP_AT=kvmlu-agent:replace-held: pid' $LV/agent.log; do
		kill -0 $cli 2>/dev/null || break
		usleep 100000
	done
	while before "$_until" && ! grep -q '^State:.*T' /proc/$agent/status; do usleep 100000; done
	grep -q '^State:.*T' /proc/$agent/status || lv_fail "kvmlu-agent did not stop with the RAM held: $(cat /tmp/replace.out)"
	held=
	for f in /proc/$agent/fd/*; do
		case $(readlink "$f") in "/memfd:kvmlu-lv:$LV_UUID:pc.ram"*) held=$f ;; esac
	done
	[ -n "$held" ] || lv_fail "kvmlu-agent holds no memfd kvmlu-lv:$LV_UUID:pc.ram"
	cp "$held" /tmp/pause.ram || lv_fail "could not copy the held RAM"
	kill -CONT $agent
	wait $cli
	rc=$?
	out=$(cat /tmp/replace.out)
	t5=$(now_ms)
	if [ $rc != 0 ]; then
		# Left paused on a mismatch: which bytes QEMU's start changed.
		np=$(cat "$pidfile")
		nf=$(tr '\0' '\n' <"/proc/$np/cmdline" | grep -o 'mem-path":"/proc/self/fd/[0-9]*' | grep -o '[0-9]*$')
		cmp -l /tmp/pause.ram "/proc/$np/fd/$nf" >/tmp/cmp.out 2>&1
		harness_log "RAM at the pause vs QEMU $np's paused: $(wc -l </tmp/cmp.out) bytes differ; by 4 KiB page (offset: bytes): $(awk '{ p = int(($1 - 1) / 4096); n[p]++ } END { for (k in n) printf "0x%x:%d ", k * 4096, n[k] }' /tmp/cmp.out | tr ' ' '\n' | sort | head -n 40 | tr '\n' ' ')"
		head -n 64 /tmp/cmp.out | awk '{ printf "0x%x %s->%s\n", $1 - 1, $2, $3 }' | tr '\n' ' ' | sed 's/^/cmp: /'
		echo
		lv_fail "domain-replace-qemu: $out"
	fi
	harness_log "libvirt: reply after $((t5 - t4)) ms: $(echo "$out" | tr -d '\n')"
	r=$(echo "$out" | tr -d ' \n')
	[ "$(echo "$r" | json_num old_pid)" = "$old_pid" ] || lv_fail "old_pid is not $old_pid: $r"
	new_pid=$(echo "$r" | json_num new_pid)
	[ -n "$new_pid" ] && [ "$new_pid" != "$old_pid" ] || lv_fail "new_pid '$new_pid': $r"
	[ "$(echo "$r" | json_str uuid)" = "$LV_UUID" ] || lv_fail "uuid in the reply: $r"
	sum=$(echo "$r" | json_str checksum)
	[ ${#sum} = 32 ] && [ "$(echo "$r" | json_str checksum_after)" = "$sum" ] || lv_fail "sums differ: $r"
	img=$(echo "$r" | json_num image_bytes)
	[ -n "$img" ] && [ "$img" -gt 0 ] && [ "$img" -lt $((16 << 20)) ] || lv_fail "image_bytes '$img': $r"
	[ "$(echo "$r" | json_str state)" = running ] || lv_fail "state in the reply: $r"
	[ "$(lv_virsh domstate kv-rq)" = running ] || lv_fail "domstate $(lv_virsh domstate kv-rq) after the replacement"
	[ "$(lv_virsh domuuid kv-rq)" = "$LV_UUID" ] || lv_fail "the UUID changed"
	[ "$(cat "$pidfile")" = "$new_pid" ] || lv_fail "the pid file says $(cat "$pidfile"), the reply $new_pid"
	# libvirt daemonizes QEMU, so its parent is this /init: a zombie until
	# the shell reaps it counts as gone.
	[ -d "/proc/$old_pid" ] && [ "$(awk '/^State:/ { print $2 }' "/proc/$old_pid/status")" != Z ] &&
		lv_fail "the old QEMU $old_pid still runs"
	fdno=$(tr '\0' '\n' <"/proc/$new_pid/cmdline" | grep -o 'mem-path":"/proc/self/fd/[0-9]*' | grep -o '[0-9]*$')
	[ -n "$fdno" ] && [ "$(stat -L -c %i "/proc/$new_pid/fd/$fdno")" = "$old_ino" ] ||
		lv_fail "the new QEMU's pc.ram fd '$fdno' is not the old memfd (inode $old_ino)"
	report PASS "harness/$HARNESS_CASE/replace" "QEMU $old_pid -> $new_pid in $((t5 - t4)) ms, image $img bytes, sum $sum both sides, memfd inode $old_ino kept"

	c1=$(field "$s1" counter)
	wait_counter_above $((c1 + 2)) 300 || lv_fail "the counter did not pass $((c1 + 2)): $(last_status)"
	s2=$(last_status)
	harness_log "guest after: $s2"
	for k in pid boot; do
		[ "$(field "$s1" $k)" = "$(field "$s2" $k)" ] || lv_fail "$k changed: $s1 / $s2"
	done
	[ -n "$(field "$s2" pid)" ] || lv_fail "no counter pid in $s2"
	awk -v a="$(field "$s1" uptime)" -v b="$(field "$s2" uptime)" 'BEGIN { exit !(b > a) }' ||
		lv_fail "the guest's uptime went back: $s1 / $s2"
	[ "$(grep -ac KVMLU-LINUX-GUEST-UP $LV/serial.log)" = 1 ] || lv_fail "the guest booted again"
	report PASS "harness/$HARNESS_CASE/identity" "counter pid $(field "$s2" pid) boot $(field "$s2" boot), counter $c1 -> $(field "$s2" counter)"

	lv_virsh destroy kv-rq >/dev/null 2>&1
	pass "libvirtd 9.0 in the QEMU host (session, nobody, no cgroups): started in $((t1 - t0)) ms, domain on kvmlu-qemu replaced $old_pid -> $new_pid with its RAM in place"
}
