# kexec_phases.awk LOG (a host-stamped serial log of a QEMU host, run-case.sh's
# format): per kexec, "STAGE TOTAL JUMP UNPACK": `kexec -e` -> userspace of STAGE,
# and its first part, `kexec -e` -> the new kernel's clock zero (the old
# kernel's shutdown, the jump, purgatory, decompression and the earliest
# setup: the console's first host stamp less its own timestamp). The rest,
# TOTAL - JUMP, is the new kernel's boot on its own clock, of which UNPACK
# is the unpacking of the initramfs (its own clock, "Unpacking initramfs"
# to "Freeing initrd memory"; /init waits for it).
function host(l) { return substr(l, 2, index(l, "]") - 2) + 0 }
function inner(l) { sub(/^\[[^]]*\] \[ */, "", l); return l + 0 }
/KVMLU-HARNESS: .*kexec -e: stage / { k = host($0); t0 = ""; u0 = ""; u = "" }
/Unpacking initramfs\.\.\./ { u0 = inner($0) }
/Freeing initrd memory/ { if (u0 != "") u = inner($0) - u0 }
/printk: console \[ttyS0\] enabled/ { if (k != "") t0 = host($0) - inner($0) }
/KVMLU-HARNESS: .*userspace stage / {
	n = $0; sub(/.*userspace stage /, "", n); n += 0
	if (k != "" && t0 != "") printf "%d %.3f %.3f %.3f\n", n, host($0) - k, t0 - k, (u == "" ? -1 : u)
	k = ""
}
