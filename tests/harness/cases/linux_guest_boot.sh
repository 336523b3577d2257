# Harness case: a stock Linux guest boots to userspace in kvmlu-vmm on the
# nested /dev/kvm, with 2 vCPUs. Debian's cloud kernel with the test
# initramfs (tests/guest/linux/) must print its userspace marker with
# cpus=2 online=0-1 ran=0,1 (it has no MP table parser: it finds the
# second vCPU in kvmlu-vmm's ACPI MADT, vmm/acpi/), its counter
# process must count, and `reboot` inside it must end the VM through the
# i8042 reset (kvmlu-vmm exits 11, "guest-reset"). Prints the boot time to
# the marker (read by tests/bench/bench_linux_boot.sh). Single stage.
HARNESS_TIMEOUT=900

L_SERIAL=/tmp/linux.serial

elapsed() { # seconds since $1 (an uptime reading)
	awk -v a="$1" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }'
}

wait_line() { # wait_line REGEX SECONDS: until the serial log has REGEX
	local i=0
	while [ $i -lt "$2" ]; do
		grep -aq "$1" "$L_SERIAL" 2>/dev/null && return 0
		kill -0 "$vmm" 2>/dev/null || return 1
		sleep 1
		i=$((i + 1))
	done
	return 1
}

last_status() { # last_status FIELD
	serial_lines "$L_SERIAL" | grep -a 'KVMLU-GUEST-STATUS' | tail -n 1 | sed -n "s/.* $1=\([^ ]*\).*/\1/p" | tr -d '\r'
}

stage1() {
	for f in /kvmlu/bin/kvmlu-vmm /kvmlu/linux/vmlinuz /kvmlu/linux/initramfs.cpio.gz; do
		[ -e "$f" ] || skip "$f missing (make; tests/guest/linux/fetch-kernel.sh and build-initramfs.sh)"
	done
	[ -e /dev/kvm ] || fail "/dev/kvm missing in the harness host"
	t0=$(cut -d' ' -f1 /proc/uptime)
	kvmlu-vmm run --name linux --memory 256M --cpus 2 \
		--kernel /kvmlu/linux/vmlinuz --initrd /kvmlu/linux/initramfs.cpio.gz \
		--append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=3 kvmlu.reboot=3" \
		--serial "$L_SERIAL" >/tmp/vmm.log 2>&1 &
	vmm=$!
	if ! wait_line 'Linux version' 600; then
		cat /tmp/vmm.log; tail -n 20 "$L_SERIAL"
		fail "no 'Linux version' line on the guest console within 600 s"
	fi
	harness_log "guest kernel console up after $(elapsed "$t0") s"
	if ! wait_line 'KVMLU-LINUX-GUEST-UP' 600; then
		cat /tmp/vmm.log; tail -n 40 "$L_SERIAL"
		fail "guest did not reach userspace (no KVMLU-LINUX-GUEST-UP)"
	fi
	boot=$(elapsed "$t0")
	harness_log "KVMLU-BENCH linux_boot_to_marker_s=$boot"
	up=$(grep -a 'KVMLU-LINUX-GUEST-UP' "$L_SERIAL" | head -n 1 | tr -d '\r')
	echo "$up"
	grep -aE 'ACPI|smpboot|Brought up|x86: Booting SMP|PNP0501|PNP0303|serial8250|00:0[0-9]: ttyS0|i8042' "$L_SERIAL" |
		tr -d '\r' | sed 's/^/guest| /'
	# The guest's ACPI interpreter must have taken the tables and the AML as they are.
	acpi_err=$(grep -aE 'ACPI (BIOS )?(Error|Warning)|ACPI: .*(failed|Invalid|bad checksum)' "$L_SERIAL" | head -n 3 | tr -d '\r')
	[ -z "$acpi_err" ] || fail "guest complained about the ACPI tables: $acpi_err"
	cpus=$(echo "$up" | sed -n 's/.* cpus=\([^ ]*\).*/\1/p')
	online=$(echo "$up" | sed -n 's/.* online=\([^ ]*\).*/\1/p')
	ran=$(echo "$up" | sed -n 's/.* ran=\([^ ]*\).*/\1/p')
	[ "$cpus" = 2 ] && [ "$online" = 0-1 ] && [ "$ran" = 0,1 ] ||
		fail "guest with --cpus 2 reports cpus=$cpus online=$online ran=$ran, want 2, 0-1, 0,1"
	wait_line 'KVMLU-GUEST-STATUS' 120 || fail "guest printed no status line"
	c1=$(last_status counter) p1=$(last_status pid)
	wait_line 'KVMLU-GUEST-REBOOT' 120 || fail "guest never asked for its reboot"
	c2=$(last_status counter) p2=$(last_status pid)
	[ -n "$c1" ] && [ -n "$c2" ] && [ "$c2" -gt "$c1" ] ||
		fail "guest counter did not advance: '$c1' -> '$c2'"
	[ "$p1" = "$p2" ] || fail "counter pid changed: $p1 -> $p2"
	harness_log "guest counter pid $p1: $c1 -> $c2"
	i=0
	while kill -0 "$vmm" 2>/dev/null && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
	kill -0 "$vmm" 2>/dev/null && { kill "$vmm"; fail "VM still running 120 s after the guest's reboot"; }
	wait "$vmm"
	rc=$?
	cat /tmp/vmm.log
	[ $rc -eq 11 ] || fail "kvmlu-vmm exit $rc after guest reboot, want 11 (guest-reset)"
	sed 's/^/guest| /' "$L_SERIAL" | tail -n 60
	# Only in the bench's initramfs (tests/bench/bench_linux_boot.sh): the same
	# kernel and initramfs in QEMU on the same nested /dev/kvm, for the ratio.
	if [ -x /usr/bin/qemu-system-x86_64 ]; then
		q_serial=/tmp/qemu-linux.serial
		t0=$(cut -d' ' -f1 /proc/uptime)
		/usr/bin/qemu-system-x86_64 -accel kvm -cpu host -m 256M -smp 1 -nographic \
			-nodefaults -no-reboot -serial "file:$q_serial" \
			-kernel /kvmlu/linux/vmlinuz -initrd /kvmlu/linux/initramfs.cpio.gz \
			-append "console=ttyS0 reboot=k panic=-1 nokaslr kvmlu.status=3 kvmlu.reboot=1" \
			>/tmp/qemu.log 2>&1 &
		q=$!
		i=0
		until grep -aq KVMLU-LINUX-GUEST-UP "$q_serial" 2>/dev/null; do
			kill -0 $q 2>/dev/null || { cat /tmp/qemu.log; fail "QEMU -accel kvm exited before the marker"; }
			[ $i -lt 600 ] || fail "QEMU -accel kvm: no marker within 600 s"
			sleep 1
			i=$((i + 1))
		done
		harness_log "KVMLU-BENCH qemu_boot_to_marker_s=$(elapsed "$t0")"
		kill $q 2>/dev/null
		wait $q 2>/dev/null
	fi
	pass "stock Linux ($(grep -a -o 'kernel=[^ ]*' "$L_SERIAL" | head -n 1)) reached userspace on 2 vCPUs (cpus=$cpus online=$online ran=$ran) in $boot s, counted $c1 -> $c2, reboot ended the VM"
}
