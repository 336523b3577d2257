# Harness case for `make bench` only (tests/bench/bench_agent.sh writes
# build/harness/agent-bench-vms with the number of VMs; without it the case
# SKIPs): N witness VMs (64 MiB, 1 vCPU each) go through a whole host
# update; stage 2 prints the agent's report as one JSON line after
# "AGENT-BENCH-REPORT " for the bench to take apart.
HARNESS_MEM=3G
HARNESS_TIMEOUT=1200

. /harness/agent_common.sh

stage1() {
	[ -f /harness/agent_bench_vms ] || skip "a bench case: run by tests/bench/bench_agent.sh"
	ag_need
	n=$(cat /harness/agent_bench_vms)
	i=1
	while [ $i -le "$n" ]; do
		vm_start "b$i" 64M 1
		i=$((i + 1))
	done
	i=1
	while [ $i -le "$n" ]; do
		vm_wait_running "b$i"
		i=$((i + 1))
	done
	ag_config
	ag_start
	harness_make_initrd /tmp/next-initrd.cpio || fail "could not build the next initramfs"
	kvmlu host-update --kernel "$HARNESS_KERNEL" --initrd /tmp/next-initrd.cpio \
		--append "$(ag_next_cmdline)"
	fail "kvmlu host-update returned $? instead of kexecing"
}

stage2() {
	ag_need
	ag_config
	$KVMLU_AGENT --config "$AG_CONF" --restore || fail "kvmlu-agent --restore exited $?"
	ag_start
	echo "AGENT-BENCH-REPORT $(kvmlu report --last 1 --json | tr -d '\n\t ')"
	# A long line is still in the tty buffer when echo returns; the verdict
	# powers QEMU off at once.
	sleep 3
	pass "bench report printed"
}
