#!/bin/bash
# Proves: the agent's socket is 0660 root:<group>; a user outside the
# configured group cannot use it (connect refused by the mode), and even
# with the mode opened up the agent itself refuses the peer by its
# credentials (SO_PEERCRED / SO_PEERGROUPS) with class PermissionDenied;
# a user whose group is the configured one, and root, are served.
. "$(dirname "$0")/agent_lib.sh"
command -v setpriv >/dev/null || ag_skip "setpriv (util-linux) missing"
[ "$(id -u)" = 0 ] || ag_skip "needs root to switch users with setpriv"
getent group users >/dev/null || ag_skip "no group 'users' on this machine"
ag_init users
ag_agent
users_gid=$(getent group users | cut -d: -f3)

mode=$(stat -c '%a %U %G' "$AG_SOCK")
ag_log "socket: $mode"
[ "$mode" = "660 root users" ] || ag_fail "socket is '$mode', expected '660 root users'"

as() { # as UID GID ARGS...: kvmlu as that user, no supplementary groups
	local uid=$1 gid=$2
	shift 2
	AG_OUT=$(setpriv --reuid="$uid" --regid="$gid" --clear-groups \
		"$AG_BIN/kvmlu" --socket "$AG_SOCK" "$@" 2>&1)
	AG_RC=$?
	ag_log "uid $uid gid $gid: kvmlu $* -> exit $AG_RC: $AG_OUT"
}

ag_log "stage 1: outside the group, the socket mode refuses"
as 65534 65534 status
[ $AG_RC = 3 ] || ag_fail "nobody:nogroup got exit $AG_RC, expected 3"
grep -q 'permission denied' <<<"$AG_OUT" || ag_fail "no permission message"

ag_log "stage 2: mode opened; the agent refuses by peer credentials"
chmod 0666 "$AG_SOCK"
as 65534 65534 host-update --kernel /dev/null --dry-run
[ $AG_RC = 1 ] || ag_fail "nobody:nogroup got exit $AG_RC, expected 1"
grep -q 'PermissionDenied: uid 65534 gid 65534' <<<"$AG_OUT" || ag_fail "no PermissionDenied from the agent"
grep -q 'refused connection: uid 65534' "$AG_DIR/agent.err" || ag_fail "agent did not log the refusal"
chmod 0660 "$AG_SOCK"

ag_log "stage 3: the configured group and root are served"
as 65534 "$users_gid" status
[ $AG_RC = 0 ] || ag_fail "nobody:users refused (exit $AG_RC)"
grep -q 'kvmlu-agent' <<<"$AG_OUT" || ag_fail "no status for nobody:users"
ag_kvmlu status
[ $AG_RC = 0 ] || ag_fail "root refused (exit $AG_RC)"
ag_pass
