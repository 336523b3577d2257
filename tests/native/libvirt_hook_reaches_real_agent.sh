#!/bin/bash
# Proves: kvmlu-libvirt-hook (sanitizer build) talking to a real
# kvmlu-agent on a temp socket gets its events accepted, and the agent
# then lists the libvirt domain beside a kvmlu-vmm VM in `kvmlu vms`
# (kind column) and counts it in `kvmlu status`; a later "stopped" event
# moves the same domain (same UUID) to stopped; a hostile libvirt-event
# sent straight to the socket is refused with InvalidRequest and changes
# nothing; an opted-out domain never shows up.
. "$(dirname "$0")/agent_lib.sh"
hook=${KVMLU_LIBVIRT_HOOK:-$AG_BIN/kvmlu-libvirt-hook}
[ -x "$hook" ] || ag_fail "$hook not built (make tests-build)"
ag_init
export KVMLU_AGENT_CONFIG=$AG_DIR/agent.json
uuid=3f1c0b2a-1111-4222-8333-944455556666
xml() { # xml NAME UUID [METADATA]
	printf "<domain type='qemu'><name>%s</name><uuid>%s</uuid><metadata>%s</metadata></domain>" \
		"$1" "$2" "${3:-}"
}
run_hook() { # run_hook XML ARGS...
	local x=$1
	shift
	echo "$x" | timeout 30 "$hook" "$@" >"$AG_DIR/hook.out" 2>>"$AG_DIR/hook.err" ||
		ag_fail "hook exited $? for: $*"
	[ ! -s "$AG_DIR/hook.out" ] || ag_fail "hook wrote to stdout for: $*"
}
vms_json() { # the agent's `kvmlu vms --json` into $VMS
	ag_kvmlu vms --json >/dev/null
	[ "$AG_RC" = 0 ] || ag_fail "kvmlu vms exited $AG_RC"
	VMS=$AG_OUT
}
lv_state() { # lv_state NAME: state of the libvirt entry NAME in $VMS (fetched again)
	vms_json
	echo "$VMS" | jq -r --arg n "$1" '[.vms[] | select(.kind == "libvirt" and .name == $n) | .state] | if length == 1 then .[0] else "count=\(length)" end'
}

ag_log "stage 1: an agent, one kvmlu-vmm VM, the hook reports web1 started"
ag_vm vm1
ag_agent
run_hook "$(xml web1 $uuid)" web1 started begin -
grep -q "agent told" "$AG_DIR/hook.err" || ag_fail "hook did not log 'agent told': $(cat "$AG_DIR/hook.err")"
[ "$(lv_state web1)" = running ] || ag_fail "web1 not listed as running libvirt domain"
vms_json
kinds=$(echo "$VMS" | jq -r '[.vms[].kind] | sort | join(",")')
[ "$kinds" = "kvmlu-vmm,libvirt" ] || ag_fail "kinds listed: $kinds"
ag_kvmlu vms
echo "$AG_OUT" | grep -Eq "^web1 +libvirt +running .*$uuid" || ag_fail "human vms lacks the web1 row"
echo "$AG_OUT" | grep -Eq "^vm1 +kvmlu-vmm +running" || ag_fail "human vms lacks the vm1 row"
ag_kvmlu status --json
[ "$(echo "$AG_OUT" | jq .libvirt_domains)" = 1 ] || ag_fail "status does not count 1 libvirt domain"
[ "$(echo "$AG_OUT" | jq .libvirt_domains_active)" = 1 ] || ag_fail "status: web1 not active"

ag_log "stage 2: stopped moves the same domain to stopped, reconnect back to running"
run_hook "$(xml web1 $uuid)" web1 stopped end shutdown
[ "$(lv_state web1)" = stopped ] || ag_fail "web1 not stopped"
ag_kvmlu status --json
[ "$(echo "$AG_OUT" | jq '[.libvirt_domains, .libvirt_domains_active] | join(",")' -r)" = "1,0" ] ||
	ag_fail "status counts after stop"
run_hook "$(xml web1 $uuid)" web1 reconnect begin -
[ "$(lv_state web1)" = running ] || ag_fail "web1 not running after reconnect"

ag_log "stage 3: opted-out domain and hostile messages change nothing"
run_hook "$(xml quiet 0a1c0b2a-1111-4222-8333-944455556666 "<kvmlu:config xmlns:kvmlu='https://kvmlu.invalid/ns/1' optout='yes'/>")" quiet started begin -
[ "$(lv_state quiet)" = "count=0" ] || ag_fail "opted-out domain listed"
n=0
for msg in \
	'{"cmd":"libvirt-event","domain":"evil","uuid":"'$uuid'","op":"started","sub":"begin","extra":"-"}' \
	'{"cmd":"libvirt-event","args":{"domain":"evil","uuid":"'$uuid'","op":"started","sub":"begin"}}' \
	'{"cmd":"libvirt-event","args":{"domain":"evil","uuid":"'$uuid'","op":"started","sub":"begin","extra":"-","x":1}}' \
	'{"cmd":"libvirt-event","args":{"domain":"evil","uuid":"not-a-uuid","op":"started","sub":"begin","extra":"-"}}' \
	'{"cmd":"libvirt-event","args":{"domain":"evil","uuid":"'$uuid'","op":"rm -rf","sub":"begin","extra":"-"}}' \
	'{"cmd":"libvirt-event","args":{"domain":"ev/il","uuid":"'$uuid'","op":"started","sub":"begin","extra":"-"}}' \
	'{"cmd":"libvirt-event","args":{"domain":"evil","uuid":"'$uuid'","op":"migrate","sub":"begin","extra":"-"}}' \
	'{"cmd":"libvirt-event","args":{"domain":7,"uuid":"'$uuid'","op":"started","sub":"begin","extra":"-"}}' \
	'{"cmd":"libvirt-event","args":{"domain":"evil","uuid":"'$uuid'","op":"started","sub":"$(id)","extra":"-"}}'; do
	cls=$("$AG_CTL" -t 5 "$AG_SOCK" "$msg" | jq -r .error.class)
	[ "$cls" = InvalidRequest ] || ag_fail "not refused with InvalidRequest (got $cls): $msg"
	n=$((n + 1))
done
[ "$(lv_state web1)" = running ] || ag_fail "web1 changed by refused messages"
[ "$(lv_state evil)" = "count=0" ] || ag_fail "refused domain listed"
ag_log "$n hostile messages refused, table unchanged"
kill -0 "$AG_AGENT_PID" || ag_fail "agent died"
ag_pass
