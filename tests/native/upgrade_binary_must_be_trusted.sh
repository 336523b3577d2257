#!/bin/bash
# Proves: `upgrade` runs as args.binary only a file that only root (or the
# VMM's own user) could have put there: a symlink, a directory (/tmp
# passed the old executable check), a world-writable copy, a copy owned by
# another uid and a non-executable copy are each refused with
# InvalidRequest naming the rule, and the VM runs on in the same process.
# A root-owned 0755 copy of kvmlu-vmm is accepted and the upgrade runs it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/upgrade_lib.sh"
[ "$(id -u)" = 0 ] || kv_skip "needs root to chown a file to nobody"
kv_init
# The copies need a directory only root can write; $KV_DIR is mktemp's 0700.
good=$KV_DIR/kvmlu-vmm
install -m 0755 -o root -g root "$KV_VMM" "$good"
ln -s "$good" "$KV_DIR/link"
install -m 0777 -o root -g root "$KV_VMM" "$KV_DIR/ww"
chmod 0777 "$KV_DIR/ww"
install -m 0755 -o 65534 -g 65534 "$KV_VMM" "$KV_DIR/theirs"
install -m 0644 -o root -g root "$KV_VMM" "$KV_DIR/noexec"

up_start --memory 64M
kv_wait_serial '^witness boot=[0-9a-f]{16} cpu=0 tick=' 60
pid=$KV_PID

refused() { # refused BINARY TEXT
	kv_request "{\"cmd\":\"upgrade\",\"args\":{\"binary\":\"$1\"}}" 30
	# An upgrade that went through: the cleanup must stop the new process.
	[ "$(jq -r .ok <<<"$KV_REPLY")" = true ] && KV_PID=$(kv_ret pid) &&
		kv_fail "upgrade to $1 was not refused: $KV_REPLY"
	[ "$(jq -r .error.class <<<"$KV_REPLY")" = InvalidRequest ] ||
		kv_fail "upgrade to $1: not InvalidRequest: $KV_REPLY"
	grep -qF -- "$2" <<<"$(jq -r .error.desc <<<"$KV_REPLY")" ||
		kv_fail "upgrade to $1: does not say '$2': $KV_REPLY"
}
refused "$KV_DIR/link" "a symlink"
refused /tmp "not a regular file"
refused "$KV_DIR/ww" "writable by group or others"
refused "$KV_DIR/theirs" "owned by another user"
refused "$KV_DIR/noexec" "not executable"
kv_ok '{"cmd":"status"}'
[ "$(kv_ret state)" = running ] || kv_fail "VM $(kv_ret state) after refused upgrades"
[ "$(kv_ret pid)" = "$pid" ] || kv_fail "the VMM changed to pid $(kv_ret pid)"

tick=$(kv_tick 0)
up_upgrade "{\"binary\":\"$good\"}"
[ "$(readlink "/proc/$KV_PID/exe")" = "$good" ] ||
	kv_fail "new process runs $(readlink "/proc/$KV_PID/exe"), not $good"
up_wait_ticks 0 "$tick"
up_stop
up_check_sanitizers
kv_pass
