# Harness case: an ACPI-free SMP Linux guest finds its CPUs and IOAPIC in
# kvmlu-vmm's MP table and brings both up. The guest is the project's own
# host kernel (it has CONFIG_X86_MPPARSE, unlike Debian's cloud kernel,
# which boots one CPU without ACPI), booted by `kvmlu-vmm run --cpus 2
# --kernel ... --append acpi=off` on the nested /dev/kvm with the test
# initramfs. Its console must show the MP table found, 2 processors and
# the IOAPIC after them; its userspace must count 2 CPUs (the AP left in
# KVM's wait-for-SIPI state came up by Linux's INIT/SIPI); its reboot must
# end the VM through the i8042 (exit 11).
#
# `no_timer_check`: the nested guest's IO-APIC timer check counts ticks
# against a clock that TCG on a loaded host runs unevenly, and panics the
# boot when it misses them (the harness host boots with it for the same
# reason). `noxsave`: in this nested VM the CPUID leaf 0xd sizes fail the 7.3
# kernel's xstate check ("x86/fpu: XSAVE disabled", CPUID[0d] dump) and
# that kernel then oopses in early VFS setup; without XSAVE it boots. The
# CPUID is the VMM core's (vmm/cpuid.c), not the boot protocol's.
HARNESS_TIMEOUT=600

L_SERIAL=/tmp/smp.serial

need_line() { # need_line REGEX WHAT
	grep -aqE "$1" "$L_SERIAL" || { sed 's/^/guest| /' "$L_SERIAL" | tail -n 60; fail "guest console lacks $2 ('$1')"; }
}

stage1() {
	for f in /kvmlu/bin/kvmlu-vmm /kvmlu/linux/initramfs.cpio.gz; do
		[ -e "$f" ] || skip "$f missing (make; tests/guest/linux/build-initramfs.sh)"
	done
	[ -e /dev/kvm ] || fail "/dev/kvm missing in the harness host"
	kvmlu-vmm run --name smp --memory 512M --cpus 2 \
		--kernel "$HARNESS_KERNEL" --initrd /kvmlu/linux/initramfs.cpio.gz \
		--append "console=ttyS0 noxsave no_timer_check acpi=off reboot=k panic=-1 kvmlu.status=2 kvmlu.reboot=1" \
		--serial "$L_SERIAL" >/tmp/smp.vmm 2>&1 &
	vmm=$!
	i=0
	while kill -0 $vmm 2>/dev/null && [ $i -lt 500 ]; do sleep 1; i=$((i + 1)); done
	kill -0 $vmm 2>/dev/null && { kill $vmm; sed 's/^/guest| /' "$L_SERIAL" | tail -n 40; fail "VM still running after 500 s"; }
	wait $vmm
	rc=$?
	sed 's/^/guest| /' "$L_SERIAL" | grep -aE 'MP-table|MPTABLE|Processor|IOAPIC|smpboot|Brought up|KVMLU|Oops|RIP:|Kernel panic' | head -n 40
	cat /tmp/smp.vmm
	need_line 'found SMP MP-table at \[mem 0x000f0000' "the MP table at 0xf0000"
	need_line 'Processor #0 \(Bootup-CPU\)' "the boot CPU (LAPIC id 0)"
	need_line 'Processor #1' "the second CPU (LAPIC id 1)"
	need_line 'Processors: 2' "2 processors"
	need_line 'IOAPIC\[0\]: apic_id 2, .*address 0xfec00000' "the IOAPIC with id 2 at 0xfec00000"
	[ $rc -eq 11 ] || fail "kvmlu-vmm exit $rc, want 11 (the guest's reset through the i8042)"
	up=$(grep -a 'KVMLU-LINUX-GUEST-UP' "$L_SERIAL" | head -n 1 | tr -d '\r')
	cpus=$(echo "$up" | sed -n 's/.* cpus=\([0-9]*\).*/\1/p')
	[ -n "$up" ] || fail "guest did not reach userspace: $(grep -a -m1 -E 'Oops|Kernel panic' "$L_SERIAL" | tr -d '\r')"
	[ "$cpus" = 2 ] || fail "guest reached userspace with $cpus CPUs, want 2"
	pass "guest $(uname -r) read 2 CPUs and the IOAPIC from the MP table, ran userspace on both; its reboot ended the VM"
}
