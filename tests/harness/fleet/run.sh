#!/bin/bash
# The Ansible role ansible/roles/kvmlu_host_update against N harness hosts
# at once (N = 1 or 2), from this machine, as a fleet operator runs it.
#   tests/harness/fleet/run.sh N BZIMAGE INITRAMFS [LOGDIR]
# check.sh calls it; it prints PASS:/FAIL:/SKIP: lines like run-case.sh,
# one per scenario (harness/ansible_rollout_<one|two>_host(s)/<scenario>)
# and one for the whole run.
#
# Each host is a QEMU like run-case.sh's, booting the case fleet_host
# (host.sh) from the harness initramfs plus two more archives: segment.sh's
# (sshd, Python, the test's guest side) and one of the host's own with the
# SSH keys made for this run (never kept: the work folder goes at exit).
# QEMU's user networking, restricted (no way out for the guest), forwards
# 127.0.0.1:PORT here to the host's port 22, and nothing else.
#
# Scenarios, in order, each on the hosts as the previous one left them:
#   rollout       the example playbook (serial: 1, max_fail_percentage: 0)
#                 updates every host to the next stage's command line: each
#                 host kexecs (new boot id), its two VMs are the same guests
#                 (boot ids), verified with equal checksums, ticking; with
#                 two hosts, host2's update starts after host1's finished
#   idempotent    the same playbook again: changed=0 everywhere, no host
#                 touched (same boot id, no new update in the history)
#   bad_kernel    a kernel image that does not load: host1 fails with the
#                 agent's reason, its VMs running, nothing loaded; host2 is
#                 never touched (no task ran there, history and boot id same)
#   rolled_back   vm-b on host1 prepared by hand, so the agent's prepare
#                 fails after pausing vm-a: host1 rolls back and fails with
#                 the per-VM table, its VMs running again; host2 untouched
# Bash reads a script while it runs it: the braces make it read this one
# whole first, so that editing it under a long run cannot change that run.
{
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
. "$top/tests/harness/qemu_host.sh"
n=$1 kernel=$2 initrd=$3 logs=${4:-$top/build/test-logs}
case $n in
1) name=harness/ansible_rollout_one_host ;;
2) name=harness/ansible_rollout_two_hosts ;;
*) echo "usage: $0 1|2 BZIMAGE INITRAMFS [LOGDIR]" >&2; exit 2 ;;
esac
mkdir -p "$logs" "$top/build/harness"
tag=fleet-${n}host
qemu_pids=()
work=$(mktemp -d "$top/build/harness/fleet.XXXXXX")
cleanup() {
	local p
	for p in "${qemu_pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

skip_all() { echo "SKIP: $name ($1)"; exit 0; }
fail_all() { # fail_all WHY: the verdict, with the hosts' serial tails
	local i
	echo "FAIL: $name ($1)"
	for i in $(seq 1 "$n"); do
		echo "    host$i serial (log $logs/$tag-host$i.log):"
		tail -n 15 "$logs/$tag-host$i.log" 2>/dev/null | sed 's/^/    | /'
	done
	exit 1
}
scenario_pass() { echo "PASS: $name/$1"; }
scenario_fail() { # scenario_fail SCENARIO WHY [ANSIBLE_LOG]
	echo "FAIL: $name/$1 ($2${3:+, log $3})"
	[ -n "${3:-}" ] && tail -n 40 "$3" | sed 's/^/    | /'
	fail_all "scenario $1 failed"
}

for t in ansible-playbook ssh ssh-keygen cpio qemu-system-x86_64; do
	command -v $t >/dev/null || skip_all "$t not installed (scripts/install-deps.sh)"
done
[ -x /usr/sbin/sshd ] || skip_all "no /usr/sbin/sshd to copy into the hosts (package openssh-server)"
"$here/segment.sh" "$work/fleet.cpio" 2>"$work/segment.log" ||
	fail_all "segment.sh: $(tail -n 1 "$work/segment.log")"

free_port() { # a port on 127.0.0.1 nobody listens on now
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

ssh-keygen -q -t ed25519 -N '' -C "kvmlu fleet test $$" -f "$work/id_ed25519" || fail_all "ssh-keygen failed"
: >"$work/known_hosts"
cmdline() { # the harness command line of stage $1
	echo "console=ttyS0 kho=on liveupdate=on panic=-1 no_timer_check $QEMU_HOST_TSC_APPEND kvmlu.case=fleet_host kvmlu.stage=$1"
}
declare -A port
for i in $(seq 1 "$n"); do
	h=$work/host$i-root
	mkdir -p "$h/etc/ssh" "$h/root/.ssh"
	chmod 755 "$h" "$h/etc" "$h/etc/ssh" "$h/root"
	chmod 700 "$h/root/.ssh"
	ssh-keygen -q -t ed25519 -N '' -C "host$i" -f "$h/etc/ssh/ssh_host_ed25519_key" ||
		fail_all "ssh-keygen of host$i failed"
	install -m 600 "$work/id_ed25519.pub" "$h/root/.ssh/authorized_keys"
	(cd "$h" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$work/host$i.cpio"
	cat "$initrd" "$work/fleet.cpio" "$work/host$i.cpio" >"$work/host$i.initrd"
	port[$i]=$(free_port)
	echo "[127.0.0.1]:${port[$i]} $(cut -d' ' -f1,2 "$h/etc/ssh/ssh_host_ed25519_key.pub")" >>"$work/known_hosts"
	"$QEMU_HOST_BIN" -accel "$QEMU_HOST_ACCEL" -cpu "$QEMU_HOST_CPU" -m 3G -smp "$QEMU_HOST_SMP" \
		-nographic -nodefaults -serial stdio -no-reboot \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-netdev "user,id=net0,ipv6=off,restrict=on,hostfwd=tcp:127.0.0.1:${port[$i]}-:22" \
		-device virtio-net-pci,netdev=net0,romfile= \
		-kernel "$kernel" -initrd "$work/host$i.initrd" -append "$(cmdline 1)" \
		-d cpu_reset,guest_errors -D "$logs/$tag-host$i.qemu.log" \
		</dev/null >"$logs/$tag-host$i.log" 2>&1 &
	qemu_pids[$i]=$!
done

hssh() { # hssh I COMMAND...: run on host I as root
	local i=$1
	shift
	ssh -i "$work/id_ed25519" -o UserKnownHostsFile="$work/known_hosts" \
		-o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=20 \
		-o ServerAliveInterval=5 -o ServerAliveCountMax=6 \
		-p "${port[$i]}" root@127.0.0.1 "$@"
}
alive() { kill -0 "${qemu_pids[$1]}" 2>/dev/null; }
fact() { # fact I KEY: from `fleet_check.sh facts` on host I
	hssh "$1" sh /harness/fleet_check.sh facts 2>/dev/null | sed -n "s/^$2 //p"
}

# Up: each host answers SSH once its VMs and agent run (host.sh starts
# sshd last). The bound only turns a host that never comes into a FAIL.
start=$SECONDS
for i in $(seq 1 "$n"); do
	until hssh "$i" true 2>/dev/null; do
		alive "$i" || fail_all "host$i's QEMU ended before SSH answered"
		[ $((SECONDS - start)) -lt 1200 ] || fail_all "host$i did not answer SSH within 1200 s"
		sleep 3
	done
	echo "$name: host$i up on 127.0.0.1:${port[$i]} after $((SECONDS - start)) s"
done

cat >"$work/inventory.yml" <<INV
kvmlu_hosts:
  hosts:
$(for i in $(seq 1 "$n"); do printf '    host%s: {ansible_host: 127.0.0.1, ansible_port: %s}\n' "$i" "${port[$i]}"; done)
  vars:
    ansible_user: root
    ansible_ssh_private_key_file: $work/id_ed25519
    ansible_ssh_common_args: -o UserKnownHostsFile=$work/known_hosts -o StrictHostKeyChecking=yes
    kvmlu_host_update_kernel: /boot/bzImage
    kvmlu_host_update_initrd: /tmp/next-initrd.cpio
INV

export ANSIBLE_CONFIG=$top/ansible/ansible.cfg ANSIBLE_NOCOLOR=1
export ANSIBLE_LOCAL_TEMP=$work/ansible-tmp ANSIBLE_SSH_CONTROL_PATH_DIR=$work/cp
play() { # play SCENARIO EXTRA-ARGS...: the example playbook; log $logs/$tag-SCENARIO.ansible.log
	local log=$logs/$tag-$1.ansible.log t0=$SECONDS
	shift
	ansible-playbook -i "$work/inventory.yml" "$top/ansible/playbooks/rolling-update.yml" "$@" >"$log" 2>&1
	play_rc=$?
	play_log=$log
	echo "$name: ansible-playbook $(basename "$log") exited $play_rc after $((SECONDS - t0)) s"
}
recap() { # recap HOST FIELD: the PLAY RECAP count, "" if the host is not there
	sed -n "s/^$1 *:.* $2=\([0-9]*\).*/\1/p" "$play_log" | tail -n 1
}
touched() { grep -q "\[$1\]" "$play_log"; }

# --- rollout
declare -A boot_before
for i in $(seq 1 "$n"); do boot_before[$i]=$(fact "$i" boot_id); done
play rollout -e "kvmlu_host_update_append='$(cmdline 2)'"
[ "$play_rc" = 0 ] || scenario_fail rollout "ansible-playbook exited $play_rc" "$play_log"
for i in $(seq 1 "$n"); do
	[ "$(recap host$i changed)" -ge 1 ] 2>/dev/null && [ "$(recap host$i failed)" = 0 ] ||
		scenario_fail rollout "host$i: not changed, or failed, in the recap" "$play_log"
	[ "$(fact "$i" stage)" = 2 ] || scenario_fail rollout "host$i is not in stage 2" "$play_log"
	b=$(fact "$i" boot_id)
	[ -n "$b" ] && [ "$b" != "${boot_before[$i]}" ] ||
		scenario_fail rollout "host$i: boot id ${b:-none}, before ${boot_before[$i]}: no new kernel" "$play_log"
	hssh "$i" sh /harness/fleet_check.sh survived >"$work/check.out" 2>&1
	sed "s/^/    host$i: /" "$work/check.out"
	tail -n 1 "$work/check.out" | grep -qx ok ||
		scenario_fail rollout "host$i: $(tail -n 1 "$work/check.out")" "$play_log"
done
if [ "$n" = 2 ]; then
	# serial: 1 in the log: host1's last task before host2's update started.
	order=$(awk '/^TASK \[/ { task = $0 }
		task ~ /: Updated\]/ && /\[host1\]/ { if (!done1) done1 = NR }
		task ~ /: Start the update/ && /\[host2\]/ { if (!start2) start2 = NR }
		END { print (done1 && start2 && done1 < start2) ? "serial" : "not serial" }' "$play_log")
	[ "$order" = serial ] ||
		scenario_fail rollout "host2's update did not start after host1's ended" "$play_log"
fi
scenario_pass rollout

# --- idempotent
declare -A boot_now updates_now
for i in $(seq 1 "$n"); do
	boot_now[$i]=$(fact "$i" boot_id)
	updates_now[$i]=$(fact "$i" updates)
done
play idempotent -e "kvmlu_host_update_append='$(cmdline 2)'"
[ "$play_rc" = 0 ] || scenario_fail idempotent "ansible-playbook exited $play_rc" "$play_log"
for i in $(seq 1 "$n"); do
	[ "$(recap host$i changed)" = 0 ] && [ "$(recap host$i failed)" = 0 ] ||
		scenario_fail idempotent "host$i: changed=$(recap host$i changed) failed=$(recap host$i failed)" "$play_log"
	[ "$(fact "$i" boot_id)" = "${boot_now[$i]}" ] && [ "$(fact "$i" updates)" = "${updates_now[$i]}" ] ||
		scenario_fail idempotent "host$i was touched: new boot id or a new update in its history" "$play_log"
done
scenario_pass idempotent

# A failed play must stop at host1: host2's boot id and history stay.
untouched_host2() { # untouched_host2 SCENARIO
	[ "$n" = 2 ] || return 0
	touched host2 && scenario_fail "$1" "a task ran on host2" "$play_log"
	[ "$(fact 2 boot_id)" = "${boot_now[2]}" ] && [ "$(fact 2 updates)" = "${updates_now[2]}" ] ||
		scenario_fail "$1" "host2 changed: new boot id or a new update in its history" "$play_log"
}
host1_running() { # host1_running SCENARIO
	hssh 1 sh /harness/fleet_check.sh running >"$work/check.out" 2>&1
	sed "s/^/    host1: /" "$work/check.out"
	tail -n 1 "$work/check.out" | grep -qx ok ||
		scenario_fail "$1" "host1: $(tail -n 1 "$work/check.out")" "$play_log"
}

# --- bad_kernel
hssh 1 'head -c 2000000 /dev/urandom >/tmp/garbage.bzImage' || fail_all "could not write host1's bad kernel"
play bad_kernel -e kvmlu_host_update_kernel=/tmp/garbage.bzImage -e "kvmlu_host_update_append='$(cmdline 3)'"
[ "$play_rc" != 0 ] || scenario_fail bad_kernel "ansible-playbook succeeded" "$play_log"
[ "$(recap host1 failed)" = 1 ] || scenario_fail bad_kernel "host1 did not fail" "$play_log"
grep -q 'preflight refused the update' "$play_log" && grep -q 'the new kernel does not load' "$play_log" ||
	scenario_fail bad_kernel "the failure does not give the agent's reason" "$play_log"
host1_running bad_kernel
untouched_host2 bad_kernel
scenario_pass bad_kernel

# --- rolled_back
r=$(hssh 1 "kvmlu-ctl /run/kvmlu/vms/vm-b.sock '{\"cmd\":\"prepare-update\"}'")
grep -q '"ok":true' <<<"$r" || fail_all "prepare-update of vm-b on host1 by hand: $r"
play rolled_back -e "kvmlu_host_update_append='$(cmdline 3)'"
[ "$play_rc" != 0 ] || scenario_fail rolled_back "ansible-playbook succeeded" "$play_log"
[ "$(recap host1 failed)" = 1 ] || scenario_fail rolled_back "host1 did not fail" "$play_log"
grep -q 'the update ended on the old kernel' "$play_log" && grep -q ': rolled-back' "$play_log" ||
	scenario_fail rolled_back "the failure does not say rolled-back" "$play_log"
grep -qE '^ *vm-a +aborted ' "$play_log" && grep -qE '^ *vm-b ' "$play_log" ||
	scenario_fail rolled_back "the failure has no per-VM table with vm-a aborted" "$play_log"
host1_running rolled_back
untouched_host2 rolled_back
scenario_pass rolled_back

echo "PASS: $name"
exit
}
