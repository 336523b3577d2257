/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed numbers of the witness guest shared by its assembly and C: how
 * many vCPUs it supports, its per-vCPU stacks, and its own GDT selectors.
 * Only #defines, so entry.S can include it. Everything here lives inside
 * the payload area [KVMLU_PAYLOAD_ENTRY, KVMLU_PAYLOAD_AREA_END); the
 * linker script checks that it fits.
 */
#ifndef WITNESS_LAYOUT_H
#define WITNESS_LAYOUT_H

/* Per-vCPU stacks and slots must fit below 2 MiB next to the image. */
#define WITNESS_MAX_CPUS	64	/* kvmlu-vmm's VM_MAX_VCPUS */

/* CPL 3 stack: all C code runs on it; call depth is small. */
#define WITNESS_USTACK_SHIFT	12
#define WITNESS_USTACK_SIZE	(1 << WITNESS_USTACK_SHIFT)
/* CPL 0 stack (TSS.RSP0): setup and the fatal-exception report only. */
#define WITNESS_KSTACK_SHIFT	12
#define WITNESS_KSTACK_SIZE	(1 << WITNESS_KSTACK_SHIFT)

/*
 * The witness's own GDT. The kernel code selector equals the VMM's
 * KVMLU_BOOT_CS so the switch from the boot GDT changes nothing for the
 * code running at that moment. One 16-byte TSS descriptor per vCPU.
 */
#define WITNESS_SEL_KCODE	0x08
#define WITNESS_SEL_KDATA	0x10
#define WITNESS_SEL_UDATA	0x18
#define WITNESS_SEL_UCODE	0x20
#define WITNESS_SEL_TSS0	0x28
#define WITNESS_GDT_ENTRIES	(WITNESS_SEL_TSS0 / 8 + 2 * WITNESS_MAX_CPUS)

/*
 * RFLAGS at CPL 3: IOPL 3, IF 0. KVM on this machine drops the IOPL, so
 * the TSS I/O bitmap (cpu_setup.c) grants COM1 and the test port as well.
 */
#define WITNESS_USER_RFLAGS	0x3002

#define WITNESS_NR_EXCEPTIONS	32

#endif /* WITNESS_LAYOUT_H */
