#!/bin/bash
# Proves: a member of the agent's group (not root) may have the agent load
# only a kernel and initrd under kexec_dirs that are regular root-owned
# files not writable by group or others, in directories that are the
# same, reached without a symlink or "..": a file outside kexec_dirs, a
# symlink, a world-writable file, a directory, a file owned by another
# uid, a file in a world-writable directory, and such an initrd are each
# refused with PermissionDenied naming the file and the rule, and so is a
# command line of its own (it would choose what runs as root); a file
# that keeps the rules gets as far as preflight. Root may name any file
# and command line.
. "$(dirname "$0")/agent_lib.sh"
command -v setpriv >/dev/null || ag_skip "setpriv (util-linux) missing"
[ "$(id -u)" = 0 ] || ag_skip "needs root to switch users and chown"
getent group users >/dev/null || ag_skip "no group 'users' on this machine"
ag_init users
users_gid=$(getent group users | cut -d: -f3)

# kexec_dirs must be reached through root-owned, non-writable directories
# only, which /tmp is not, nor need the checkout's path be (a clone in
# /tmp): a directory of its own under /run.
for d in / /run; do
	[ "$(stat -c '%a %U' "$d")" = "755 root" ] ||
		ag_skip "$d is not 755 root: cannot make a directory that keeps the rules"
done
kd=$(mktemp -d /run/kvmlu-kexec-test.XXXXXX)
trap 'ag_cleanup; rm -rf "$kd"' EXIT
chmod 755 "$kd"
jq --arg d "$kd/" '. + {kexec_dirs: [$d]}' "$AG_DIR/agent.json" >"$AG_DIR/agent.json.new" &&
	mv "$AG_DIR/agent.json.new" "$AG_DIR/agent.json"
ag_agent

kernel=$AG_TOP/build/kernel/bzImage
[ -f "$kernel" ] || kernel=$AG_WITNESS
install -m 0644 -o root -g root "$kernel" "$kd/vmlinuz"
install -m 0644 -o root -g root "$kernel" "$kd/initrd"
ln -s "$kd/vmlinuz" "$kd/link"
install -m 0666 -o root -g root "$kernel" "$kd/ww"
chmod 0666 "$kd/ww"	# install's -m is subject to no umask, but be sure
mkdir -m 0755 "$kd/adir"
install -m 0644 -o 65534 -g 65534 "$kernel" "$kd/theirs"
mkdir -m 0777 "$kd/open"
chmod 0777 "$kd/open"
install -m 0644 -o root -g root "$kernel" "$kd/open/vmlinuz"
install -m 0644 -o root -g root "$kernel" "$AG_DIR/elsewhere"

member() { # member ARGS...: kvmlu as nobody with the agent's group
	AG_OUT=$(setpriv --reuid=65534 --regid="$users_gid" --clear-groups \
		"$AG_BIN/kvmlu" --socket "$AG_SOCK" "$@" 2>&1)
	AG_RC=$?
	ag_log "member: kvmlu $* -> exit $AG_RC: $AG_OUT"
}
# raw JSON (kvmlu-ctl), not the CLI: the CLI resolves symlinks and ".." itself,
# a hostile client does not.
refused() { # refused TEXT ARGS-JSON: a member's host-update with these args is refused saying TEXT
	local out
	out=$(setpriv --reuid=65534 --regid="$users_gid" --clear-groups "$AG_CTL" -t 20 "$AG_SOCK" \
		"{\"cmd\":\"host-update\",\"id\":1,\"args\":$2}" 2>&1)
	ag_log "member: host-update $2 -> $out"
	[ "$(jq -r .error.class <<<"$out")" = PermissionDenied ] ||
		ag_fail "host-update $2: not PermissionDenied"
	grep -qF -- "$1" <<<"$(jq -r .error.desc <<<"$out")" ||
		ag_fail "host-update $2: does not say '$1'"
}
args() { # args KERNEL [INITRD]: host-update args, a dry run
	echo "{\"kernel\":\"$1\"${2:+,\"initrd\":\"$2\"},\"dry-run\":true}"
}

ag_log "stage 1: hostile kernels and initrds from a group member"
refused "not under $kd" "$(args "$AG_DIR/elsewhere")"
refused "kernel $kd/link: a symlink" "$(args "$kd/link")"
refused "writable by group or others (mode 0666)" "$(args "$kd/ww")"
refused "not a regular file" "$(args "$kd/adir")"
refused "owned by uid 65534, not root" "$(args "$kd/theirs")"
refused "directory $kd/open: writable by group or others" "$(args "$kd/open/vmlinuz")"
refused '"." or ".." in the path' "$(args "$kd/open/../vmlinuz")"
refused "initrd $kd/link: a symlink" "$(args "$kd/vmlinuz" "$kd/link")"
refused "initrd $AG_DIR/elsewhere: not under" "$(args "$kd/vmlinuz" "$AG_DIR/elsewhere")"
# The command line chooses the next kernel's init: a good kernel with it is refused.
refused "only root may set the next kernel's command line" \
	"{\"kernel\":\"$kd/vmlinuz\",\"append\":\"init=/tmp/evil\",\"dry-run\":true}"

ag_log "stage 2: files that keep the rules reach preflight"
member host-update --kernel "$kd/vmlinuz" --initrd "$kd/initrd" --dry-run
grep -q 'PermissionDenied' <<<"$AG_OUT" && ag_fail "a kernel that keeps the rules was refused"
grep -q 'failed in preflight' <<<"$AG_OUT" || ag_fail "the good kernel did not reach preflight"

ag_log "stage 3: root may name any file"
ag_kvmlu host-update --kernel "$AG_DIR/elsewhere" --append "kho=on liveupdate=on" --dry-run
grep -q 'PermissionDenied' <<<"$AG_OUT" && ag_fail "root was refused a kernel outside kexec_dirs"
grep -q 'failed in preflight' <<<"$AG_OUT" || ag_fail "root's kernel did not reach preflight"
ag_pass
