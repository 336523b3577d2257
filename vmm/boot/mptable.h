/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Intel MultiProcessor Specification 1.4 table that tells an
 * ACPI-free Linux guest how many CPUs it has (LAPIC ids 0..n-1), where
 * the IOAPIC is (id n, 0xfec00000, the in-kernel KVM one) and how the 16
 * ISA interrupts reach it. Kernels built without CONFIG_X86_MPPARSE
 * ignore it and learn the same from the ACPI MADT (vmm/acpi/madt.h);
 * with ACPI on, Linux prefers the MADT, so this table serves kernels
 * booted with acpi=off.
 *
 * Lifecycle: written once into guest RAM at first boot, in the BIOS area
 * the e820 map reserves; the guest keeps it, a restored VM has it in RAM.
 */
#ifndef KVMLU_VMM_MPTABLE_H
#define KVMLU_VMM_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

#define MPTABLE_LAPIC_ADDR	0xfee00000u
#define MPTABLE_IOAPIC_ADDR	0xfec00000u
#define MPTABLE_ISA_IRQS	16
/* APIC ids are 8 bits in the table; the IOAPIC takes the id after the CPUs. */
#define MPTABLE_MAX_CPUS	254

/* Bytes the table takes for nr_cpus (floating pointer included). */
size_t mptable_size(unsigned int nr_cpus);

/*
 * Write the floating pointer at buf (guest address gpa) and the
 * configuration table right after it. buf has room for len bytes.
 * -EINVAL for 0 or more than MPTABLE_MAX_CPUS CPUs, -ENOSPC if len is
 * less than mptable_size().
 */
int mptable_write(void *buf, size_t len, uint32_t gpa, unsigned int nr_cpus,
		  char *err, size_t errlen);

#endif /* KVMLU_VMM_MPTABLE_H */
