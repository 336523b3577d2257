#!/bin/bash
# Proves: one disk given twice to one VM (the same path, another spelling
# of it, a symlink to it; read-write or read-only) starts nothing and the
# error names both disks, instead of blaming "another VM" for the lock the
# first disk holds.
. "$(dirname "$0")/lib.sh"
kv_init
img=$KV_DIR/disk.raw
truncate -s 4M "$img"
ln -s "$img" "$KV_DIR/link.raw"

# twice ARGS...: kvmlu-vmm run with these --disk arguments must refuse.
twice() {
	local rc
	timeout 20 "$KV_VMM" run --name twice --memory 64M --cpus 1 --payload "$KV_WITNESS" \
		--serial "$KV_DIR/twice.serial" --control "$KV_DIR/twice.sock" "$@" 2>"$KV_DIR/twice.err"
	rc=$?
	kv_log "$*: exit $rc: $(tail -n 1 "$KV_DIR/twice.err")"
	[ $rc = 1 ] || kv_fail "$*: exit $rc, expected 1"
	grep -q 'the same file as disk 0 (' "$KV_DIR/twice.err" || kv_fail "$*: the error does not name the duplicate"
	grep -q 'another VM' "$KV_DIR/twice.err" && kv_fail "$*: blames another VM"
	[ -e "$KV_DIR/twice.sock" ] && kv_fail "$*: left a control socket"
	return 0
}

twice --disk "$img" --disk "$img"
twice --disk "$img" --disk "$KV_DIR/../$(basename "$KV_DIR")/disk.raw"
twice --disk "$img" --disk "$KV_DIR/link.raw"
twice --disk "$img,readonly" --disk "$KV_DIR/link.raw,readonly"
kv_pass
