/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between kvmlu-vmm's `--payload` boot and a freestanding
 * payload such as the witness guest (tests/guest/). Freestanding-safe:
 * only fixed-width types, no libc.
 *
 * The VMM puts every vCPU directly in 64-bit long mode (no firmware, no
 * real mode: CPL 0 code is ~2000x slower than CPL 3 on the machines here,
 * so the payload should do as little as possible before it drops to CPL 3):
 *
 *   RIP = KVMLU_PAYLOAD_ENTRY (the payload is loaded there, flat binary)
 *   RDI = vCPU index (0 .. nr_vcpus-1), RSI = KVMLU_BOOT_INFO_GPA
 *   RSP = 0 (the payload sets up its own stacks), RFLAGS = 0x2 (IF=0)
 *   CS  = KVMLU_BOOT_CS (64-bit code, DPL 0), DS/ES/SS/FS/GS = KVMLU_BOOT_DS
 *   CR0 = PE|MP|ET|NE|WP|AM|PG, CR4 = PAE|OSFXSR|OSXMMEXCPT, EFER = LME|LMA|SCE|NXE
 *   CR3 = KVMLU_PML4_GPA: 0 .. top of RAM identity-mapped with 2 MiB pages,
 *         present|writable|user, so CPL 3 code can touch all of RAM.
 *
 * All vCPUs start at once (no INIT/SIPI dance), each with its own index.
 *
 * Port access from CPL 3: on the hosts here KVM drops IOPL on the way to
 * CPL 3, so a payload must grant its ports through the TSS I/O bitmap
 * (the witness does) rather than rely on IOPL 3.
 */
#ifndef KVMLU_PAYLOAD_ABI_H
#define KVMLU_PAYLOAD_ABI_H

#include <stdint.h>

#define KVMLU_BOOT_GDT_GPA	0x1000ULL	/* VMM's boot GDT */
#define KVMLU_BOOT_INFO_GPA	0x2000ULL	/* struct kvmlu_boot_info */
#define KVMLU_PML4_GPA		0x3000ULL
#define KVMLU_PDPT_GPA		0x4000ULL
#define KVMLU_PD_GPA		0x5000ULL	/* one PD page per GiB */
#define KVMLU_PAYLOAD_MAX_RAM_GIB 64ULL
#define KVMLU_PAYLOAD_ENTRY	0x100000ULL	/* 1 MiB */
#define KVMLU_PAYLOAD_MAX_SIZE	0x100000ULL	/* image must end below 2 MiB */
/*
 * The payload owns [KVMLU_PAYLOAD_ENTRY, KVMLU_PAYLOAD_AREA_END) for its
 * image, data, bss and stacks; all RAM from KVMLU_PAYLOAD_AREA_END up is
 * free for it. Below KVMLU_PAYLOAD_ENTRY lie the VMM's boot structures.
 */
#define KVMLU_PAYLOAD_AREA_END	0x200000ULL

#define KVMLU_BOOT_CS		0x08
#define KVMLU_BOOT_DS		0x10

#define KVMLU_BOOT_INFO_MAGIC	0x31494255554c4d56ULL	/* "VMLUUBI1" */
#define KVMLU_BOOT_INFO_VERSION	1
#define KVMLU_BOOT_MAX_REGIONS	8

struct kvmlu_boot_region {
	uint64_t gpa;
	uint64_t size;
};

struct kvmlu_boot_info {
	uint64_t magic;
	uint32_t version;
	uint32_t nr_vcpus;
	uint64_t tsc_khz;		/* guest TSC rate, fixed for the VM's life */
	uint64_t payload_start;		/* GPA range the image occupies */
	uint64_t payload_end;
	uint64_t low_reserved_end;	/* below this: boot structures, image */
	uint32_t nr_regions;		/* RAM regions, ascending, no overlap */
	uint32_t pad;
	struct kvmlu_boot_region regions[KVMLU_BOOT_MAX_REGIONS];
};

/*
 * The kvmlu test port. The payload polls KVMLU_PORT_REQUEST now and then
 * (each port access is a VM exit, ~110 us here, so at most a few times a
 * second); the VMM answers with the pending request bits and clears them.
 * The payload reports a finished request by writing its result to
 * KVMLU_PORT_RESULT.
 */
#define KVMLU_PORT_REQUEST	0x510	/* in, 32 bit: KVMLU_REQ_* bits */
#define KVMLU_PORT_RESULT	0x514	/* out, 32 bit: KVMLU_RESULT_* */

#define KVMLU_REQ_VERIFY	(1u << 0)	/* check own memory pattern */

#define KVMLU_RESULT_VERIFY_OK		1
#define KVMLU_RESULT_VERIFY_FAILED	2

#define KVMLU_COM1_BASE		0x3f8

#endif /* KVMLU_PAYLOAD_ABI_H */
