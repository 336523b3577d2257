#!/bin/bash
# The Ansible role's Python parts (ansible/tests/test_role_plugins.py):
# the filters that read kvmlu's versioned JSON documents, the module that
# reads a kernel image's version, and both against what a real kvmlu
# prints: a kvmlu-agent (sanitizer build, no VMs, allow_kexec false) whose
# preflight refuses on this machine (no /dev/liveupdate). Needs neither
# /dev/kvm nor QEMU; SKIP without Debian's ansible-core.
. "$(dirname "$0")/agent_lib.sh"

py=/usr/bin/python3
[ -x "$py" ] && "$py" -c 'import ansible.module_utils.basic' 2>/dev/null ||
	ag_skip "no ansible-core for /usr/bin/python3 (scripts/install-deps.sh)"
for b in "$AG_BIN/kvmlu-agent" "$AG_BIN/kvmlu"; do
	[ -x "$b" ] || ag_fail "$b not built (make tests-build)"
done
AG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kvmlu-$AG_NAME.XXXXXX")
trap ag_cleanup EXIT
mkdir -p "$AG_DIR/vms"
AG_SOCK=$AG_DIR/agent.sock
cat >"$AG_DIR/agent.json" <<JSON
{
  "socket": "$AG_SOCK",
  "group": "root",
  "run_dir": "$AG_DIR/vms",
  "history_dir": "$AG_DIR/history",
  "state_dir": "$AG_DIR/state",
  "allow_kexec": false
}
JSON
ag_agent

kernel=$AG_TOP/build/kernel/bzImage
[ -f "$kernel" ] || kernel=/bin/true
ag_kvmlu host-update --kernel "$kernel" --append "kho=on liveupdate=on" --dry-run --json
[ "$AG_RC" = 1 ] || ag_fail "dry run exited $AG_RC, expected 1 (refused)"
export KVMLU_HOST_UPDATE_JSON=$AG_OUT
ag_kvmlu report --json
[ "$AG_RC" = 0 ] || ag_fail "report exited $AG_RC"
export KVMLU_REPORT_JSON=$AG_OUT
[ -f "$AG_TOP/build/kernel/bzImage" ] && export KVMLU_BZIMAGE=$AG_TOP/build/kernel/bzImage

"$py" "$AG_TOP/ansible/tests/test_role_plugins.py" 2>&1 | sed 's/^/    /'
[ "${PIPESTATUS[0]}" = 0 ] || ag_fail "test_role_plugins.py failed"
ag_pass
