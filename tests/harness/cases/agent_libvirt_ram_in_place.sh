# Harness case (opt-in: HARNESS_ARCHIVE, run only when KVMLU_TEST_FILTER
# names it): step 5 of docs/libvirt-ram-in-place.md. A libvirt domain run
# by libvirtd 9.0 inside the QEMU host keeps its RAM in place through
# `kvmlu domain-replace-qemu` and then through `kvmlu host-update` (a
# real kexec of the QEMU host).
#
# The domain: type kvm (the nested KVM), 256 MiB memfd RAM through the
# kvmlu-qemu wrapper, the Linux guest of the tests (Debian's cloud kernel,
# qemu_archive.sh's initramfs with virtio-pci) with its counter, boot id
# and fsync'd records on a virtio disk, as in
# linux_guest_disk_keeps_acked_records. libvirtd runs in session mode as
# nobody, as in libvirt_in_qemu_host; kvmlu-agent as root.
#
# The QEMU host has no disk file system, so HARNESS_DISK is split by an
# MBR this case writes: /dev/vda1 (64 MiB) is the guest's disk (an ext4
# of 60 MiB, the stop mark in its last 4 KiB), /dev/vda2 holds, raw, what
# a real host keeps on its disk across the kexec: its first MiB the
# expectations, then a tar of libvirt's config and cache directories (the
# domain's definition, its managed-save image, the capabilities cache),
# the agent's state and history directories and the domain's serial log.
# The case writes it while kvmlu-agent is stopped at
# `KVMLU_TEST_STOP_AT=kvmlu-agent:kexec` (the journal in LUO, right
# before reboot()), so what the save wrote is in it; /run is not carried.
#
# Stage 1 kexecs once for the TSC rate (as lvram_qemu_spike). Stage 2:
# boot (acks); /replace: domain-replace-qemu, judged as in
# libvirt_in_qemu_host plus the records going on; /preflight: a dry run of
# host-update lists the domain with its RAM verdict; then host-update,
# stopped before the kexec: the image's size, the checksum of the memfd the
# agent holds, the last ack and status line, then the kexec. Stage 3, in
# the order a host boots: `kvmlu-agent --restore` (kvmlu-restore.service),
# the agent daemon, which must wait for libvirtd (the domain `pending`
# meanwhile; in-place: the retrieved memfd held by the agent, whose
# checksum must be the one before the kexec), then libvirtd (its start time
# after a kexec is reported), then the domain must come back running.
# Judged on values: the journal's entry (action, result ok, downtime;
# in-place: checksum_at_pause == checksum_before_run == the checksum of
# the memfd the agent held at the kexec, by lvram-spike sum), the same UUID, the
# same boot id and counter pid with the counter and uptime going on, one
# boot in the whole serial log, the acks 1..N without a gap or repeat
# across both QEMU replacements and the kexec, virsh suspend and resume;
# at the end `virsh shutdown`: the guest's power button stops its writer,
# it powers off and the domain is shut off; e2fsck -fn is clean and /records is rec 1..N, N the
# last ack. /optout: a second domain with kvmlu's optout metadata runs
# beside it and is left alone: running at the kexec with no managed
# save, shut off after it.
#
# kvmlu.lv_ram_mode= on the command line (KVMLU_HARNESS_APPEND) picks the
# agent's libvirt_ram: `in-place` (the default: the design's path; the
# agent of docs/libvirt-ram-in-place.md section 8) or `save` (today's
# managed save: the RAM goes into the image, which must then be larger
# than LR_IMAGE_MAX; same kexec, libvirtd restart, pending wait, identity
# and records). The journal keys the in-place judgement reads are the
# LR_KEY_* below; checksum_after has to be taken before QEMU loads
# the device state, since KVM writes the guest's kvmclock wall clock into
# its RAM then (docs/libvirt-ram-in-place.md, R3).
#
# Bench mode (tests/bench/bench_libvirt_ram.sh; kvmlu.lv_bench=1 on the
# command line, the RAM by kvmlu.lv_ram_mib=N, default 256): only the
# boot, the host update and the domain running again with the same boot
# and acks in sequence (no /replace, /preflight, /optout, /virsh,
# /shutdown, /records); it prints, as "lvbench ..." lines, what the bench
# needs to put the blackout on the host's clock: the agent's phase lines
# (agent/libvirt/libvirt_phase.h, each kernel's CLOCK_REALTIME), an anchor
# per kernel (a console line between two tmpfs mtimes), the moment the
# agent stopped at the kexec (the mtime of its log, which the stop line
# wrote last), a line right before the SIGCONT, the image's size and the
# journal's entry. The stop, while this case copies the state to the
# disk, is thus left out exactly.
#
# What the runs found: both modes pass. `save`: image 82.2 MB, libvirtd
# answering 5-8 s after its start after the kexec, the domain `pending`
# until then and started by the agent's wait for libvirtd, no ack lost.
# In place the whole case takes about 200 s of the QEMU host's time;
# each managed save (domain-replace-qemu's, the update's) 0.7-1.0 s from
# the agent's `suspend` to its `saved` phase line, since libvirtd runs
# under subreaper (before, libvirt waited 40 s in each for a zombie QEMU).
HARNESS_MEM=4G
HARNESS_TIMEOUT=3000
HARNESS_DISK=6G
HARNESS_ARCHIVE=tests/harness/libvirt_archive.sh

. /harness/agent_common.sh

LV=/tmp/lv
LR=kv-lr
LR_UUID=3e9b7c41-58a2-4d0f-9c6e-2b71d4a8f053
# A second domain, opted out: no guest (SeaBIOS finds nothing to boot),
# left alone by the update, so it ends at the kexec.
LO=kv-opt
LO_UUID=5b0d2e93-7c14-4a6b-8f21-9e3c0a7d1b64
LR_URI="qemu+unix:///session?socket=$LV/run/libvirt/libvirt-sock"
LR_MODE=$(sed -n 's/.*kvmlu\.lv_ram_mode=\([a-z-]*\).*/\1/p' /proc/cmdline)
LR_MODE=${LR_MODE:-in-place}
LR_RAM_MIB=$(sed -n 's/.*kvmlu\.lv_ram_mib=\([0-9]*\).*/\1/p' /proc/cmdline)
LR_RAM_MIB=${LR_RAM_MIB:-256}
LR_BENCH=$(sed -n 's/.*kvmlu\.lv_bench=\(1\).*/\1/p' /proc/cmdline)
LR_IMAGE_MAX=$((16 << 20))	# device state only: well under this
LR_MORE=5			# acks to see after each step before the next
LR_FS=60M
LR_STATE=/dev/vda2
LR_TAR_SEEK_MIB=1		# the tar's offset in LR_STATE; the expectations at 0
LR_SAVE=$LV/config/libvirt/qemu/save/$LR.save
LR_SERIAL=$LV/serial.log
QEMU=/usr/bin/qemu-system-x86_64
# The journal's per-domain keys of an in-place update (section 8).
LR_ACTION_IN_PLACE=ram-in-place
LR_KEY_SUM_PAUSE=checksum
LR_KEY_SUM_RUN=checksum_after

AG_CONF=$LV/agent.json
AG_SOCK=$LV/agent.sock

lr_virsh() { timeout 600 /usr/bin/virsh -c "$LR_URI" "$@"; }

lr_procs() { # libvirtd's, QEMU's and the agent's threads, where they wait
	for p in $(pidof libvirtd) $(pidof qemu-system-x86_64) $(pidof kvmlu-agent); do
		for t in /proc/$p/task/*; do
			echo "ps| $p $(tr '\0' ' ' </proc/$p/cmdline | cut -c1-100) task ${t##*/} $(cat $t/comm) state $(awk '/^State:/ { print $2 }' $t/status) wchan $(cat $t/wchan 2>/dev/null)"
		done
	done
}

lr_fail() { # lr_fail REASON: with the logs' last lines
	lr_procs
	[ -f $LV/debug.log ] && grep -aiE ' (error|warning) ' $LV/debug.log | tail -n 20 | sed 's/^/debug-err: /'
	for f in $LV/daemon.log $(find $LV/cache -name "$LR.log" 2>/dev/null) $LV/agent.log /tmp/hu.out; do
		[ -f "$f" ] && tail -n 25 "$f" | sed "s#^#${f##*/}: #"
	done
	[ -f $LR_SERIAL ] && grep -av 'KVMLU-REC-ACK\|KVMLU-GUEST-STATUS' $LR_SERIAL | tail -n 12 | tr -d '\r' | sed 's/^/guest| /'
	echo "last ack: $(lr_last_ack); last status: $(lr_status)"
	fail "$1"
}

field() { echo "$1" | sed -n "s/.* $2=\([^ ]*\).*/\1/p"; }
lr_status() { serial_lines $LR_SERIAL | grep -a 'KVMLU-GUEST-STATUS' | tail -n 1 | tr -d '\r'; }
lr_last_ack() { rec_last_ack $LR_SERIAL; }
lr_state() { lr_virsh domstate $LR 2>&1 | head -n 1; }

lr_wait_ack() { # lr_wait_ack N SECONDS WHAT: an ack >= N
	_until=$(deadline_in "$2")
	while before "$_until"; do
		[ "$(lr_last_ack)" -ge "$1" ] && return 0
		grep -aqs 'KVMLU-RECORDS-ERROR' $LR_SERIAL &&
			lr_fail "$3: the guest's writer failed: $(grep -a 'KVMLU-RECORDS-ERROR' $LR_SERIAL | head -n 1 | tr -d '\r')"
		usleep 500000
	done
	lr_fail "$3: no ack >= $1 within $2 s (last $(lr_last_ack), domain $(lr_state))"
}

lr_wait_status_after() { # lr_wait_status_after STATUS SECONDS WHAT: a status line with a higher counter
	_c=$(field "$1" counter)
	_until=$(deadline_in "$2")
	while before "$_until"; do
		_n=$(field "$(lr_status)" counter)
		[ -n "$_n" ] && [ "$_n" -gt "${_c:-0}" ] 2>/dev/null && return 0
		usleep 500000
	done
	lr_fail "$3: no status line after '$1' within $2 s"
}

lr_check_sequence() { # lr_check_sequence WHAT: the whole serial's acks are 1, 2, 3 ...
	_bad=$(rec_acks $LR_SERIAL | awk '$1 != NR { print "ack " $1 " where " NR " was due"; exit }')
	[ -z "$_bad" ] || lr_fail "$1: $_bad (the writer restarted or a record was lost)"
}

lr_qemu_pid() { cat "$(find $LV/run -name "$LR.pid" | head -n 1)" 2>/dev/null; }
lr_ram_fd() { # lr_ram_fd PID: the fd N of the wrapper's mem-path=/proc/self/fd/N
	tr '\0' '\n' <"/proc/$1/cmdline" | grep -o 'mem-path":"/proc/self/fd/[0-9]*' | grep -o '[0-9]*$'
}

# lr_held_fd PID: the fd of PID that is a regular file of the domain's
# RAM size (the agent's memfd: named kvmlu-lv:<uuid>:pc.ram before the
# kexec, nameless after RETRIEVE, design fact 28).
lr_held_fd() {
	for _f in /proc/$1/fd/*; do
		[ "$(stat -L -c '%F %s' "$_f" 2>/dev/null)" = "regular file $((LR_RAM_MIB << 20))" ] &&
			{ echo "$_f"; return 0; }
	done
	return 1
}

# lr_sum PATH: guestmem's checksum of a RAM file (lvram-spike sum), the
# one kvmlu-agent records (agent/libvirt/lvram_sum.c), from another process.
lr_sum() { /kvmlu/bin/lvram-spike sum "$1" 2>&1 | sed -n 's/.*sum=\([0-9a-f]*\).*/\1/p'; }

# lr_report_domain KEY [UUID]: KEY of the domain's entry (default $LR's) in `kvmlu report --json`
# (/tmp/report.json), strings and numbers alike.
lr_report_domain() {
	_e=$(tr -d '\n' </tmp/report.json | sed 's/.*"libvirt_domains": *\[//' | tr '}' '\n' |
		grep "\"uuid\": *\"${2:-$LR_UUID}\"" | head -n 1)
	_v=$(echo "$_e" | sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p")
	[ -n "$_v" ] || _v=$(echo "$_e" | sed -n "s/.*\"$1\": *\([-0-9.a-z]*\).*/\1/p")
	echo "$_v"
}

# lr_rt_of FILE: FILE's mtime as seconds.nanoseconds (this kernel's CLOCK_REALTIME)
lr_rt_of() { stat -c '%Y %y' "$1" | awk '{ split($3, f, "."); printf "%s.%s\n", $1, substr(f[2] "000000000", 1, 9) }'; }

# lr_bench_anchor TAG (bench mode): a console line between two tmpfs
# mtimes, which puts this kernel's CLOCK_REALTIME on the host's clock.
lr_bench_anchor() {
	: >/tmp/rt.a
	echo "KVMLU-HARNESS: lvbench anchor $1"
	: >/tmp/rt.b
	echo "KVMLU-HARNESS: lvbench rt $1 $(lr_rt_of /tmp/rt.a) $(lr_rt_of /tmp/rt.b)"
}

lr_bench_agent_lines() { # lr_bench_agent_lines TAG: the agent's log, its phase lines among it (bench mode)
	sed "s/^/KVMLU-HARNESS: lvbench $1 /" $LV/agent.log
}

lr_need() {
	for f in /usr/sbin/libvirtd /usr/bin/virsh /usr/bin/setpriv $QEMU /kvmlu/bin/kvmlu-qemu /kvmlu/bin/subreaper \
		$KVMLU_AGENT $KVMLU /kvmlu/bin/lvram-spike /kvmlu/linux/vmlinuz /kvmlu/linux/initramfs-pci.cpio.gz \
		/sbin/mke2fs /sbin/e2fsck /sbin/debugfs; do
		[ -e "$f" ] || skip "$f missing (HARNESS_ARCHIVE=tests/harness/libvirt_archive.sh appends libvirt and QEMU; check.sh runs this case only when KVMLU_TEST_FILTER names it)"
	done
	[ -e /dev/kvm ] || fail "no /dev/kvm in the QEMU host"
	[ -e /dev/liveupdate ] || fail "no /dev/liveupdate (kernel or liveupdate=on)"
	[ -b /dev/vda ] || fail "no /dev/vda (HARNESS_DISK)"
	case $LR_MODE in in-place | save) ;; *) fail "kvmlu.lv_ram_mode=$LR_MODE: not in-place or save" ;; esac
}

# What every boot makes before libvirtd runs: /run's directories, the
# device nodes the domain's QEMU (nobody) opens, the guest's kernel files
# (the same files every boot: not carried).
lr_boot_dirs() {
	chmod 666 /dev/kvm /dev/vda1
	mkdir -p $LV/run $LV/lv $LV/config/libvirt $LV/cache $LV/agent $LV/vms $LV/history
	chmod 755 $LV
	cp /kvmlu/linux/vmlinuz $LV/vmlinuz
	cp /kvmlu/linux/initramfs-pci.cpio.gz $LV/initrd
	chown -R 65534:65534 $LV
	# The agent's own files stay root's.
	chown -R 0:0 $LV/agent $LV/history $LV/agent.json 2>/dev/null
	chown 0:0 $LV/vms
}

# libvirtd under subreaper (tests/harness/tools/subreaper.c), which reaps
# the QEMU processes libvirt ends at once, as systemd does on a host: PID 1
# here is this shell, which leaves them zombies while it waits in a command
# substitution, and libvirt then waits 40 s for each to go.
lr_libvirtd_start() { # start libvirtd; LR_LIBVIRTD_MS: exec to `virsh list` answering
	_t0=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
	/kvmlu/bin/subreaper /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=$LV XDG_RUNTIME_DIR=$LV/run XDG_CONFIG_HOME=$LV/config XDG_CACHE_HOME=$LV/cache \
		LIBVIRT_LOG_FILTERS="1:qemu 1:daemon 3:*" \
		LIBVIRT_LOG_OUTPUTS="3:stderr 1:file:$LV/debug.log" /usr/sbin/libvirtd >>$LV/daemon.log 2>&1 &
	_d=$!
	_until=$(deadline_in 300)
	while before "$_until"; do
		[ -S $LV/run/libvirt/libvirt-sock ] && timeout 20 /usr/bin/virsh -c "$LR_URI" list --all >/tmp/lv.list 2>&1 && break
		kill -0 $_d 2>/dev/null || lr_fail "libvirtd exited at start"
		usleep 200000
	done
	timeout 20 /usr/bin/virsh -c "$LR_URI" list --all >/tmp/lv.list 2>&1 ||
		lr_fail "libvirtd did not answer virsh list within 300 s"
	LR_LIBVIRTD_MS=$(($(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime) - _t0))
	harness_log "libvirt: libvirtd answers after $LR_LIBVIRTD_MS ms"
}

lr_agent_start() { # the daemon as root, stopped by the test hook right before the kexec
	KVMLU_TEST_STOP_AT=kvmlu-agent:kexec $KVMLU_AGENT --config $AG_CONF >>$LV/agent.log 2>&1 &
	echo $! >/tmp/agent.pid
	_until=$(deadline_in 120)
	while before "$_until"; do
		$KVMLU --socket $AG_SOCK status >/dev/null 2>&1 && return 0
		kill -0 "$(cat /tmp/agent.pid)" 2>/dev/null || lr_fail "kvmlu-agent exited at start: $(tail -n 2 $LV/agent.log)"
		usleep 200000
	done
	lr_fail "kvmlu-agent did not answer within 120 s"
}

lr_le32() { # lr_le32 N: N as 4 little-endian bytes, printf octal escapes
	printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $((($1 >> 8) & 255)) \
		$((($1 >> 16) & 255)) $((($1 >> 24) & 255))
}

# The MBR: vda1 1 MiB .. 65 MiB (the guest's disk), vda2 65 MiB to the
# end of the disk (a managed save of the bench's largest RAM fits).
lr_partition() {
	_sec=$(($(blockdev --getsize64 /dev/vda) / 512))
	{
		dd if=/dev/zero bs=446 count=1 2>/dev/null
		printf '\000\000\000\000\203\000\000\000\000\010\000\000\000\000\002\000'
		printf "\\000\\000\\000\\000\\203\\000\\000\\000\\000\\010\\002\\000$(lr_le32 $((_sec - 133120)))"
		dd if=/dev/zero bs=32 count=1 2>/dev/null
		printf '\125\252'
	} >/tmp/mbr
	# From a file: dd reading a pipe may get a short first block.
	[ "$(wc -c </tmp/mbr)" = 512 ] || fail "the MBR is $(wc -c </tmp/mbr) bytes"
	dd if=/tmp/mbr of=/dev/vda bs=512 count=1 conv=notrunc,fsync 2>/dev/null || fail "could not write the MBR"
	blockdev --rereadpt /dev/vda || fail "the kernel did not reread /dev/vda's partitions"
	_i=0
	while ! { [ -b /dev/vda1 ] && [ -b /dev/vda2 ]; } && [ $_i -lt 50 ]; do usleep 100000; _i=$((_i + 1)); done
	[ "$(blockdev --getsize64 /dev/vda1)" = $((64 << 20)) ] || fail "/dev/vda1 is not 64 MiB: $(ls -l /dev/vda* | tr '\n' ' ')"
}

lr_stop_block() { echo $(($(blockdev --getsize64 /dev/vda1) / 4096 - 1)); }

# The next stage's command line for host-update, with this kernel's
# refined TSC rate as the next one's early rate (vm_kexec_load_next).
lr_next_cmdline() {
	_khz=$(dmesg | sed -n 's/.*tsc: Refined TSC clocksource calibration: \([0-9]*\)\.\([0-9][0-9][0-9]\) MHz.*/\1\2/p' | tail -n 1)
	_c=$(ag_next_cmdline)
	[ -n "$_khz" ] && [ "$_khz" -gt 500000 ] && _c="$(echo "$_c" | sed 's/ tsc_early_khz=[^ ]*//g') tsc_early_khz=$_khz"
	echo "$_c"
}

# Stage 1: the next kernel gets this one's refined TSC rate, as
# lvram_qemu_spike's and bench_upgrade's QEMU hosts do before QEMU runs a
# guest on the nested KVM.
stage1() {
	i=0
	while [ $i -lt 60 ] && ! dmesg | grep -q 'tsc: Refined TSC'; do sleep 1; i=$((i + 1)); done
	vm_kexec_next_stage
}

stage2() {
	lr_need
	lr_partition
	/sbin/mke2fs -q -F -t ext4 -L lr-records /dev/vda1 $LR_FS || fail "mke2fs on /dev/vda1 failed"
	dd if=/dev/zero of=/dev/vda1 bs=4096 seek="$(lr_stop_block)" count=1 conv=notrunc 2>/dev/null
	sync
	mkdir -p $LV
	printf '{"qemu": "%s", "qmp_dir": "%s/lv", "lvram_socket": "%s/lvram.sock"}\n' $QEMU $LV $LV >$LV/qemu.json
	printf '#!/bin/sh\nKVMLU_QEMU_CONFIG=%s/qemu.json exec /kvmlu/bin/kvmlu-qemu "$@"\n' $LV >$LV/kvmlu-qemu
	chmod 755 $LV/kvmlu-qemu
	echo 'stdio_handler = "file"' >/tmp/qemu.conf
	cat >$AG_CONF <<EOF2
{"socket": "$AG_SOCK", "group": "root", "run_dir": "$LV/vms", "history_dir": "$LV/history",
 "state_dir": "$LV/agent", "libvirt_uri": "$LR_URI",
 "libvirt_state_file": "$LV/agent/libvirt-domains.json", "qemu_config": "$LV/qemu.json",
 "libvirt_ram": "$LR_MODE", "libvirt_save_dir": "$LV/config/libvirt/qemu/save", "allow_kexec": true,
 "timeouts": { "prepare_ms": 900000, "restore_ms": 900000 }}
EOF2
	# The domain XML docs/libvirt.md gives, its names filled in; the test
	# boots its kernel directly, its disk is a partition, and it adds a
	# serial log (and no video, which TCG would pay for).
	sed -n '/<!-- kvmlu-domain-xml-begin -->/,/<!-- kvmlu-domain-xml-end -->/p' /kvmlu/docs/libvirt.md |
		grep -v 'kvmlu-domain-xml-' |
		sed -e "s|<name>NAME</name>|<name>$LR</name>|" -e "s|<uuid>UUID</uuid>|<uuid>$LR_UUID</uuid>|" \
			-e "s|>MIB<|>$LR_RAM_MIB<|" -e "s|/usr/local/bin/kvmlu-qemu|$LV/kvmlu-qemu|" \
			-e "s|<disk type='file'|<disk type='block'|" -e "s|<source file='DISK'/>|<source dev='/dev/vda1'/>|" \
			-e "s|<os>.*</os>|<os><type arch='x86_64' machine='pc'>hvm</type><kernel>$LV/vmlinuz</kernel><initrd>$LV/initrd</initrd><cmdline>console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=5 kvmlu.records=/dev/vda</cmdline></os><on_reboot>destroy</on_reboot>|" \
			-e "s|</devices>|<serial type='file'><source path='$LR_SERIAL' append='on'/><target port='0'/></serial><video><model type='none'/></video></devices>|" \
			>/tmp/dom.xml
	for want in "<source type='memfd'/>" "<access mode='shared'/>" "<emulator>$LV/kvmlu-qemu</emulator>" \
		"<name>$LR</name>" "<source dev='/dev/vda1'/>" "<kernel>$LV/vmlinuz</kernel>" "<serial type='file'>"; do
		grep -qF "$want" /tmp/dom.xml || fail "the domain XML from docs/libvirt.md lacks $want: $(cat /tmp/dom.xml)"
	done
	cat >/tmp/opt.xml <<EOF2
<domain type='kvm'><name>$LO</name><uuid>$LO_UUID</uuid>
<memory unit='MiB'>32</memory><vcpu>1</vcpu>
<metadata><kvmlu:config xmlns:kvmlu="https://kvmlu.invalid/ns/1" optout="yes"/></metadata>
<os><type arch='x86_64' machine='pc'>hvm</type></os>
<devices><emulator>$QEMU</emulator><video><model type='none'/></video><memballoon model='none'/></devices></domain>
EOF2
	lr_boot_dirs
	mkdir -p $LV/config/libvirt
	mv /tmp/qemu.conf $LV/config/libvirt/qemu.conf
	chown -R 65534:65534 $LV/config
	lr_libvirtd_start
	report PASS "harness/$HARNESS_CASE/libvirtd" "libvirtd answered $LR_LIBVIRTD_MS ms after its start"
	lr_agent_start

	out=$(lr_virsh define /tmp/dom.xml 2>&1) || lr_fail "define: $out"
	if [ -z "$LR_BENCH" ]; then
		out=$(lr_virsh define /tmp/opt.xml 2>&1) || lr_fail "define $LO: $out"
		out=$(lr_virsh start $LO 2>&1) || lr_fail "start $LO: $out"
	fi
	out=$(lr_virsh start $LR 2>&1) || lr_fail "start: $out"
	pid=$(lr_qemu_pid)
	fd=$(lr_ram_fd "$pid")
	[ -n "$fd" ] || lr_fail "no pc.ram fd in QEMU $pid's command line"
	ino=$(stat -L -c %i "/proc/$pid/fd/$fd")
	case $(readlink "/proc/$pid/fd/$fd") in "/memfd:kvmlu-lv:$LR_UUID:pc.ram"*) ;; *) lr_fail "QEMU's fd $fd is $(readlink "/proc/$pid/fd/$fd")" ;; esac
	lr_wait_ack 1 900 "boot"
	grep -aE 'KVMLU-GUEST-DISKS|KVMLU-RECORDS-START' $LR_SERIAL | tr -d '\r' | sed 's/^/guest| /'
	lr_wait_ack $LR_MORE 300 "boot"
	# A status line every 5 s of the guest's time (kvmlu.status=5).
	_until=$(deadline_in 300)
	while [ -z "$(field "$(lr_status)" boot)" ] && before "$_until"; do usleep 500000; done
	s0=$(lr_status)
	[ -n "$(field "$s0" boot)" ] || lr_fail "no status line with a boot id within 300 s: '$s0'"
	report PASS "harness/$HARNESS_CASE/boot" "QEMU $pid on the memfd (fd $fd, inode $ino) with /dev/vda1 as the guest's vda: ack $(lr_last_ack)"

	[ -n "$LR_BENCH" ] || stage2_replace_and_dry_run
	stage2_update
}

# (a) The same-kernel round trip, records going on; (b) the dry run.
stage2_replace_and_dry_run() {
	a=$(lr_last_ack)
	out=$($KVMLU --socket $AG_SOCK domain-replace-qemu $LR --json 2>&1) || lr_fail "domain-replace-qemu: $out"
	r=$(echo "$out" | tr -d ' \n')
	harness_log "replace: $r"
	new=$(echo "$r" | json_num new_pid)
	[ "$(echo "$r" | json_num old_pid)" = "$pid" ] && [ -n "$new" ] && [ "$new" != "$pid" ] ||
		lr_fail "domain-replace-qemu: old_pid/new_pid not $pid/another: $r"
	sum=$(echo "$r" | json_str checksum)
	[ ${#sum} = 32 ] && [ "$(echo "$r" | json_str checksum_after)" = "$sum" ] || lr_fail "sums differ: $r"
	img=$(echo "$r" | json_num image_bytes)
	[ -n "$img" ] && [ "$img" -gt 0 ] && [ "$img" -lt $LR_IMAGE_MAX ] || lr_fail "image_bytes '$img': $r"
	[ "$(lr_state)" = running ] || lr_fail "domstate $(lr_state) after domain-replace-qemu"
	[ "$(lr_qemu_pid)" = "$new" ] || lr_fail "the pid file says $(lr_qemu_pid), the reply $new"
	fd=$(lr_ram_fd "$new")
	[ -n "$fd" ] && [ "$(stat -L -c %i "/proc/$new/fd/$fd")" = "$ino" ] ||
		lr_fail "the new QEMU's pc.ram fd '$fd' is not the memfd of inode $ino"
	lr_wait_ack $((a + LR_MORE)) 300 "after domain-replace-qemu"
	lr_check_sequence "after domain-replace-qemu"
	lr_wait_status_after "$s0" 300 "after domain-replace-qemu"
	s1=$(lr_status)
	for k in pid boot; do
		[ "$(field "$s0" $k)" = "$(field "$s1" $k)" ] || lr_fail "after domain-replace-qemu: $k changed: $s0 / $s1"
	done
	report PASS "harness/$HARNESS_CASE/replace" "QEMU $pid -> $new, image $img bytes, sum $sum both sides, memfd inode $ino kept, acks $a -> $(lr_last_ack) in sequence, boot $(field "$s1" boot)"

	# (b) host-update: the dry run's verdict first.
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build the next initramfs"
	cmdline=$(lr_next_cmdline)
	$KVMLU --socket $AG_SOCK host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$cmdline" --dry-run --json >/tmp/report.json 2>/tmp/dry.err
	rc=$?
	sed 's/^/dry-run| /' /tmp/report.json /tmp/dry.err
	[ $rc = 0 ] || lr_fail "dry run exited $rc"
	[ "$(cat /sys/kernel/kexec_loaded)" = 0 ] || lr_fail "the dry run left a kernel loaded"
	[ "$(lr_state)" = running ] || lr_fail "domstate $(lr_state) after the dry run"
	ram=$(lr_report_domain ram)
	case $LR_MODE:$ram in
	*:) lr_fail "dry run: no RAM verdict for $LR in the report: $(tr -d '\n' </tmp/report.json | head -c 600)" ;;
	in-place:*disk*) lr_fail "dry run: $LR's RAM would go to disk: $ram" ;;
	esac
	report PASS "harness/$HARNESS_CASE/preflight" "dry run: $LR $(lr_report_domain action), ram: $ram"
}

# (b) host-update, stopped before the kexec to carry what a disk keeps.
stage2_update() {
	[ -f /tmp/next-initrd.cpio ] || harness_make_initrd /tmp/next-initrd.cpio ||
		fail "could not build the next initramfs"
	cmdline=$(lr_next_cmdline)

	harness_log "host-update ($LR_MODE): the agent stops right before the kexec"
	$KVMLU --socket $AG_SOCK host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$cmdline" >/tmp/hu.out 2>&1 &
	apid=$(ag_wait_test_stop $LV/agent.log kvmlu-agent:kexec) ||
		lr_fail "kvmlu-agent did not reach the kexec: $(tail -n 3 /tmp/hu.out | tr '\n' ' ')"
	st=$(lr_virsh domstate $LR --reason 2>&1 | head -n 1)
	harness_log "at the kexec: $LR $st; $(ls -l $LR_SAVE 2>&1)"
	grep -a ': phase ' $LV/agent.log | sed 's/^/agent| /'
	# Each QEMU libvirt ended (the managed save's, domain-replace-qemu's)
	# was reaped at once: libvirt did not wait for one to die.
	_k=$(grep -a 'Failed to terminate process' $LV/debug.log 2>/dev/null | head -n 1 | cut -c1-200)
	[ -z "$_k" ] || lr_fail "libvirt waited for a QEMU it ended to die: $_k"
	_q=${new:-$pid}
	[ -d /proc/$_q ] && lr_fail "the saved QEMU $_q is still there at the kexec: $(grep -E '^(State|PPid):' /proc/$_q/status 2>/dev/null | tr '\n\t' '  ')"
	[ -f $LR_SAVE ] || lr_fail "no managed-save image $LR_SAVE at the kexec ($st)"
	[ -n "$LR_BENCH" ] || [ "$(lr_virsh domstate $LO 2>&1 | head -n 1)" = running ] && [ ! -e $LV/config/libvirt/qemu/save/$LO.save ] ||
		lr_fail "the opted-out $LO is '$(lr_virsh domstate $LO 2>&1 | head -n 1)' at the kexec: $(ls $LV/config/libvirt/qemu/save/)"
	size=$(stat -c %s $LR_SAVE)
	case $LR_MODE in
	in-place)
		[ "$size" -lt $LR_IMAGE_MAX ] || lr_fail "the image is $size bytes: the RAM went to disk"
		held=$(lr_held_fd "$apid") || lr_fail "kvmlu-agent ($apid) holds no $LR_RAM_MIB MiB file at the kexec"
		sha=$(lr_sum "$held")
		[ ${#sha} = 32 ] || lr_fail "could not sum the agent's $held"
		harness_log "at the kexec: the agent's $held -> $(readlink "$held"), sum $sha"
		;;
	save)
		[ "$size" -ge $LR_IMAGE_MAX ] || lr_fail "managed save: the image is only $size bytes, the RAM is not in it"
		sha=
		;;
	esac
	a=$(lr_last_ack)
	s2=$(lr_status)
	lr_check_sequence "before the kexec"
	# What a disk keeps, streamed (a managed save of the bench's RAM does
	# not fit twice in /tmp); its size first, so that the next stage
	# reads that much and not the whole partition.
	carry="${LV#/}/config ${LV#/}/cache ${LV#/}/agent ${LV#/}/history ${LV#/}/agent.json ${LV#/}/qemu.json ${LV#/}/kvmlu-qemu ${LR_SERIAL#/}"
	tb=$(cd / && tar cf - $carry | wc -c)
	[ "$tb" -gt 0 ] || fail "tar of $LV failed"
	printf 'ack=%s\nstatus=%s\nsha=%s\nsize=%s\nsum=%s\ntar=%s\nend\n' "$a" "$s2" "$sha" "$size" "$sum" "$tb" >/tmp/expect
	dd if=/tmp/expect of=$LR_STATE bs=1M conv=notrunc,fsync 2>/dev/null || fail "could not write the expectations"
	if [ -n "$LR_BENCH" ]; then
		# The stop line was the agent's last write to its log.
		echo "KVMLU-HARNESS: lvbench stop $(lr_rt_of $LV/agent.log)"
		lr_bench_agent_lines agent2
		# libvirt's QMP traffic with its times: where the save went.
		grep -a 'QEMU_MONITOR_SEND_MSG\|QEMU_MONITOR_RECV_EVENT\|qemuProcessStop\|qemuProcessKill' \
			$LV/debug.log 2>/dev/null | tail -n 20 | cut -c1-220 | sed 's/^/KVMLU-HARNESS: lvbench libvirt2 /'
		tail -n 40 $LV/debug.log 2>/dev/null | cut -c1-220 | sed 's/^/KVMLU-HARNESS: lvbench libvirt2-tail /'
		echo "KVMLU-HARNESS: lvbench image_bytes=$size ram_mib=$LR_RAM_MIB mode=$LR_MODE"
		# The saved QEMU: gone, or still there (and as what) when libvirt gave up on it.
		echo "KVMLU-HARNESS: lvbench old-qemu $pid $(grep -E '^(State|PPid):' /proc/$pid/status 2>/dev/null | tr '\n\t' '  ')"
		lr_bench_anchor stage2
	fi
	(cd / && tar cf - $carry) | dd of=$LR_STATE bs=1M seek=$LR_TAR_SEEK_MIB conv=notrunc,fsync 2>/dev/null ||
		fail "could not write the state to $LR_STATE"
	harness_log "carried on $LR_STATE: $tb bytes; image $size bytes; ack $a; $s2"
	report PASS "harness/$HARNESS_CASE/image" "managed-save image $size bytes for $LR_RAM_MIB MiB ($LR_MODE)"
	# The bench counts the blackout on from this line's host stamp.
	echo "KVMLU-HARNESS: lvbench cont"
	kill -CONT "$apid"
	sleep 120
	lr_fail "still here 120 s after the agent went on to the kexec: $(tail -n 3 /tmp/hu.out | tr '\n' ' ')"
}

lr_expect() { sed -n "s/^$1=//p" /tmp/expect | head -n 1; }

stage3() {
	lr_need
	dd if=$LR_STATE bs=1M count=1 2>/dev/null | sed '/^end$/q' >/tmp/expect
	grep -q '^end$' /tmp/expect || fail "no expectations on $LR_STATE from stage 2"
	a=$(lr_expect ack) s2=$(lr_expect status) sha=$(lr_expect sha)
	tb=$(lr_expect tar)
	(cd / && dd if=$LR_STATE bs=1M skip=$LR_TAR_SEEK_MIB count=$(((tb + 1048575) >> 20)) 2>/dev/null | tar xf -) ||
		fail "could not read stage 2's directories back from $LR_STATE"
	lr_boot_dirs
	[ -f $LR_SAVE ] || fail "no managed-save image after the kexec"

	# kvmlu-restore.service: before libvirtd; libvirt domains stay pending.
	$KVMLU_AGENT --config $AG_CONF --restore >/tmp/restore.out 2>&1
	rc=$?
	sed 's/^/restore| /' /tmp/restore.out
	[ $rc = 0 ] || lr_fail "kvmlu-agent --restore exited $rc"
	# kvmlu-agent.service; libvirtd not there yet: the agent must wait for it.
	lr_agent_start
	# Bench mode: no judging in the blackout (a real host has none).
	[ -n "$LR_BENCH" ] || stage3_pending
	[ -n "$LR_BENCH" ] && echo "KVMLU-HARNESS: lvbench libvirtd exec"
	lr_libvirtd_start
	[ -n "$LR_BENCH" ] && echo "KVMLU-HARNESS: lvbench libvirtd up"
	report PASS "harness/$HARNESS_CASE/libvirtd_after_kexec" "libvirtd started again and answered in $LR_LIBVIRTD_MS ms; $LR was pending until then"
	stage3_running
}

# Before libvirtd: the domain pending, and (in-place) its RAM untaken.
stage3_pending() {
	$KVMLU --socket $AG_SOCK report --json >/tmp/report.json || lr_fail "kvmlu report --json failed"
	res=$(lr_report_domain result)
	[ "$res" = pending ] || lr_fail "without libvirtd, $LR is '$res' in the report, not pending"
	if [ $LR_MODE = in-place ]; then
		# While libvirtd is away the session stays untaken in the kernel
		# (a retrieved one would live only as long as the agent): the
		# agent holds no RAM yet (section 8, after the kexec).
		sleep 3
		held=$(lr_held_fd "$(cat /tmp/agent.pid)") &&
			lr_fail "kvmlu-agent holds a $LR_RAM_MIB MiB file ($held) before libvirtd answers"
	fi
}

stage3_running() {
	_until=$(deadline_in 900)
	while [ "$(lr_state)" != running ] && before "$_until"; do sleep 2; done
	[ "$(lr_state)" = running ] || lr_fail "$LR is '$(lr_state)' 900 s after libvirtd started"
	[ "$(lr_virsh domuuid $LR)" = "$LR_UUID" ] || lr_fail "the UUID changed"
	$KVMLU --socket $AG_SOCK report >/tmp/report.txt 2>&1
	sed 's/^/report| /' /tmp/report.txt
	$KVMLU --socket $AG_SOCK report --json >/tmp/report.json || lr_fail "kvmlu report --json failed"
	act=$(lr_report_domain action) res=$(lr_report_domain result) down=$(lr_report_domain downtime_ns)
	want=$LR_ACTION_IN_PLACE
	[ $LR_MODE = save ] && want=managed-save
	[ "$act" = "$want" ] && [ "$res" = ok ] && [ -n "$down" ] && [ "$down" -gt 0 ] ||
		lr_fail "report: $LR action '$act' result '$res' downtime_ns '$down', want $want ok"
	if [ $LR_MODE = in-place ]; then
		p=$(lr_report_domain $LR_KEY_SUM_PAUSE) b=$(lr_report_domain $LR_KEY_SUM_RUN)
		[ -n "$p" ] && [ "$p" = "$b" ] || lr_fail "report: $LR_KEY_SUM_PAUSE '$p', $LR_KEY_SUM_RUN '$b'"
		[ "$p" = "$sha" ] || lr_fail "report: $LR_KEY_SUM_PAUSE $p, but the RAM the agent held at the kexec sums to $sha"
		report PASS "harness/$HARNESS_CASE/checksum" "sum $sha of the RAM the agent held at the kexec, after RETRIEVE, and the journal's $LR_KEY_SUM_PAUSE and $LR_KEY_SUM_RUN"
	fi
	report PASS "harness/$HARNESS_CASE/kexec" "$LR $act, result $res, downtime $(echo "$down" | ns_ms) ms"
	if [ -n "$LR_BENCH" ]; then
		lr_bench_anchor stage3
		lr_bench_agent_lines agent3
		# libvirt's restore with its times: QEMU's launch, its monitor,
		# the incoming load, cont (and any capabilities probe before them).
		grep -aE 'qemuProcessLaunch|qemuProcessWaitForMonitor|Handshake complete|running with pid|virQEMUCaps[A-Za-z]*:|"execute":"(qmp_capabilities|migrate-incoming|cont)"|"event": "(MIGRATION|RESUME)"' \
			$LV/debug.log 2>/dev/null | grep -v MIGRATION_PASS | tail -n 60 | cut -c1-220 | sed 's/^/KVMLU-HARNESS: lvbench libvirt3 /'
		echo "KVMLU-HARNESS: lvbench journal downtime_ns=$down action=$act"
	fi
	[ -n "$LR_BENCH" ] || stage3_optout
	stage3_identity
	[ -n "$LR_BENCH" ] && pass "bench: libvirt domain $LR ($LR_MODE, $LR_RAM_MIB MiB) through a host kexec: same boot, acks in sequence"
	stage3_end
}

# The opted-out domain: never saved, so the kexec ended it; its report
# entry, if any, says it was left alone.
stage3_optout() {
	ost=$(lr_virsh domstate $LO 2>&1 | head -n 1)
	[ "$ost" = "shut off" ] && [ ! -e $LV/config/libvirt/qemu/save/$LO.save ] ||
		lr_fail "the opted-out $LO is '$ost' after the kexec: $(ls $LV/config/libvirt/qemu/save/)"
	oact=$(lr_report_domain action $LO_UUID)
	[ -z "$oact" ] || [ "$oact" = left-alone ] || lr_fail "report: the opted-out $LO's action is '$oact'"
	report PASS "harness/$HARNESS_CASE/optout" "$LO left alone: no managed save, $ost after the kexec${oact:+, report: $oact}"
}

stage3_identity() {
	lr_wait_ack $((a + LR_MORE)) 600 "after the kexec"
	lr_check_sequence "after the kexec"
	lr_wait_status_after "$s2" 300 "after the kexec"
	s3=$(lr_status)
	harness_log "before: $s2"
	harness_log "after:  $s3"
	for k in pid boot; do
		[ -n "$(field "$s2" $k)" ] && [ "$(field "$s2" $k)" = "$(field "$s3" $k)" ] || lr_fail "$k changed: $s2 / $s3"
	done
	[ "$(field "$s3" counter)" -gt "$(field "$s2" counter)" ] || lr_fail "the counter did not go on: $s2 / $s3"
	awk -v a="$(field "$s2" uptime)" -v b="$(field "$s3" uptime)" 'BEGIN { exit !(b > a) }' ||
		lr_fail "the guest's uptime went back: $s2 / $s3"
	[ "$(grep -ac KVMLU-LINUX-GUEST-UP $LR_SERIAL)" = 1 ] || lr_fail "the guest booted again"
	report PASS "harness/$HARNESS_CASE/identity" "boot $(field "$s3" boot), counter pid $(field "$s3" pid) $(field "$s2" counter) -> $(field "$s3" counter), acks $a -> $(lr_last_ack) in sequence"
}

# virsh suspend, resume and shutdown; the records on the guest's disk.
stage3_end() {
	out=$(lr_virsh suspend $LR 2>&1) || lr_fail "virsh suspend: $out"
	[ "$(lr_state)" = paused ] || lr_fail "domstate $(lr_state) after virsh suspend"
	b=$(lr_last_ack)
	sleep 3
	[ "$(lr_last_ack)" = "$b" ] || lr_fail "acks went on while suspended: $b -> $(lr_last_ack)"
	out=$(lr_virsh resume $LR 2>&1) || lr_fail "virsh resume: $out"
	lr_wait_ack $((b + 2)) 300 "after virsh resume"
	report PASS "harness/$HARNESS_CASE/virsh" "suspend held the acks at $b, resume: $(lr_last_ack)"

	# The end, then the disk is judged. virsh shutdown: the ACPI power button, which the guest's acpid turns
	# into a stop of its writer and a power-off (tests/guest/linux/init).
	out=$(lr_virsh shutdown $LR 2>&1) || lr_fail "virsh shutdown: $out"
	_until=$(deadline_in 300)
	while ! grep -aq 'KVMLU-RECORDS-DONE' $LR_SERIAL && before "$_until"; do usleep 500000; done
	done_n=$(grep -a -o 'KVMLU-RECORDS-DONE n=[0-9]*' $LR_SERIAL | sed 's/.*n=//')
	last=$(lr_last_ack)
	[ -n "$done_n" ] && [ "$done_n" = "$last" ] || lr_fail "the writer stopped at '$done_n', last ack $last"
	_until=$(deadline_in 120)
	while [ "$(lr_state)" != "shut off" ] && before "$_until"; do sleep 1; done
	[ "$(lr_state)" = "shut off" ] || lr_fail "$LR is '$(lr_state)' 120 s after virsh shutdown"
	grep -aq 'KVMLU-ACPI-POWER' $LR_SERIAL || lr_fail "the guest never saw the power button of virsh shutdown"
	report PASS "harness/$HARNESS_CASE/shutdown" "virsh shutdown: the guest's power button stopped its writer at rec $done_n, it powered off, the domain is shut off"
	/sbin/e2fsck -fn /dev/vda1 >/tmp/fsck 2>&1 || fail "e2fsck -fn /dev/vda1: $(tail -n 1 /tmp/fsck)"
	/sbin/debugfs -R 'cat /records' /dev/vda1 >/tmp/records 2>/dev/null || fail "debugfs could not read /records"
	_bad=$(awk '$0 != "rec " NR { print "line " NR " is \"" $0 "\""; exit }' /tmp/records)
	m=$(wc -l </tmp/records)
	[ -z "$_bad" ] && [ "$m" = "$last" ] || fail "/records: $m lines, last ack $last, $_bad"
	report PASS "harness/$HARNESS_CASE/records" "rec 1..$m in order, e2fsck clean, acks before the kexec up to $a"
	pass "libvirt domain $LR ($LR_MODE) through domain-replace-qemu and a host kexec under libvirtd in the QEMU host: same boot, acks $a -> $last, rec 1..$m on its disk"
}
