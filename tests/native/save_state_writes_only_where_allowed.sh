#!/bin/bash
# Proves: save-state creates its file only in the directory that holds the
# VM's control socket, and there only as a new regular file: a path
# outside that directory (absolute elsewhere, or escaping with ..), a
# device node, a symlink, a directory or a FIFO under the name, a name
# ending in .sock, and an existing file without "overwrite":true are all
# refused, and each leaves what was there as it was. A bare name and
# DIR/NAME are written (reply path is DIR/NAME, mode 0600); overwrite
# replaces an existing regular file. No temp file is left behind.
. "$(dirname "$0")/lib.sh"
kv_init
outside=$(mktemp -d "${TMPDIR:-/tmp}/kvmlu-outside.XXXXXX")
trap 'kv_cleanup; rm -rf "$outside"' EXIT

kv_start --memory 64M
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60
kv_ok '{"cmd":"pause"}'
dir=$(readlink -f "$KV_DIR")

save() { # save ARGS_JSON: save-state with those args, reply in KV_REPLY
	kv_request "{\"cmd\":\"save-state\",\"args\":$1}" 60
	kv_log "save-state $1 -> $KV_REPLY"
}
refused() { # refused ARGS_JSON CLASS TEXT: save-state must fail so, saying TEXT
	save "$1"
	[ "$(jq -r .ok <<<"$KV_REPLY")" = false ] || kv_fail "save-state $1 was not refused"
	[ "$(jq -r .error.class <<<"$KV_REPLY")" = "$2" ] || kv_fail "save-state $1: class is not $2"
	grep -qF -- "$3" <<<"$(jq -r .error.desc <<<"$KV_REPLY")" ||
		kv_fail "save-state $1: error does not say '$3'"
}

kv_log "stage 1: paths outside the socket's directory"
refused "{\"path\":\"$outside/s.dtb\"}" InvalidRequest "the only directory save-state writes to"
refused "{\"path\":\"$KV_DIR/../$(basename "$outside")/s.dtb\"}" InvalidRequest "is not in"
refused '{"path":"sub/s.dtb"}' InvalidRequest "is not in"
refused '{"path":".."}' InvalidRequest "starts with '.'"
refused '{"path":"other.sock"}' InvalidRequest "names control sockets"
[ -z "$(ls -A "$outside")" ] || kv_fail "save-state created $(ls -A "$outside") outside $KV_DIR"

kv_log "stage 2: names that are not regular files stay what they are"
if mknod "$KV_DIR/null" c 1 3 2>/dev/null; then
	refused '{"path":"null","overwrite":true}' InvalidRequest "null is a device node"
	[ -c "$KV_DIR/null" ] || kv_fail "the device node $KV_DIR/null was replaced"
else
	kv_log "cannot mknod here (not root?): device node case not run"
fi
ln -s "$outside/target" "$KV_DIR/link.dtb"
refused '{"path":"link.dtb","overwrite":true}' InvalidRequest "link.dtb is a symlink"
[ -L "$KV_DIR/link.dtb" ] || kv_fail "the symlink was replaced"
[ -e "$outside/target" ] && kv_fail "save-state wrote through the symlink"
mkdir "$KV_DIR/adir"
refused '{"path":"adir","overwrite":true}' InvalidRequest "adir is a directory"
mkfifo "$KV_DIR/fifo"
refused '{"path":"fifo","overwrite":true}' InvalidRequest "fifo is a FIFO"
[ -p "$KV_DIR/fifo" ] || kv_fail "the FIFO was replaced"

kv_log "stage 3: new files, and an existing one only with overwrite"
save '{"path":"s.dtb"}'
[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] || kv_fail "save-state of a bare name failed"
[ "$(kv_ret path)" = "$dir/s.dtb" ] || kv_fail "reply path $(kv_ret path), want $dir/s.dtb"
[ "$(stat -c '%F %a' "$KV_DIR/s.dtb")" = "regular file 600" ] ||
	kv_fail "s.dtb is $(stat -c '%F %a' "$KV_DIR/s.dtb")"
echo precious >"$KV_DIR/keep.dtb"
refused "{\"path\":\"$KV_DIR/keep.dtb\"}" InvalidRequest '"overwrite":true'
[ "$(cat "$KV_DIR/keep.dtb")" = precious ] || kv_fail "keep.dtb was replaced without overwrite"
save "{\"path\":\"$KV_DIR/keep.dtb\",\"overwrite\":true}"
[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] || kv_fail "save-state with overwrite failed"
dtc -I dtb -O dts "$KV_DIR/keep.dtb" 2>/dev/null | grep -q 'compatible = "kvmlu,vm-state' ||
	kv_fail "keep.dtb is not a state after overwrite"
refused '{"path":"s.dtb","overwrite":"yes"}' InvalidRequest "overwrite must be true or false"
leftover=$(find "$KV_DIR" -name '*.tmp')
[ -z "$leftover" ] || kv_fail "temp files left: $leftover"

kv_ok '{"cmd":"resume"}'
kv_stop
kv_pass
