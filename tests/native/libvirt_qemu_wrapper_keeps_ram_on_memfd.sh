#!/bin/bash
# Proves: kvmlu-qemu (the sanitizer build) as the <emulator> of a real
# libvirt 9.0 domain with <source type='memfd'/> starts it on QEMU with
# pc.ram a memory-backend-file on /proc/self/fd/N (N >= 100), shared,
# sized as libvirt asked, backed by the memfd "kvmlu-lv:<uuid>:pc.ram"
# that QEMU maps; kvmlu's QMP socket answers beside libvirt's monitor,
# which still works (suspend, resume); a managed save and the restore
# (-incoming defer) go through the wrapper too, with a new memfd; and a
# domain with <access mode='private'/> is refused with the wrapper's own
# line, nothing started.
# libvirtd runs privately in session mode (as nobody when run as root,
# like tests/unit/agent/test_libvirt_domains.c), every file in a temp dir;
# the domains are TCG with no disk (SeaBIOS waits: all this needs).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
name=$(basename "$0" .sh)
wrapper=${KVMLU_QEMU_WRAPPER:-$top/build/san/bin/kvmlu-qemu}
qemu=/usr/bin/qemu-system-x86_64
uuid=6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a21
uuid_private=6f1b6a4e-3c0e-4c52-9b1e-2a7e0d9c4a22
dir= daemon= uri=

log() { echo "[$name] $*"; }
skip() { echo "$*"; exit 77; }
fail() {
	log "failed: $*"
	for f in $(find "$dir" -name 'kv-*.log' 2>/dev/null) "$dir/daemon.log"; do
		[ -f "$f" ] && { log "$f (last 15 lines):"; tail -n 15 "$f"; }
	done
	echo "FAIL: $name: $*"
	exit 1
}

[ -x "$wrapper" ] || fail "$wrapper not built (make tests-build)"
[ -x /usr/sbin/libvirtd ] || skip "no /usr/sbin/libvirtd (libvirt-daemon-system not installed)"
command -v virsh >/dev/null || skip "no virsh (libvirt-clients not installed)"
[ -x "$qemu" ] || skip "no $qemu"
command -v python3 >/dev/null || skip "python3 not installed (the QMP checks)"
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || skip "no setpriv to run libvirtd as nobody"
	# The daemon, and so the wrapper, run as nobody: it must reach the binary.
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$wrapper" ||
		skip "nobody cannot run $wrapper (a checkout nobody cannot read)"
fi

cleanup() {
	if [ -n "$daemon" ]; then
		for d in $(virsh -c "$uri" list --name 2>/dev/null); do
			virsh -c "$uri" destroy "$d" >/dev/null 2>&1
		done
		kill "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	# A QEMU the daemon left behind (it was killed mid-start): by its pid file.
	for p in $(find "$dir" -name 'kv-*.pid' 2>/dev/null); do
		pid=$(cat "$p" 2>/dev/null)
		[ -n "$pid" ] && grep -q "$dir" "/proc/$pid/cmdline" 2>/dev/null && kill -KILL "$pid"
	done
	[ -n "$dir" ] && rm -rf "$dir"
}
trap cleanup EXIT

dir=$(mktemp -d /tmp/kvmlu-lvwrap-XXXXXX)
chmod 755 "$dir"
mkdir -p "$dir/run" "$dir/config/libvirt" "$dir/cache" "$dir/lv"
echo 'stdio_handler = "file"' >"$dir/config/libvirt/qemu.conf"
printf '{"qemu": "%s", "qmp_dir": "%s/lv"}\n' "$qemu" "$dir" >"$dir/qemu.json"
# libvirt clears the emulator's environment: this script sets the config.
printf '#!/bin/sh\nKVMLU_QEMU_CONFIG=%s/qemu.json exec %s "$@"\n' "$dir" "$wrapper" >"$dir/kvmlu-qemu"
chmod 755 "$dir/kvmlu-qemu"
domain_xml() { # domain_xml NAME UUID ACCESS
	cat <<EOF
<domain type='qemu'><name>$1</name><uuid>$2</uuid>
<memory unit='MiB'>64</memory><vcpu>1</vcpu>
<memoryBacking><source type='memfd'/><access mode='$3'/></memoryBacking>
<os><type arch='x86_64' machine='pc'>hvm</type></os>
<devices><emulator>$dir/kvmlu-qemu</emulator>
<video><model type='none'/></video><memballoon model='none'/></devices></domain>
EOF
}
domain_xml kv-shared "$uuid" shared >"$dir/shared.xml"
domain_xml kv-private "$uuid_private" private >"$dir/private.xml"
[ "$(id -u)" = 0 ] && chown -R 65534:65534 "$dir"

log "stage 1: a private libvirtd in session mode"
as=()
[ "$(id -u)" = 0 ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
"${as[@]}" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$dir" XDG_RUNTIME_DIR="$dir/run" \
	XDG_CONFIG_HOME="$dir/config" XDG_CACHE_HOME="$dir/cache" /usr/sbin/libvirtd \
	>"$dir/daemon.log" 2>&1 &
daemon=$!
uri="qemu+unix:///session?socket=$dir/run/libvirt/libvirt-sock"
for i in $(seq 1 300); do
	[ -S "$dir/run/libvirt/libvirt-sock" ] && virsh -c "$uri" version >/dev/null 2>&1 && break
	kill -0 "$daemon" 2>/dev/null || skip "the private libvirtd exited at start (see a run by hand)"
	sleep 0.1
done
virsh -c "$uri" version >/dev/null 2>&1 || skip "the private libvirtd did not answer within 30 s"
v=$(virsh -c "$uri" version | sed -n 's/^Using library: libvirt //p')
[ "${v%%.*}" -ge 9 ] 2>/dev/null || skip "libvirt $v: the wrapper reads libvirt >= 9.0's JSON -object"

virsh -c "$uri" define "$dir/shared.xml" >/dev/null || fail "define kv-shared"
virsh -c "$uri" define "$dir/private.xml" >/dev/null || fail "define kv-private"

qmp() { # qmp SOCKET: query-memdev, the type of /objects/pc.ram and its mem-path, one line each
	timeout 30 python3 - "$1" <<'EOF'
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
def cmd(c, args=None):
    m = {"execute": c}
    if args:
        m["arguments"] = args
    f.write((json.dumps(m) + "\n").encode())
    f.flush()
    r = answer()
    if "return" not in r:
        sys.exit("%s: %s" % (c, r))
    return r["return"]
answer()
cmd("qmp_capabilities")
print(json.dumps(cmd("query-memdev"), sort_keys=True))
print([o["type"] for o in cmd("qom-list", {"path": "/objects"}) if o["name"] == "pc.ram"])
print(cmd("qom-get", {"path": "/objects/pc.ram", "property": "mem-path"}))
EOF
}

check_running_on_memfd() { # check_running_on_memfd WHAT
	local pidfile pid out memdev fdno link
	pidfile=$(find "$dir" -name kv-shared.pid | head -n 1)
	pid=$(cat "$pidfile" 2>/dev/null)
	[ -n "$pid" ] && [ -d "/proc/$pid" ] || fail "$1: no QEMU pid ($pidfile)"
	[ -S "$dir/lv/$uuid.qmp" ] || fail "$1: no kvmlu QMP socket $dir/lv/$uuid.qmp"
	out=$(qmp "$dir/lv/$uuid.qmp") || fail "$1: kvmlu's QMP socket: $out"
	memdev=$(sed -n 1p <<<"$out")
	echo "$memdev" | python3 -c '
import json, sys
m = json.load(sys.stdin)
assert len(m) == 1, m
assert m[0]["id"] == "pc.ram" and m[0]["share"] is True and m[0]["size"] == 64 << 20, m
assert m[0]["prealloc"] is False, m' || fail "$1: query-memdev: $memdev"
	[ "$(sed -n 2p <<<"$out")" = "['child<memory-backend-file>']" ] ||
		fail "$1: /objects/pc.ram is $(sed -n 2p <<<"$out")"
	fdno=$(sed -n 's|^/proc/self/fd/\([0-9]*\)$|\1|p' <<<"$(sed -n 3p <<<"$out")")
	[ -n "$fdno" ] && [ "$fdno" -ge 100 ] || fail "$1: mem-path $(sed -n 3p <<<"$out")"
	link=$(readlink "/proc/$pid/fd/$fdno")
	[ "$link" = "/memfd:kvmlu-lv:$uuid:pc.ram (deleted)" ] || fail "$1: QEMU's fd $fdno is $link"
	grep -q "/memfd:kvmlu-lv:$uuid:pc.ram (deleted)" "/proc/$pid/maps" ||
		fail "$1: QEMU does not map the memfd"
	log "$1: pid $pid, pc.ram memory-backend-file share=true on fd $fdno -> $link"
}

log "stage 2: the memfd domain starts through kvmlu-qemu"
out=$(virsh -c "$uri" start kv-shared 2>&1) || fail "start kv-shared: $out"
check_running_on_memfd "started"
grep -q "kvmlu-qemu: domain $uuid: pc.ram (67108864 bytes) on memfd fd" \
	"$(find "$dir" -name kv-shared.log | head -n 1)" || fail "no kvmlu-qemu line in the domain log"

log "stage 3: libvirt's own monitor still works"
virsh -c "$uri" suspend kv-shared >/dev/null || fail "suspend"
[ "$(virsh -c "$uri" domstate kv-shared)" = paused ] || fail "not paused after suspend"
virsh -c "$uri" resume kv-shared >/dev/null || fail "resume"
[ "$(virsh -c "$uri" domstate kv-shared)" = running ] || fail "not running after resume"

log "stage 4: managed save, then the restore (-incoming defer) through the wrapper"
out=$(virsh -c "$uri" managedsave kv-shared 2>&1) || fail "managedsave: $out"
out=$(virsh -c "$uri" start kv-shared 2>&1) || fail "restore: $out"
[ "$(virsh -c "$uri" domstate kv-shared)" = running ] || fail "not running after the restore"
grep -q "memfd fd [0-9]* (new and empty: -incoming fills it)" \
	"$(find "$dir" -name kv-shared.log | head -n 1)" || fail "the restore did not go through kvmlu-qemu"
check_running_on_memfd "restored"
virsh -c "$uri" destroy kv-shared >/dev/null || fail "destroy"

log "stage 5: <access mode='private'/> is refused by the wrapper, nothing runs"
if out=$(virsh -c "$uri" start kv-private 2>&1); then
	fail "kv-private started: $out"
fi
grep -q "kvmlu-qemu: refusing to start QEMU: pc.ram has share=false" <<<"$out" ||
	grep -q "kvmlu-qemu: refusing to start QEMU: pc.ram has share=false" \
		"$(find "$dir" -name kv-private.log | head -n 1)" ||
	fail "the refusal is not the wrapper's: $out"
[ "$(virsh -c "$uri" domstate kv-private)" = "shut off" ] || fail "kv-private not shut off"
[ ! -e "$dir/lv/$uuid_private.qmp" ] || fail "a QMP socket for the refused domain"
echo "PASS: $name"
