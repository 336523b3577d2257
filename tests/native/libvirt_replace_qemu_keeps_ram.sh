#!/bin/bash
# Proves: `kvmlu domain-replace-qemu` restarts a running libvirt 9.0 domain
# on a new QEMU process with its RAM kept in place. The domain (through
# kvmlu-qemu, memfd RAM, TCG) boots the project's Linux guest, whose
# counter process and boot id prove it is the same guest afterwards:
#   - the reply: old and new QEMU pids differ, the RAM checksum at the
#     pause equals the one on the new QEMU, the managed save carried
#     device state only (image_bytes < 16 MiB of a 256 MiB guest), state
#     running;
#   - libvirt: the same UUID, `virsh domstate` running, the new QEMU's pid
#     is the pid file's, its pc.ram fd is the very memfd the first start
#     made (same name, same inode), and its kvmlu QMP socket says
#     x-ignore-shared is off again;
#   - the guest: the same counter process (and boot id, where its init
#     prints one), the counter and uptime going on past their values
#     before, and it booted once (one UP line);
#   - afterwards libvirt's suspend and resume work, and a managed save
#     now carries the RAM (the capability is off) and restores;
#   - fault: the start on the new QEMU fails (the agent stopped with the
#     RAM held by KVMLU_TEST_STOP_AT, the QEMU binary made missing): the
#     reply says how to retry, the domain is shut off with its managed
#     save, a `virsh start` meanwhile is refused by the agent and changes
#     nothing, and the retry runs it with its RAM equal;
#   - fault: with the test hook that changes one byte of the held RAM
#     (KVMLU_TEST_LVRAM_CORRUPT, build/san only), the replacement answers
#     ChecksumMismatch and the domain stays paused on its new QEMU;
#   - fault: QEMU killed after the suspend (the agent stopped there by
#     KVMLU_TEST_STOP_AT): the reply says it died during the save and the
#     running state is lost, no managed save is left, nothing is held (a
#     plain start boots it afresh).
# libvirtd runs privately in session mode as nobody (as in
# libvirt_qemu_wrapper_keeps_ram_on_memfd.sh); kvmlu-agent runs as root
# (pidfd_getfd of the QEMU) on sockets in the same temp dir.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
name=$(basename "$0" .sh)
wrapper=${KVMLU_QEMU_WRAPPER:-$top/build/san/bin/kvmlu-qemu}
agent=$top/build/san/bin/kvmlu-agent
cli=$top/build/san/bin/kvmlu
qemu=/usr/bin/qemu-system-x86_64
uuid=7a2c5e10-4b1d-4e6f-8a3b-1c9d0e2f3a41
dir= daemon= agent_pid= uri= cli_pid=

log() { echo "[$name] $*"; }
skip() { echo "$*"; exit 77; }
fail() {
	log "failed: $*"
	for f in $(find "$dir" -name 'kv-*.log' 2>/dev/null) "$dir/daemon.log" "$dir/agent.log" \
		"$dir/serial.log"; do
		[ -f "$f" ] && { log "$f (last 15 lines):"; tail -n 15 "$f"; }
	done
	echo "FAIL: $name: $*"
	exit 1
}

[ -x "$wrapper" ] && [ -x "$agent" ] && [ -x "$cli" ] || fail "not built (make tests-build)"
[ "$(id -u)" = 0 ] || skip "needs root: the agent takes the QEMU's memfd with pidfd_getfd"
[ -x /usr/sbin/libvirtd ] || skip "no /usr/sbin/libvirtd (libvirt-daemon-system not installed)"
command -v virsh >/dev/null || skip "no virsh (libvirt-clients not installed)"
[ -x "$qemu" ] || skip "no $qemu"
command -v python3 >/dev/null || skip "python3 not installed (the checks)"
command -v setpriv >/dev/null || skip "no setpriv to run libvirtd as nobody"
setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$wrapper" ||
	skip "nobody cannot run $wrapper (a checkout nobody cannot read)"
kernel=$("$top/tests/guest/linux/fetch-kernel.sh")
rc=$?
[ $rc = 77 ] && skip "$kernel"
[ $rc = 0 ] || fail "fetch-kernel.sh exit $rc: $kernel"
initrd=$("$top/tests/guest/linux/build-initramfs.sh") || fail "build-initramfs.sh: $initrd"

cleanup() {
	if [ -n "$daemon" ]; then
		for d in $(virsh -c "$uri" list --all --name 2>/dev/null); do
			virsh -c "$uri" destroy "$d" >/dev/null 2>&1
		done
		kill "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	[ -n "$agent_pid" ] && kill -CONT "$agent_pid" 2>/dev/null
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	for p in $(find "$dir" -name 'kv-*.pid' 2>/dev/null); do
		pid=$(cat "$p" 2>/dev/null)
		[ -n "$pid" ] && grep -q "$dir" "/proc/$pid/cmdline" 2>/dev/null && kill -KILL "$pid"
	done
	[ -n "$dir" ] && rm -rf "$dir"
}
trap cleanup EXIT

dir=$(mktemp -d /tmp/kvmlu-lvrq-XXXXXX)
chmod 755 "$dir"
mkdir -p "$dir/run" "$dir/config/libvirt" "$dir/cache" "$dir/lv" "$dir/agent" "$dir/vms" \
	"$dir/history"
cp "$kernel" "$dir/vmlinuz"
cp "$initrd" "$dir/initrd"
echo 'stdio_handler = "file"' >"$dir/config/libvirt/qemu.conf"
printf '{"qemu": "%s", "qmp_dir": "%s/lv", "lvram_socket": "%s/lvram.sock"}\n' \
	"$qemu" "$dir" "$dir" >"$dir/qemu.json"
printf '#!/bin/sh\nKVMLU_QEMU_CONFIG=%s/qemu.json exec %s "$@"\n' "$dir" "$wrapper" >"$dir/kvmlu-qemu"
chmod 755 "$dir/kvmlu-qemu"
uri="qemu+unix:///session?socket=$dir/run/libvirt/libvirt-sock"
cat >"$dir/agent.json" <<EOF2
{"socket": "$dir/agent.sock", "run_dir": "$dir/vms", "history_dir": "$dir/history",
 "state_dir": "$dir/agent", "libvirt_uri": "$uri",
 "libvirt_state_file": "$dir/agent/libvirt-domains.json", "qemu_config": "$dir/qemu.json"}
EOF2
cat >"$dir/dom.xml" <<EOF2
<domain type='qemu'><name>kv-rq</name><uuid>$uuid</uuid>
<memory unit='MiB'>256</memory><vcpu>1</vcpu>
<memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>
<os><type arch='x86_64' machine='pc'>hvm</type><kernel>$dir/vmlinuz</kernel>
<initrd>$dir/initrd</initrd><cmdline>console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=1</cmdline></os>
<devices><emulator>$dir/kvmlu-qemu</emulator>
<serial type='file'><source path='$dir/serial.log' append='on'/><target port='0'/></serial>
<video><model type='none'/></video><memballoon model='none'/></devices></domain>
EOF2
chown -R 65534:65534 "$dir"

log "stage 1: a private libvirtd in session mode, kvmlu-agent"
setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	HOME="$dir" XDG_RUNTIME_DIR="$dir/run" XDG_CONFIG_HOME="$dir/config" \
	XDG_CACHE_HOME="$dir/cache" /usr/sbin/libvirtd >"$dir/daemon.log" 2>&1 &
daemon=$!
for i in $(seq 1 300); do
	[ -S "$dir/run/libvirt/libvirt-sock" ] && virsh -c "$uri" version >/dev/null 2>&1 && break
	kill -0 "$daemon" 2>/dev/null || skip "the private libvirtd exited at start (see a run by hand)"
	sleep 0.1
done
virsh -c "$uri" version >/dev/null 2>&1 || skip "the private libvirtd did not answer within 30 s"
v=$(virsh -c "$uri" version | sed -n 's/^Using library: libvirt //p')
[ "${v%%.*}" -ge 9 ] 2>/dev/null || skip "libvirt $v: the wrapper reads libvirt >= 9.0's JSON -object"

start_agent() { # start_agent [ENV=VALUE...]
	env "$@" "$agent" --config "$dir/agent.json" >>"$dir/agent.log" 2>&1 &
	agent_pid=$!
	for i in $(seq 1 100); do
		[ -S "$dir/agent.sock" ] && [ -S "$dir/lvram.sock" ] && return 0
		kill -0 "$agent_pid" 2>/dev/null || fail "kvmlu-agent exited at start"
		sleep 0.1
	done
	fail "kvmlu-agent: no agent or lvram socket within 10 s"
}
stop_agent() {
	kill "$agent_pid"
	wait "$agent_pid" 2>/dev/null
	agent_pid=
	rm -f "$dir/lvram.sock"
}
start_agent

virsh -c "$uri" define "$dir/dom.xml" >/dev/null || fail "define kv-rq"
out=$(virsh -c "$uri" start kv-rq 2>&1) || fail "start kv-rq: $out"

# status_field LINE KEY
status_field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }
last_status() { grep -a "KVMLU-GUEST-STATUS" "$dir/serial.log" 2>/dev/null | tail -n 1 | tr -d '\r'; }
wait_counter_above() { # wait_counter_above N SECONDS
	local s c
	for i in $(seq 1 $(($2 * 2))); do
		s=$(last_status)
		c=$(status_field "$s" counter)
		[ -n "$c" ] && [ "$c" -gt "$1" ] 2>/dev/null && return 0
		sleep 0.5
	done
	return 1
}
log "stage 2: the Linux guest boots (TCG: up to 5 min on a busy machine)"
wait_counter_above 2 300 || fail "the guest's counter did not pass 2 within 300 s"
before=$(last_status)
log "guest before: $before"
pidfile=$(find "$dir" -name kv-rq.pid | head -n 1)
old_pid=$(cat "$pidfile")
fdno=$(grep -ao 'mem-path":"/proc/self/fd/[0-9]*' "/proc/$old_pid/cmdline" | grep -o '[0-9]*$')
[ -n "$fdno" ] || fail "no pc.ram fd in QEMU $old_pid's command line"
old_ino=$(stat -L -c %i "/proc/$old_pid/fd/$fdno")
old_link=$(readlink "/proc/$old_pid/fd/$fdno")

log "stage 3: kvmlu domain-replace-qemu kv-rq"
out=$("$cli" --socket "$dir/agent.sock" domain-replace-qemu kv-rq --json 2>&1) ||
	fail "domain-replace-qemu: $out"
log "reply: $(tr -d '\n' <<<"$out")"
new_pid=$(python3 - "$old_pid" <<EOF2
import json, sys
r = json.loads('''$out''')
old = int(sys.argv[1])
assert r["old_pid"] == old, r
assert r["new_pid"] > 0 and r["new_pid"] != old, r
assert r["uuid"] == "$uuid", r
assert len(r["checksum"]) == 32 and r["checksum"] == r["checksum_after"], r
assert 0 < r["image_bytes"] < 16 << 20, r
assert r["memory"] == 256 << 20, r
assert r["state"] == "running", r
print(r["new_pid"])
EOF2
) || fail "the reply does not hold: $out"
[ "$(virsh -c "$uri" domstate kv-rq)" = running ] || fail "not running after the replacement"
[ "$(virsh -c "$uri" domuuid kv-rq)" = "$uuid" ] || fail "the UUID changed"
[ "$(cat "$pidfile")" = "$new_pid" ] || fail "the pid file says $(cat "$pidfile"), the reply $new_pid"
kill -0 "$old_pid" 2>/dev/null && fail "the old QEMU $old_pid still runs"
fdno=$(grep -ao 'mem-path":"/proc/self/fd/[0-9]*' "/proc/$new_pid/cmdline" | grep -o '[0-9]*$')
[ "$(stat -L -c %i "/proc/$new_pid/fd/$fdno")" = "$old_ino" ] ||
	fail "the new QEMU's fd $fdno is not the old memfd (inode $old_ino)"
[ "$(readlink "/proc/$new_pid/fd/$fdno")" = "$old_link" ] || fail "fd $fdno is not $old_link"
# libvirt's statistics of the save: pc.ram was not counted, so not written.
mem=$(sed -n 's/.*kv-rq: the save counted \([-0-9]*\) bytes of memory.*/\1/p' "$dir/agent.log" | tail -n 1)
[ -n "$mem" ] && [ "$mem" -ge 0 ] && [ "$mem" -lt $((16 << 20)) ] ||
	fail "the save's memory total is '$mem' (pc.ram 256 MiB)"
grep -q "(the RAM the agent held)" "$(find "$dir" -name kv-rq.log | head -n 1)" ||
	fail "kvmlu-qemu did not say it got the held RAM"
caps=$(timeout 30 python3 - "$dir/lv/$uuid.qmp" <<'EOF2'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
f = s.makefile("rwb")
def answer():
    while True:
        m = json.loads(f.readline())
        if "event" not in m:
            return m
answer()
for c in ("qmp_capabilities", "query-migrate-capabilities"):
    f.write((json.dumps({"execute": c}) + "\n").encode())
    f.flush()
    r = answer()
print([x["state"] for x in r["return"] if x["capability"] == "x-ignore-shared"])
EOF2
)
[ "$caps" = "[False]" ] || fail "x-ignore-shared in the new QEMU: $caps"
log "QEMU $old_pid -> $new_pid, pc.ram fd $fdno inode $old_ino kept, x-ignore-shared off"

log "stage 4: the same guest goes on"
c0=$(status_field "$before" counter)
wait_counter_above $((c0 + 2)) 120 || fail "the counter did not pass $((c0 + 2)): $(last_status)"
after=$(last_status)
log "guest after: $after"
# The counter process (and, from guests whose init prints it, the boot id).
for k in pid boot; do
	[ "$(status_field "$before" $k)" = "$(status_field "$after" $k)" ] ||
		fail "$k changed: $before / $after"
done
[ -n "$(status_field "$after" pid)" ] || fail "no counter pid in $after"
python3 -c 'import sys; sys.exit(not float(sys.argv[2]) > float(sys.argv[1]))' \
	"$(status_field "$before" uptime)" "$(status_field "$after" uptime)" ||
	fail "the guest's uptime went back: $before / $after"
[ "$(grep -ac KVMLU-LINUX-GUEST-UP "$dir/serial.log")" = 1 ] || fail "the guest booted again"

log "stage 5: suspend, resume, and a managed save that carries the RAM now"
virsh -c "$uri" suspend kv-rq >/dev/null || fail "suspend"
[ "$(virsh -c "$uri" domstate kv-rq)" = paused ] || fail "not paused after suspend"
virsh -c "$uri" resume kv-rq >/dev/null || fail "resume"
[ "$(virsh -c "$uri" domstate kv-rq)" = running ] || fail "not running after resume"
out=$(virsh -c "$uri" managedsave kv-rq 2>&1) || fail "managedsave: $out"
img=$(find "$dir" -name 'kv-rq.save' | head -n 1)
[ -n "$img" ] && [ "$(stat -c %s "$img")" -gt $((8 << 20)) ] ||
	fail "the later managed save is small ($img $(stat -c %s "$img" 2>/dev/null)): no RAM in it"
log "later managed save: $(stat -c %s "$img") bytes (RAM included)"
out=$(virsh -c "$uri" start kv-rq 2>&1) || fail "start from the managed save: $out"
[ "$(virsh -c "$uri" domstate kv-rq)" = running ] || fail "not running after the restore"
c1=$(status_field "$(last_status)" counter)
wait_counter_above $((c1 + 1)) 120 || fail "the counter stopped after the restore"
[ "$(grep -ac KVMLU-LINUX-GUEST-UP "$dir/serial.log")" = 1 ] || fail "the guest booted again"

log "stage 6: fault: the start on the new QEMU fails; image and RAM kept, virsh start refused, retry"
stop_agent
start_agent KVMLU_TEST_STOP_AT=kvmlu-agent:replace-held
"$cli" --socket "$dir/agent.sock" domain-replace-qemu kv-rq >"$dir/rq2.out" 2>&1 &
cli_pid=$!
for i in $(seq 1 1200); do
	grep -q "KVMLU_TEST_STOP_AT=kvmlu-agent:replace-held: pid" "$dir/agent.log" && break
	kill -0 "$cli_pid" 2>/dev/null || fail "domain-replace-qemu ended early: $(cat "$dir/rq2.out")"
	sleep 0.1
done
grep -q "KVMLU_TEST_STOP_AT=kvmlu-agent:replace-held: pid" "$dir/agent.log" ||
	fail "the agent did not stop with the RAM held"
[ "$(virsh -c "$uri" domstate kv-rq)" = "shut off" ] || fail "not saved: $(virsh -c "$uri" domstate kv-rq)"
# The QEMU package is broken meanwhile: the wrapper cannot exec it.
cp "$dir/qemu.json" "$dir/qemu.json.good"
printf '{"qemu": "/nonexistent/qemu", "qmp_dir": "%s/lv", "lvram_socket": "%s/lvram.sock"}\n' \
	"$dir" "$dir" >"$dir/qemu.json"
kill -CONT "$agent_pid"
wait "$cli_pid" && fail "the start on a missing QEMU succeeded: $(cat "$dir/rq2.out")"
grep -q "is kept and kvmlu-agent holds its RAM" "$dir/rq2.out" || fail "no retry advice: $(cat "$dir/rq2.out")"
[ "$(virsh -c "$uri" domstate kv-rq)" = "shut off" ] || fail "not shut off after the failed start"
virsh -c "$uri" dominfo kv-rq | grep -q "^Managed save: *yes" || fail "the managed-save image is gone"
cp "$dir/qemu.json.good" "$dir/qemu.json"
# Anyone else's start is refused while the agent holds the RAM: nothing runs unverified.
if out=$(virsh -c "$uri" start kv-rq 2>&1); then
	fail "virsh start took the held RAM: $out"
fi
grep -q "held for kvmlu domain-replace-qemu" "$(find "$dir" -name kv-rq.log | head -n 1)" ||
	fail "virsh start was not refused by the agent: $out"
virsh -c "$uri" dominfo kv-rq | grep -q "^Managed save: *yes" || fail "virsh start lost the image"
out=$("$cli" --socket "$dir/agent.sock" domain-replace-qemu kv-rq --json 2>&1) ||
	fail "the retry: $out"
python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["checksum"] == r["checksum_after"] and r["state"] == "running", r' <<<"$out" ||
	fail "the retry's reply: $out"
[ "$(virsh -c "$uri" domstate kv-rq)" = running ] || fail "not running after the retry"
c2=$(status_field "$(last_status)" counter)
wait_counter_above $((c2 + 1)) 120 || fail "the counter stopped after the retry"
[ "$(grep -ac KVMLU-LINUX-GUEST-UP "$dir/serial.log")" = 1 ] || fail "the guest booted again"
log "retry after a failed start: running, RAM equal"

log "stage 7: fault: the held RAM changed (test hook): left paused, ChecksumMismatch"
stop_agent
start_agent KVMLU_TEST_LVRAM_CORRUPT=1
pid2=$(cat "$pidfile")
if out=$("$cli" --socket "$dir/agent.sock" domain-replace-qemu "$uuid" 2>&1); then
	fail "a changed RAM was accepted: $out"
fi
grep -q "its RAM differs from the pause" <<<"$out" || fail "not the mismatch: $out"
grep -q "one byte of the held RAM changed" "$dir/agent.log" || fail "the hook did not run"
[ "$(virsh -c "$uri" domstate kv-rq)" = paused ] || fail "not left paused: $(virsh -c "$uri" domstate kv-rq)"
[ "$(cat "$pidfile")" != "$pid2" ] || fail "no new QEMU in the fault case"
log "mismatch: $(tr -d '\n' <<<"$out" | cut -c1-200)"
virsh -c "$uri" destroy kv-rq >/dev/null || fail "destroy"

log "stage 8: fault: QEMU killed after the suspend, before the save: lost, said so, nothing held"
stop_agent
start_agent KVMLU_TEST_STOP_AT=kvmlu-agent:replace-suspended
out=$(virsh -c "$uri" start kv-rq 2>&1) || fail "start kv-rq again: $out"
ups=$(grep -ac KVMLU-LINUX-GUEST-UP "$dir/serial.log")
for i in $(seq 1 600); do
	[ "$(grep -ac KVMLU-LINUX-GUEST-UP "$dir/serial.log")" -gt "$ups" ] && break
	sleep 0.5
done
pid3=$(cat "$pidfile")
"$cli" --socket "$dir/agent.sock" domain-replace-qemu kv-rq >"$dir/rq3.out" 2>&1 &
cli_pid=$!
for i in $(seq 1 600); do
	grep -q "KVMLU_TEST_STOP_AT=kvmlu-agent:replace-suspended: pid" "$dir/agent.log" && break
	kill -0 "$cli_pid" 2>/dev/null || fail "domain-replace-qemu ended early: $(cat "$dir/rq3.out")"
	sleep 0.1
done
[ "$(virsh -c "$uri" domstate kv-rq)" = paused ] || fail "not suspended at the stop"
kill -KILL "$pid3"
kill -CONT "$agent_pid"
wait "$cli_pid" && fail "a save of a killed QEMU succeeded: $(cat "$dir/rq3.out")"
grep -q "died during the save" "$dir/rq3.out" || fail "not said: $(cat "$dir/rq3.out")"
[ "$(virsh -c "$uri" domstate kv-rq)" = "shut off" ] || fail "not shut off"
virsh -c "$uri" dominfo kv-rq | grep -q "^Managed save: *no" || fail "a managed save is left"
# Nothing is held for it: a plain start boots it afresh on a new memfd.
out=$(virsh -c "$uri" start kv-rq 2>&1) || fail "start after the loss: $out"
[ "$(virsh -c "$uri" domstate kv-rq)" = running ] || fail "not running after the fresh start"
virsh -c "$uri" destroy kv-rq >/dev/null || fail "destroy"
log "QEMU killed mid-replacement: reported lost, nothing held, a fresh start works"
echo "PASS: $name"
